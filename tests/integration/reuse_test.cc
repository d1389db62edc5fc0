// What a job takes from earlier results, end to end with real coordinator and
// worker processes and the real CLI: the times measured under the same
// checks, never a result checked otherwise, and never a failure, which the
// new job runs again (docs/spec.md, "Search").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "client/client.h"
#include "kernelspec/config.h"
#include "tests/test_util.h"

namespace tf::testing {
namespace {

namespace v1 = ::tunefleet::v1;
using std::chrono::seconds;

class ReuseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    coordinator_ = std::make_unique<CoordinatorProcess>(
        dir_.path(), std::vector<std::string>{"--db-sync", "normal"});
    coordinator_->Start();
    auto client = client::Client::Connect(coordinator_->address(), {});
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(*client);
  }

  void TearDown() override {
    if (HasFailure()) {
      std::cerr << "coordinator log:\n" << coordinator_->Log() << "\n";
      for (auto& w : workers_) std::cerr << "worker log:\n" << w->Log() << "\n";
    }
  }

  // A CPU worker; `environment` (NAME=VALUE) as env(1) takes it.
  void AddWorker(std::vector<std::string> environment = {}) {
    const std::string name = "worker" + std::to_string(workers_.size());
    std::vector<std::string> argv = {"/usr/bin/env"};
    argv.insert(argv.end(), environment.begin(), environment.end());
    argv.insert(argv.end(), {BinaryPath("bin/tunefleet-worker"), "--coordinator",
                             coordinator_->address(), "--devices", "cpu:1", "--cache",
                             dir_ / (name + "-cache"), "--lock-dir", dir_ / (name + "-locks")});
    workers_.push_back(Process::Start(argv, dir_ / (name + ".log")));
  }

  // `tunefleet submit SPEC --wait`: the job's id and what it printed.
  std::pair<int64_t, std::string> SubmitAndWait(const std::string& spec) {
    ProcessResult r =
        RunCli(coordinator_->address(),
               {"submit", SourcePath("tests/integration/data/" + spec), "--wait"}, 300);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    auto jobs = client_->ListJobs(1);
    EXPECT_TRUE(jobs.ok() && jobs->size() == 1);
    return {jobs.ok() && !jobs->empty() ? (*jobs)[0].job_id() : 0, r.output};
  }

  nlohmann::json CliJson(std::vector<std::string> args) {
    args.push_back("--json");
    ProcessResult r = RunCli(coordinator_->address(), std::move(args));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(r.output, nullptr, /*allow_exceptions=*/false);
  }

  // `tunefleet best approx --problem n=4096`: the V it serves.
  int64_t BestV() {
    nlohmann::json best = CliJson({"best", "approx", "--problem", "n=4096"});
    if (!best.is_object() || !best.contains("config")) return -1;
    return best["config"].value("V", int64_t{-1});
  }

  // Each configuration's result in the job by its first value, as text.
  std::map<std::string, v1::CandidateResult> ResultsByValue(int64_t job_id) {
    auto results = client_->ListResults(job_id);
    EXPECT_TRUE(results.ok()) << results.status().ToString();
    std::map<std::string, v1::CandidateResult> by_value;
    if (!results.ok()) return by_value;
    for (const auto& r : *results) {
      by_value[kernelspec::ValueText(r.config().settings(0).value())] = r;
    }
    return by_value;
  }

  TempDir dir_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::unique_ptr<client::Client> client_;
  std::vector<std::unique_ptr<Process>> workers_;
};

// The audit's repro: V=1 is fast and off by 1e-3. Checked at 1e-2 it is right
// and wins; the same kernel checked at 1e-6 must find it wrong, not reuse its
// time, and `best` must then serve the exact V=0.
TEST_F(ReuseTest, AStricterCheckReusesNothingCheckedLooselyAndBestServesWhatPassesIt) {
  AddWorker();
  auto [loose, loose_output] = SubmitAndWait("tolerance/approx_loose.yaml");
  EXPECT_NE(loose_output.find("0 from earlier results"), std::string::npos) << loose_output;
  auto first = ResultsByValue(loose);
  ASSERT_EQ(first.size(), 2u);
  ASSERT_EQ(first["0"].status(), v1::RESULT_STATUS_OK) << first["0"].error();
  ASSERT_EQ(first["1"].status(), v1::RESULT_STATUS_OK) << first["1"].error();
  ASSERT_EQ(BestV(), 1) << "the fast one wins under 1e-2";

  auto [strict, strict_output] = SubmitAndWait("tolerance/approx_strict.yaml");
  EXPECT_NE(strict_output.find("0 from earlier results"), std::string::npos) << strict_output;
  nlohmann::json status = CliJson({"status", std::to_string(strict)});
  ASSERT_TRUE(status.is_object());
  EXPECT_EQ(status["state"], "succeeded");
  EXPECT_EQ(status["candidates_cached"], 0);
  auto second = ResultsByValue(strict);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second["0"].status(), v1::RESULT_STATUS_OK) << second["0"].error();
  EXPECT_EQ(second["1"].status(), v1::RESULT_STATUS_WRONG_RESULT) << second["1"].error();
  EXPECT_NE(second["1"].worker(), "(reused)") << "checked by this job";
  ASSERT_EQ(status["best"].size(), 1u);
  EXPECT_EQ(status["best"][0]["config"]["V"], 0);
  EXPECT_EQ(BestV(), 0) << "the newer, stricter tuning answers";
}

// The reverse order: what the strict job found wrong is not a wrong result for
// a looser one, which measures it itself; a third job as loose reuses both
// times (the default: the same spec again reuses what it measured).
TEST_F(ReuseTest, ALooserCheckDoesNotTakeOnTheStricterOnesWrongResults) {
  AddWorker();
  auto [strict, strict_output] = SubmitAndWait("tolerance/approx_strict.yaml");
  ASSERT_EQ(ResultsByValue(strict)["1"].status(), v1::RESULT_STATUS_WRONG_RESULT);
  ASSERT_EQ(BestV(), 0);

  auto [loose, loose_output] = SubmitAndWait("tolerance/approx_loose.yaml");
  EXPECT_NE(loose_output.find("0 from earlier results"), std::string::npos) << loose_output;
  auto second = ResultsByValue(loose);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second["0"].status(), v1::RESULT_STATUS_OK) << second["0"].error();
  EXPECT_EQ(second["1"].status(), v1::RESULT_STATUS_OK) << second["1"].error();
  EXPECT_EQ(BestV(), 1);

  auto [again, again_output] = SubmitAndWait("tolerance/approx_loose.yaml");
  EXPECT_NE(again_output.find("2 from earlier results"), std::string::npos) << again_output;
  for (const auto& [v, r] : ResultsByValue(again)) {
    EXPECT_EQ(r.status(), v1::RESULT_STATUS_OK) << "V=" << v;
    EXPECT_EQ(r.worker(), "(reused)") << "V=" << v;
  }
}

// The audit's second repro: a worker started without g++ on its PATH fails
// every build; once it has one, the same spec builds and runs, and a third
// job reuses the times but builds the configuration that does not build
// again.
TEST_F(ReuseTest, BuildsThatFailedForWantOfACompilerAreBuiltAgainOnceThereIsOne) {
  AddWorker({"PATH=/nonexistent"});
  auto spec = LoadTestSpec("tests/integration/data/worker_build/scale.yaml");
  v1::Job first = SubmitSpec(*client_, spec);
  ASSERT_NE(first.job_id(), 0);
  v1::Job end = WaitForJobEnd(*client_, first.job_id(), seconds(300));
  ASSERT_EQ(end.state(), v1::JOB_STATE_FAILED);
  auto failed = ResultsByValue(first.job_id());
  ASSERT_EQ(failed.size(), 8u);
  for (const auto& [u, r] : failed) {
    EXPECT_EQ(r.status(), v1::RESULT_STATUS_COMPILE_FAILED) << "U=" << u;
    EXPECT_NE(r.error().find("cannot run 'g++ --version'"), std::string::npos) << r.error();
  }

  workers_.back()->Kill();
  AddWorker();  // with g++
  v1::Job second = SubmitSpec(*client_, spec);
  end = WaitForJobEnd(*client_, second.job_id(), seconds(300));
  ASSERT_EQ(end.state(), v1::JOB_STATE_SUCCEEDED) << end.error();
  EXPECT_EQ(end.candidates_cached(), 0);
  EXPECT_EQ(end.candidates_failed(), 1);
  for (const auto& [u, r] : ResultsByValue(second.job_id())) {
    if (u == "3") {
      EXPECT_EQ(r.status(), v1::RESULT_STATUS_COMPILE_FAILED);
      EXPECT_NE(r.error().find("U=3 does not build"), std::string::npos) << r.error();
    } else {
      EXPECT_EQ(r.status(), v1::RESULT_STATUS_OK) << "U=" << u << ": " << r.error();
    }
  }

  v1::Job third = SubmitSpec(*client_, spec);
  end = WaitForJobEnd(*client_, third.job_id(), seconds(300));
  ASSERT_EQ(end.state(), v1::JOB_STATE_SUCCEEDED) << end.error();
  EXPECT_EQ(end.candidates_cached(), 7);
  auto third_results = ResultsByValue(third.job_id());
  ASSERT_EQ(third_results.size(), 8u);
  EXPECT_NE(third_results["3"].worker(), "(reused)") << "a failure is built again";
  EXPECT_NE(third_results["3"].error().find("U=3 does not build"), std::string::npos);
}

}  // namespace
}  // namespace tf::testing
