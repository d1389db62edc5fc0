// web/metrics.h: what the observer hooks count, as a scrape shows it, with a
// real coordinator (empty) for the gauges.
#include <gtest/gtest.h>

#include <regex>
#include <thread>

#include "common/files.h"
#include "kernelspec/config.h"
#include "tests/test_util.h"
#include "web/metrics.h"

namespace tf::web {
namespace {

namespace v1 = ::tunefleet::v1;

// The value of the one sample whose line starts with `series`.
double Sample(const std::string& text, const std::string& series) {
  std::smatch match;
  std::regex line("(^|\n)" + std::regex_replace(series, std::regex(R"([{}"()\[\].+])"), R"(\$&)") +
                  R"( ([^\n]+))");
  if (!std::regex_search(text, match, line)) {
    ADD_FAILURE() << "no sample " << series << " in:\n" << text;
    return -1;
  }
  return std::stod(match[2]);
}

class MetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    coordinator::CoordinatorOptions options;
    options.db_path = dir_ / "tunefleet.db";
    options.artifact_dir = dir_ / "artifacts";
    options.db_synchronous_full = false;
    options.heartbeat_interval_ms = 100;  // silent after 300 ms without one
    options.observer = &metrics_;
    auto started = coordinator::Coordinator::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    coordinator_ = std::move(*started);
  }

  testing::TempDir dir_;
  Metrics metrics_;
  std::unique_ptr<coordinator::Coordinator> coordinator_;
};

TEST_F(MetricsTest, OverlappingLeasesOfADeviceCountItsBusyTimeOnce) {
  const std::string busy = R"(tunefleet_device_busy_seconds_total{device="0",worker="w1"})";
  int64_t before_first = NowUnixMs();
  metrics_.OnLeaseStarted(1, "w1", 0);
  int64_t after_first = NowUnixMs();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  metrics_.OnLeaseStarted(2, "w1", 0);  // a second lease on the same device
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  metrics_.OnLeaseEnded(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  int64_t before_last = NowUnixMs();
  metrics_.OnLeaseEnded(2);
  int64_t after_last = NowUnixMs();
  metrics_.OnLeaseEnded(3);  // never started (e.g. granted before a restart): ignored

  std::string text = metrics_.Scrape(*coordinator_);
  double seconds = Sample(text, busy);
  // The union of the two leases, not their sum (which is 200 ms more).
  EXPECT_GE(seconds * 1000, static_cast<double>(before_last - after_first) - 1);
  EXPECT_LE(seconds * 1000, static_cast<double>(after_last - before_first) + 1);
  // Idle since: the counter stays where it was.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_DOUBLE_EQ(Sample(metrics_.Scrape(*coordinator_), busy), seconds);
}

// An import is a job that ended since the start, its results committed.
TEST_F(MetricsTest, AnImportCountsItsResultsAsImportedAndItsJobAsSucceeded) {
  v1::ImportResultsRequest request;
  request.set_kernel("gemm");
  request.set_device_class("cpu/test");
  *request.mutable_problem() = *kernelspec::ParseProblem("M=64");
  for (int i = 0; i < 3; ++i) {
    v1::ImportedResult* r = request.add_results();
    *r->mutable_config() = *kernelspec::ParseConfigKey("X=" + std::to_string(i));
    r->set_status(i < 2 ? v1::RESULT_STATUS_OK : v1::RESULT_STATUS_RUNTIME_FAILED);
    r->mutable_timing()->set_median_ns(100 + i);
  }
  ASSERT_TRUE(coordinator_->ImportResults(request).ok());
  std::string text = metrics_.Scrape(*coordinator_);
  EXPECT_EQ(Sample(text, R"(tunefleet_results_recorded_total{origin="imported",status="ok"})"), 2);
  EXPECT_EQ(
      Sample(text,
             R"(tunefleet_results_recorded_total{origin="imported",status="runtime_failed"})"),
      1);
  EXPECT_EQ(Sample(text, R"(tunefleet_jobs{state="succeeded"})"), 1);
}

TEST_F(MetricsTest, CountsResultsBuildsLeasesAndRpcsWithTheirLabels) {
  db::ResultRow measured;
  measured.status = v1::RESULT_STATUS_OK;
  measured.worker = "w1";
  metrics_.OnResultRecorded(measured);
  metrics_.OnResultRecorded(measured);
  db::ResultRow failed;
  failed.status = v1::RESULT_STATUS_COMPILE_FAILED;
  metrics_.OnResultRecorded(failed);
  db::ResultRow reused = measured;
  reused.cached = true;
  metrics_.OnResultRecorded(reused);
  compiler::BuildStats stats;
  stats.configs = 20;
  stats.failed_configs = 4;
  stats.compiler_runs = 12;
  stats.wall_seconds = 3.5;
  metrics_.OnBuildFinished(stats, Metrics::BuildSite::kCoordinator);
  stats.configs = 6;
  stats.failed_configs = 1;
  stats.compiler_runs = 2;
  stats.wall_seconds = 1.5;
  metrics_.OnBuildFinished(stats, Metrics::BuildSite::kWorker);
  metrics_.OnLeaseAcquired(3);
  metrics_.OnLeaseAcquired(2000);
  metrics_.CountRpc("/tunefleet.v1.TuneFleet/SubmitJob", "OK");
  metrics_.CountRpc("/tunefleet.v1.TuneFleet/SubmitJob", "UNAUTHENTICATED");
  metrics_.CountRpc("/tunefleet.v1.TuneFleet/SubmitJob", "OK");

  std::string text = metrics_.Scrape(*coordinator_);
  EXPECT_EQ(Sample(text, R"(tunefleet_results_recorded_total{origin="worker",status="ok"})"), 2);
  EXPECT_EQ(
      Sample(text, R"(tunefleet_results_recorded_total{origin="build",status="compile_failed"})"),
      1);
  EXPECT_EQ(Sample(text, R"(tunefleet_results_recorded_total{origin="reused",status="ok"})"), 1);
  EXPECT_EQ(Sample(text, R"(tunefleet_build_duration_seconds_count{site="coordinator"})"), 1);
  EXPECT_EQ(Sample(text, R"(tunefleet_build_duration_seconds_sum{site="coordinator"})"), 3.5);
  EXPECT_EQ(Sample(text, R"(tunefleet_build_duration_seconds_bucket{site="coordinator",le="5"})"),
            1);
  EXPECT_EQ(Sample(text, R"(tunefleet_build_duration_seconds_bucket{site="coordinator",le="2"})"),
            0);
  EXPECT_EQ(Sample(text, R"(tunefleet_build_duration_seconds_bucket{site="worker",le="2"})"), 1);
  EXPECT_EQ(
      Sample(text, R"(tunefleet_build_configurations_total{outcome="built",site="coordinator"})"),
      16);
  EXPECT_EQ(
      Sample(text, R"(tunefleet_build_configurations_total{outcome="failed",site="coordinator"})"),
      4);
  EXPECT_EQ(Sample(text, R"(tunefleet_build_configurations_total{outcome="built",site="worker"})"),
            5);
  EXPECT_EQ(Sample(text, R"(tunefleet_compiler_runs_total{site="coordinator"})"), 12);
  EXPECT_EQ(Sample(text, R"(tunefleet_compiler_runs_total{site="worker"})"), 2);
  EXPECT_EQ(Sample(text, "tunefleet_lease_acquire_seconds_count"), 2);
  EXPECT_EQ(Sample(text, R"(tunefleet_lease_acquire_seconds_bucket{le="0.005"})"), 1);
  EXPECT_EQ(
      Sample(
          text,
          R"(tunefleet_grpc_server_handled_total{grpc_code="OK",grpc_method="SubmitJob",grpc_service="tunefleet.v1.TuneFleet"})"),
      2);
  EXPECT_EQ(
      Sample(
          text,
          R"(tunefleet_grpc_server_handled_total{grpc_code="UNAUTHENTICATED",grpc_method="SubmitJob",grpc_service="tunefleet.v1.TuneFleet"})"),
      1);
  // Gauges of the (empty) coordinator: every job state, at 0.
  for (const char* state : {"queued", "running", "succeeded", "failed", "cancelled"}) {
    EXPECT_EQ(Sample(text, std::string("tunefleet_jobs{state=\"") + state + "\"}"), 0) << state;
  }
  EXPECT_EQ(Sample(text, R"(tunefleet_workers{state="alive"})"), 0);
  EXPECT_EQ(Sample(text, "tunefleet_leases_active"), 0);
}

// Alerts on `tunefleet_devices == 0` need a sample to compare.
TEST_F(MetricsTest, DevicesReadZeroWhereNoneIsAlive) {
  std::string text = metrics_.Scrape(*coordinator_);
  EXPECT_EQ(Sample(text, "tunefleet_devices"), 0);  // no worker yet, no class

  v1::RegisterRequest request;
  request.set_hostname("h1");
  for (int i = 0; i < 2; ++i) {
    v1::DeviceInfo* device = request.add_devices();
    device->set_index(i);
    device->set_device_class("cpu/test");
  }
  ASSERT_TRUE(coordinator_->Register(request).ok());
  text = metrics_.Scrape(*coordinator_);
  EXPECT_EQ(Sample(text, R"(tunefleet_devices{device_class="cpu/test"})"), 2);
  EXPECT_EQ(text.find("\ntunefleet_devices "), std::string::npos) << "a sample without a class";

  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // no heartbeat
  text = metrics_.Scrape(*coordinator_);
  EXPECT_EQ(Sample(text, R"(tunefleet_workers{state="silent"})"), 1);
  EXPECT_EQ(Sample(text, R"(tunefleet_devices{device_class="cpu/test"})"), 0);
}

}  // namespace
}  // namespace tf::web
