#include <gtest/gtest.h>

#include "client/job_state.h"
#include "client/json_format.h"
#include "kernelspec/config.h"

namespace tf::client {
namespace {

v1::Config Config(const std::string& key) { return *kernelspec::ParseConfigKey(key); }
v1::Problem Problem(const std::string& text) { return *kernelspec::ParseProblem(text); }

TEST(JobStateNameTest, EveryStateHasItsLowercaseName) {
  EXPECT_STREQ(JobStateName(v1::JOB_STATE_QUEUED), "queued");
  EXPECT_STREQ(JobStateName(v1::JOB_STATE_RUNNING), "running");
  EXPECT_STREQ(JobStateName(v1::JOB_STATE_SUCCEEDED), "succeeded");
  EXPECT_STREQ(JobStateName(v1::JOB_STATE_FAILED), "failed");
  EXPECT_STREQ(JobStateName(v1::JOB_STATE_CANCELLED), "cancelled");
  EXPECT_STREQ(JobStateName(v1::JOB_STATE_UNSPECIFIED), "unknown");
}

TEST(JobStateNameTest, OnlyEndedStatesAreTerminal) {
  EXPECT_FALSE(IsTerminal(v1::JOB_STATE_QUEUED));
  EXPECT_FALSE(IsTerminal(v1::JOB_STATE_RUNNING));
  EXPECT_TRUE(IsTerminal(v1::JOB_STATE_SUCCEEDED));
  EXPECT_TRUE(IsTerminal(v1::JOB_STATE_FAILED));
  EXPECT_TRUE(IsTerminal(v1::JOB_STATE_CANCELLED));
}

TEST(ConfigJsonTest, IntsAreNumbersStringsStayStringsInSpecOrder) {
  Json json = ConfigJson(Config("BN=128,BM=64,DT=half"));
  ASSERT_TRUE(json.is_object());
  EXPECT_TRUE(json["BM"].is_number_integer());
  EXPECT_EQ(json["BM"], 64);
  EXPECT_EQ(json["BN"], 128);
  EXPECT_EQ(json["DT"], "half");
  EXPECT_EQ(json.begin().key(), "BN");
}

TEST(BestJsonTest, HasTheKeysScriptsUse) {
  v1::QueryBestResponse best;
  best.set_found(true);
  best.set_exact(false);
  best.set_kernel("gemm_f16");
  *best.mutable_problem() = Problem("M=4096,N=4096,K=4096");
  best.set_device_class("NVIDIA H200");
  *best.mutable_config() = Config("BM=128,BN=256,STAGES=4");
  best.mutable_timing()->set_median_ns(812345.5);
  best.mutable_timing()->set_p10_ns(800000);
  best.mutable_timing()->set_p90_ns(830000);
  best.mutable_timing()->set_gflops(169000.25);
  best.set_fingerprint("ab12");
  best.set_job_id(7);

  Json json = BestJson(best);
  EXPECT_EQ(json["kernel"], "gemm_f16");
  EXPECT_EQ(json["problem"], Json::parse(R"({"M": 4096, "N": 4096, "K": 4096})"));
  EXPECT_TRUE(json["problem"]["M"].is_number_integer());
  EXPECT_EQ(json["device_class"], "NVIDIA H200");
  EXPECT_EQ(json["config"], Json::parse(R"({"BM": 128, "BN": 256, "STAGES": 4})"));
  EXPECT_EQ(json["median_ns"], 812345.5);
  EXPECT_EQ(json["p10_ns"], 800000.0);
  EXPECT_EQ(json["p90_ns"], 830000.0);
  EXPECT_EQ(json["gflops"], 169000.25);
  EXPECT_EQ(json["exact"], false);
  EXPECT_EQ(json["job_id"], 7);
  EXPECT_EQ(json["fingerprint"], "ab12");
}

TEST(JobJsonTest, HasStateProgressAndBestPerProblem) {
  v1::Job job;
  job.set_job_id(12);
  job.set_kernel("gemm_f16");
  job.set_state(v1::JOB_STATE_RUNNING);
  job.set_device_class("cpu/x/4c");
  job.set_candidates_total(480);
  job.set_candidates_done(120);
  job.set_candidates_failed(3);
  v1::BestEntry* entry = job.add_best();
  *entry->mutable_problem() = Problem("M=64,N=64");
  *entry->mutable_config() = Config("BM=16");
  entry->mutable_timing()->set_median_ns(1000);
  entry->set_candidate_id(99);

  Json json = JobJson(job);
  EXPECT_EQ(json["job_id"], 12);
  EXPECT_EQ(json["state"], "running");
  EXPECT_EQ(json["kernel"], "gemm_f16");
  EXPECT_EQ(json["device_class"], "cpu/x/4c");
  EXPECT_TRUE(json["candidates_total"].is_number_integer());
  EXPECT_EQ(json["candidates_total"], 480);
  EXPECT_EQ(json["candidates_done"], 120);
  EXPECT_EQ(json["candidates_failed"], 3);
  ASSERT_EQ(json["best"].size(), 1u);
  EXPECT_EQ(json["best"][0]["problem"]["M"], 64);
  EXPECT_EQ(json["best"][0]["config"]["BM"], 16);
  EXPECT_EQ(json["best"][0]["median_ns"], 1000.0);
  EXPECT_EQ(json["best"][0]["candidate_id"], 99);
}

TEST(ResultJsonTest, StatusIsAWordAndErrorIsKept) {
  v1::CandidateResult result;
  result.set_status(v1::RESULT_STATUS_WRONG_RESULT);
  result.set_error("max abs error 3.5 > atol 0.01");
  *result.mutable_config() = Config("BM=32");
  Json json = ResultJson(result);
  EXPECT_EQ(json["status"], "wrong_result");
  EXPECT_EQ(json["error"], "max abs error 3.5 > atol 0.01");
  EXPECT_EQ(json["config"]["BM"], 32);
  EXPECT_EQ(json["performance_warnings"], Json::array());
}

TEST(ResultJsonTest, ListsTheCompilersPerformanceWarnings) {
  v1::CandidateResult result;
  result.set_status(v1::RESULT_STATUS_OK);
  result.mutable_resources()->add_performance_warnings(
      "C7512: wgmma.mma_async instructions are serialized due to insufficient register "
      "resources");
  Json json = ResultJson(result);
  ASSERT_EQ(json["performance_warnings"].size(), 1u);
  EXPECT_EQ(json["performance_warnings"][0],
            "C7512: wgmma.mma_async instructions are serialized due to insufficient register "
            "resources");
}

TEST(WorkerJsonTest, ListsDevicesWithProperties) {
  v1::WorkerInfo worker;
  worker.set_worker_id("w1");
  worker.set_alive(true);
  worker.set_active_leases(2);
  v1::DeviceInfo* device = worker.add_devices();
  device->set_device_class("cpu/x/4c");
  (*device->mutable_properties())["cores"] = 4;
  Json json = WorkerJson(worker);
  EXPECT_EQ(json["worker_id"], "w1");
  EXPECT_EQ(json["alive"], true);
  EXPECT_EQ(json["active_leases"], 2);
  ASSERT_EQ(json["devices"].size(), 1u);
  EXPECT_EQ(json["devices"][0]["device_class"], "cpu/x/4c");
  EXPECT_EQ(json["devices"][0]["properties"]["cores"], 4);
}

}  // namespace
}  // namespace tf::client
