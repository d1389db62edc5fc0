// Compilation on the worker host, end to end with real processes: the
// coordinator ships sources and batches, the worker compiles each batch once
// for its own device, isolates configurations that fail, and runs the rest.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <regex>

#include "client/client.h"
#include "db/sqlite.h"
#include "kernelspec/config.h"
#include "tests/test_util.h"

namespace tf::testing {
namespace {

namespace v1 = ::tunefleet::v1;
using std::chrono::seconds;

int Count(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  return static_cast<int>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

class WorkerBuildTest : public ::testing::Test {
 protected:
  // A coordinator with 4 configurations per batch; `environment` as env(1)
  // takes it. The worker's --cache relative to the current folder when
  // `relative_cache`.
  void Start(std::vector<std::string> environment = {}, bool relative_cache = false) {
    coordinator_ = std::make_unique<CoordinatorProcess>(
        dir_.path(),
        std::vector<std::string>{"--batch-size", "4", "--db-sync", "normal", "--http",
                                 "127.0.0.1:0", "--http-port-file", dir_ / "http.port"});
    coordinator_->set_environment(std::move(environment));
    coordinator_->Start();
    // Two candidates per lease: each batch of four is leased twice.
    const std::string worker_dir =
        relative_cache ? std::filesystem::relative(dir_.path()).string() : dir_.path();
    worker_ = StartWorker(coordinator_->address(), worker_dir, "worker", "cpu:1",
                          {"--max-candidates", "2"});
    auto client = client::Client::Connect(coordinator_->address(), {});
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(*client);
  }

  void TearDown() override {
    if (HasFailure() && coordinator_) {
      std::cerr << "coordinator log:\n"
                << coordinator_->Log() << "\nworker log:\n"
                << (worker_ ? worker_->Log() : "") << "\n";
    }
  }

  // The coordinator's /metrics exposition (no token: tests run anonymous).
  std::string Metrics() {
    httplib::Client http("127.0.0.1", std::stoi(ReadPortFile(dir_ / "http.port")));
    auto answer = http.Get("/metrics");
    EXPECT_TRUE(answer && answer->status == 200);
    return answer ? answer->body : "";
  }

  int64_t BuildsOnTheCoordinator() {
    auto db = db::Database::Open(coordinator_->db_path(), false);
    EXPECT_TRUE(db.ok());
    auto stmt = (*db)->Prepare("SELECT COUNT(*) FROM builds");
    EXPECT_TRUE(*stmt->Step());
    return stmt->Int(0);
  }

  TempDir dir_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::unique_ptr<Process> worker_;
  std::unique_ptr<client::Client> client_;
};

TEST_F(WorkerBuildTest, ACoordinatorWithoutACompilerHasItsWorkersCompile) {
  Start({"PATH=/nonexistent"});  // no g++ in reach of the coordinator
  auto spec = LoadTestSpec("tests/integration/data/slow/slow.yaml", [](v1::KernelSpec& s) {
    s.mutable_params(0)->mutable_range()->set_stop(8);  // MS = 1..8
  });
  v1::Job job = SubmitSpec(*client_, spec);
  ASSERT_NE(job.job_id(), 0);
  v1::Job end = WaitForJobEnd(*client_, job.job_id(), seconds(300));
  ASSERT_EQ(end.state(), v1::JOB_STATE_SUCCEEDED) << end.error();
  EXPECT_EQ(end.candidates_failed(), 0);
  ExpectExactlyOneResultPerCandidate(coordinator_->db_path(), job.job_id());
  auto results = client_->ListResults(job.job_id());
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 8u);
  for (const auto& r : *results) EXPECT_EQ(r.status(), v1::RESULT_STATUS_OK) << r.error();

  EXPECT_NE(coordinator_->Log().find("its workers compile it"), std::string::npos);
  EXPECT_EQ(BuildsOnTheCoordinator(), 0);
  // Two batches, four leases: each batch compiled once, found built by its
  // second lease; then the retime lease of the four fastest finds their
  // batch (MS = 1..4, or both batches) built too.
  const std::string log = worker_->Log();
  EXPECT_EQ(Count(log, "bundle [0-9a-f]+ for host: compiled 4 configurations"), 2) << log;
  EXPECT_EQ(Count(log, "retime lease [0-9]+ of job [0-9]+: 4 candidates"), 1) << log;
  const int found_built = Count(log, "bundle [0-9a-f]+ for host: already built");
  EXPECT_GE(found_built, 3) << log;
  EXPECT_LE(found_built, 4) << log;
  // The workers' builds count in the build metrics, with their lease's end.
  const std::string metrics = Metrics();
  for (const char* sample :
       {"tunefleet_build_duration_seconds_count{site=\"worker\"} 2\n",
        "tunefleet_build_configurations_total{outcome=\"built\",site=\"worker\"} 8\n",
        "tunefleet_build_configurations_total{outcome=\"failed\",site=\"worker\"} 0\n",
        "tunefleet_build_duration_seconds_count{site=\"coordinator\"} 0\n"}) {
    EXPECT_NE(metrics.find(sample), std::string::npos) << sample << metrics;
  }
}

// With a relative --cache, as the README's worker has: every compile failed
// in the sandbox, which works in a folder of its own ("chdir ...: No such
// file or directory"), blamed on the kernel.
TEST_F(WorkerBuildTest, ForcedWorkerBuildIsolatesTheConfigurationThatFails) {
  Start({}, /*relative_cache=*/true);
  v1::Job job =
      SubmitSpec(*client_, LoadTestSpec("tests/integration/data/worker_build/scale.yaml"));
  ASSERT_NE(job.job_id(), 0);
  v1::Job end = WaitForJobEnd(*client_, job.job_id(), seconds(300));
  ASSERT_EQ(end.state(), v1::JOB_STATE_SUCCEEDED) << end.error();
  ExpectExactlyOneResultPerCandidate(coordinator_->db_path(), job.job_id());
  EXPECT_EQ(BuildsOnTheCoordinator(), 0) << "compile_on: worker, yet the coordinator built";
  auto results = client_->ListResults(job.job_id());
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 8u);
  for (const auto& r : *results) {
    const std::string u = kernelspec::ValueText(r.config().settings(0).value());
    if (u == "3") {
      EXPECT_EQ(r.status(), v1::RESULT_STATUS_COMPILE_FAILED);
      EXPECT_NE(r.error().find("U=3 does not build"), std::string::npos) << r.error();
    } else {
      EXPECT_EQ(r.status(), v1::RESULT_STATUS_OK) << "U=" << u << ": " << r.error();
    }
  }
}

// A strategy that proposes a configuration for one problem after it was
// packed for another: that candidate waited for a build that was never sent
// again, and the job stayed running for ever.
TEST_F(WorkerBuildTest, AConfigurationProposedAgainForAnotherProblemRunsFromItsBundle) {
  Start();
  auto spec = LoadTestSpec("tests/integration/data/worker_build/scale.yaml", [](v1::KernelSpec& s) {
    auto* var = s.add_problems()->add_vars();
    var->set_name("n");
    var->set_value(8192);
    s.mutable_search()->set_strategy("bayes");
    s.mutable_search()->set_max_candidates(6);
  });
  v1::Job job = SubmitSpec(*client_, spec);
  ASSERT_NE(job.job_id(), 0);
  v1::Job end = WaitForJobEnd(*client_, job.job_id(), seconds(120));
  ASSERT_EQ(end.state(), v1::JOB_STATE_SUCCEEDED) << end.error();
  ExpectExactlyOneResultPerCandidate(coordinator_->db_path(), job.job_id());
  EXPECT_EQ(end.candidates_done(), end.candidates_total());
}

TEST_F(WorkerBuildTest, AWorkerWhoseCompilerChangedMeasuresAgainWhatTheOldOneBuilt) {
  // The worker's "g++" becomes clang++: first on its PATH, a link named g++.
  std::string clang;
  for (const char* path : {"/usr/lib/llvm-19/bin/clang++", "/usr/lib/llvm-14/bin/clang++"}) {
    if (access(path, X_OK) == 0) clang = path;
  }
  if (clang.empty()) GTEST_SKIP() << "no clang++ of LLVM 14 or 19 to stand in for another g++";
  const std::string links = dir_.path() + "/other-compiler";
  std::filesystem::create_directories(links);
  std::filesystem::create_symlink(clang, links + "/g++");
  const std::vector<std::string> other_compiler = {"PATH=" + links + ":" + getenv("PATH")};

  Start({"PATH=/nonexistent"});  // the workers compile
  auto spec = LoadTestSpec("tests/integration/data/slow/slow.yaml", [](v1::KernelSpec& s) {
    s.mutable_params(0)->mutable_range()->set_stop(4);
  });
  auto run = [&] {
    v1::Job job = SubmitSpec(*client_, spec);
    v1::Job end = WaitForJobEnd(*client_, job.job_id(), seconds(300));
    EXPECT_EQ(end.state(), v1::JOB_STATE_SUCCEEDED) << end.error();
    EXPECT_EQ(end.candidates_failed(), 0);
    return end;
  };
  // The next job binds to the worker that asks for it, never to the killed
  // one, which the coordinator counts live for 3 heartbeats yet.
  auto replace_worker = [&](const std::string& name, std::vector<std::string> environment) {
    worker_->Kill();
    worker_ = StartWorker(coordinator_->address(), dir_.path(), name, "cpu:1",
                          {"--max-candidates", "2"}, std::move(environment));
  };

  const v1::Job gcc = run();
  EXPECT_EQ(gcc.candidates_cached(), 0);

  replace_worker("clang-worker", other_compiler);
  const v1::Job upgraded = run();
  EXPECT_EQ(upgraded.candidates_cached(), 0) << "times measured with g++ served a clang build";
  EXPECT_NE(upgraded.fingerprint(), gcc.fingerprint());
  EXPECT_NE(worker_->Log().find("builds cpp with Debian clang version"), std::string::npos)
      << worker_->Log();
  const std::string status =
      RunCli(coordinator_->address(), {"status", std::to_string(upgraded.job_id())}).output;
  EXPECT_NE(status.find("compiled on the workers with Debian clang version"), std::string::npos)
      << status;

  replace_worker("gcc-worker", {});
  const v1::Job again = run();
  EXPECT_EQ(again.candidates_cached(), 4) << "g++'s own times were not reused";
  EXPECT_EQ(again.fingerprint(), gcc.fingerprint());
}

}  // namespace
}  // namespace tf::testing
