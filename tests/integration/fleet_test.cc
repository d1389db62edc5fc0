// The service end to end: real coordinator and worker processes on
// 127.0.0.1, the real CLI, and each test on both databases: a real SQLite
// file and a real PostgreSQL server of its own.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "auth/token_file.h"
#include "client/client.h"
#include "common/files.h"
#include "db/database.h"
#include "kernelspec/config.h"
#include "runner/alternation.h"
#include "tests/test_util.h"

namespace tf::testing {
namespace {

namespace v1 = ::tunefleet::v1;
using std::chrono::seconds;

nlohmann::json Json(const ProcessResult& r) {
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return nlohmann::json::parse(r.output, nullptr, /*allow_exceptions=*/false);
}

// The fleet as an operator runs it: tokens required, the workers with a
// worker token, jobs submitted and followed with a submitter token, both
// created with the coordinator's admin token.
class FleetTest : public ::testing::TestWithParam<DbKind> {
 protected:
  void SetUp() override {
    coordinator_ = std::make_unique<CoordinatorProcess>(
        dir_.path(),
        std::vector<std::string>{"--lease-ttl-ms", "1500", "--heartbeat-ms", "300", "--db-sync",
                                 "normal", "--admin-token-file", dir_ / "admin.token"},
        database_.location());
    coordinator_->Start();
    client::ClientOptions options;
    options.token = *auth::ReadTokenFile(dir_ / "admin.token");
    auto admin = client::Client::Connect(coordinator_->address(), options);
    ASSERT_TRUE(admin.ok());
    for (auto [role, file] : {std::pair{v1::ROLE_WORKER, "worker.token"},
                              std::pair{v1::ROLE_SUBMITTER, "submitter.token"}}) {
      auto created = (*admin)->CreateToken(file, role);
      ASSERT_TRUE(created.ok()) << created.status().ToString();
      ASSERT_TRUE(auth::WriteTokenFile(dir_ / file, created->token()).ok());
    }
    options.token = *auth::ReadTokenFile(dir_ / "submitter.token");
    auto client = client::Client::Connect(coordinator_->address(), options);
    ASSERT_TRUE(client.ok());
    client_ = std::move(*client);
  }

  // The command line, as the submitter.
  ProcessResult Cli(std::vector<std::string> args, double timeout_s = 120) {
    args.insert(args.begin(), {"--token-file", dir_ / "submitter.token"});
    return RunCli(coordinator_->address(), std::move(args), timeout_s);
  }

  void TearDown() override {
    if (HasFailure()) {
      std::cerr << "coordinator log:\n" << coordinator_->Log() << "\n";
      for (auto& w : workers_) std::cerr << "worker log:\n" << w->Log() << "\n";
    }
  }

  Process& AddWorker(const std::string& devices, std::vector<std::string> extra = {}) {
    std::string name = "worker" + std::to_string(workers_.size());
    extra.insert(extra.end(), {"--token-file", dir_ / "worker.token"});
    workers_.push_back(StartWorker(coordinator_->address(), dir_.path(), name, devices, extra));
    return *workers_.back();
  }

  v1::Job Submit(const std::string& spec_path) {
    return SubmitSpec(*client_, LoadTestSpec(spec_path));
  }

  v1::Job WaitForEnd(int64_t job_id, seconds timeout) {
    return WaitForJobEnd(*client_, job_id, timeout);
  }

  void ExpectExactlyOneResultPerCandidate(int64_t job_id) {
    testing::ExpectExactlyOneResultPerCandidate(coordinator_->db_path(), job_id);
  }

  TempDir dir_;
  TestDatabase database_{GetParam(), dir_.path()};
  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::unique_ptr<client::Client> client_;
  std::vector<std::unique_ptr<Process>> workers_;
};

TEST_P(FleetTest, ExampleGemmJobCompletesAndBestReturnsItsWinner) {
  AddWorker("cpu:2");
  auto submitted = Cli({"submit", SourcePath("examples/cpu/gemm/gemm.yaml"), "--wait"}, 900);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output;

  auto jobs = client_->ListJobs(10);
  ASSERT_TRUE(jobs.ok() && jobs->size() == 1);
  int64_t job_id = (*jobs)[0].job_id();
  auto status = Json(Cli({"status", std::to_string(job_id), "--json"}));
  EXPECT_EQ(status["state"], "succeeded");
  EXPECT_GT(status["candidates_total"].get<int64_t>(), 100);
  EXPECT_EQ(status["candidates_done"], status["candidates_total"]);
  ExpectExactlyOneResultPerCandidate(job_id);

  // The winner of the first problem, as the results list ranks it.
  auto results = client_->ListResults(job_id);
  ASSERT_TRUE(results.ok());
  const v1::Problem& problem = (*jobs)[0].best(0).problem();
  const v1::CandidateResult* winner = nullptr;
  for (const auto& r : *results) {
    if (!winner && r.status() == v1::RESULT_STATUS_OK &&
        kernelspec::ProblemKey(r.problem()) == kernelspec::ProblemKey(problem)) {
      winner = &r;
    }
  }
  ASSERT_NE(winner, nullptr);
  auto best =
      Json(Cli({"best", "gemm_f32_cpu", "--problem", kernelspec::ProblemText(problem), "--json"}));
  EXPECT_EQ(best["kernel"], "gemm_f32_cpu");
  EXPECT_EQ(best["exact"], true);
  // The winner of its finalists' re-timing, with that re-timing's figure.
  EXPECT_TRUE(winner->retime_winner());
  EXPECT_EQ(best["confirmed_by_retiming"], true);
  EXPECT_DOUBLE_EQ(best["median_ns"].get<double>(), winner->retiming().median_ns());
  for (const auto& s : winner->config().settings()) {
    EXPECT_EQ(best["config"][s.name()].dump(), kernelspec::ValueText(s.value())) << s.name();
  }

  // A shape never tuned gets the nearest tuned one, marked inexact.
  v1::Problem other = problem;
  other.mutable_vars(0)->set_value(other.vars(0).value() + 1);
  auto nearest =
      Json(Cli({"best", "gemm_f32_cpu", "--problem", kernelspec::ProblemText(other), "--json"}));
  EXPECT_EQ(nearest["exact"], false);

  // One runner per device, each taking the next lease as it frees up: both
  // devices of the worker ran a fair share of the job's leases.
  auto db = db::Database::Open(coordinator_->db_path(), false);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto per_device = (*db)->Prepare(
      "SELECT device_index, COUNT(*) FROM leases WHERE job_id = ? GROUP BY device_index");
  ASSERT_TRUE(per_device.ok()) << per_device.status().ToString();
  per_device->Bind(1, job_id);
  std::map<int64_t, int64_t> leases;
  int64_t total = 0;
  for (auto row = per_device->Step(); row.ok() && *row; row = per_device->Step()) {
    total += leases[per_device->Int(0)] = per_device->Int(1);
  }
  ASSERT_EQ(leases.size(), 2u) << "leases went to one device only";
  for (const auto& [device, count] : leases) {
    EXPECT_GE(4 * count, total) << "device " << device << " took " << count << " of " << total;
  }
}

TEST_P(FleetTest, FinalistsAreTimedAgainInAlternationAndTheFastestOfThatWins) {
  AddWorker("cpu:1");
  // MS = 1..6 ms of spinning, on two problems.
  auto spec = LoadTestSpec("tests/integration/data/slow/slow.yaml", [](v1::KernelSpec& s) {
    s.mutable_params(0)->mutable_range()->set_stop(6);
    v1::ProblemVar* n = s.add_problems()->add_vars();
    n->set_name("n");
    n->set_value(2048);
  });
  ASSERT_EQ(spec.spec.search().finalists(), 4) << "the default";
  v1::Job job = SubmitSpec(*client_, spec);
  ASSERT_GT(job.job_id(), 0);
  // Still running while the finalists are timed again, after the search.
  int updates_retiming = 0;
  auto end = client_->WatchJob(job.job_id(), [&](const v1::Job& update) {
    if (update.problems_retiming() == 0) return;
    ++updates_retiming;
    EXPECT_EQ(update.state(), v1::JOB_STATE_RUNNING);
    EXPECT_EQ(update.candidates_done(), update.candidates_total());
  });
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  ASSERT_EQ(end->state(), v1::JOB_STATE_SUCCEEDED) << end->DebugString();
  EXPECT_GT(updates_retiming, 0);
  EXPECT_EQ(end->problems_retiming(), 0);
  EXPECT_NE(coordinator_->Log().find("re-timing the finalists of 2 problems"), std::string::npos);
  ExpectExactlyOneResultPerCandidate(job.job_id());

  auto results = client_->ListResults(job.job_id());
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(end->best_size(), 2);
  for (const v1::BestEntry& best : end->best()) {
    const std::string problem = kernelspec::ProblemText(best.problem());
    std::vector<const v1::CandidateResult*> finalists;
    const v1::CandidateResult* winner = nullptr;
    double slowest_finalist_ns = 0, fastest_other_ns = 1e300;  // as the search timed them
    for (const auto& r : *results) {
      if (kernelspec::ProblemText(r.problem()) != problem) continue;
      if (r.retiming().repeats() == 0) {
        if (r.status() == v1::RESULT_STATUS_OK) {
          fastest_other_ns = std::min(fastest_other_ns, r.timing().median_ns());
        }
        continue;
      }
      slowest_finalist_ns = std::max(slowest_finalist_ns, r.timing().median_ns());
      finalists.push_back(&r);
      EXPECT_EQ(r.retiming().repeats(), runner::kAlternationRounds) << problem;
      if (r.retime_winner()) {
        EXPECT_EQ(winner, nullptr) << problem << ": two winners";
        winner = &r;
      }
    }
    // The search's four fastest, each re-timed (each sample spins for its MS
    // milliseconds at least); the winner the fastest of that re-timing.
    ASSERT_EQ(finalists.size(), 4u) << problem;
    EXPECT_LE(slowest_finalist_ns, fastest_other_ns) << problem;
    ASSERT_NE(winner, nullptr) << problem;
    for (const v1::CandidateResult* f : finalists) {
      EXPECT_GE(f->retiming().median_ns(), winner->retiming().median_ns()) << problem;
      EXPECT_GE(f->retiming().median_ns(), 1e6 * f->config().settings(0).value().int_value())
          << problem << " " << kernelspec::ConfigKey(f->config());
    }
    // The job's best and the kernel's best are that winner, with its re-timing.
    EXPECT_EQ(best.candidate_id(), winner->candidate_id()) << problem;
    EXPECT_TRUE(best.confirmed_by_retiming()) << problem;
    EXPECT_DOUBLE_EQ(best.timing().median_ns(), winner->retiming().median_ns()) << problem;
    auto query = Json(Cli({"best", "spin", "--problem", problem, "--json"}));
    EXPECT_EQ(query["confirmed_by_retiming"], true) << problem;
    EXPECT_DOUBLE_EQ(query["median_ns"].get<double>(), winner->retiming().median_ns()) << problem;
  }
  // Both say so to a person too.
  auto listed = Cli({"results", std::to_string(job.job_id())});
  EXPECT_NE(listed.output.find(" winner"), std::string::npos) << listed.output;
  auto status = Cli({"status", std::to_string(job.job_id())});
  EXPECT_NE(status.output.find("re-timed"), std::string::npos) << status.output;
}

TEST_P(FleetTest, CrashingHangingAndWrongCandidatesAreRecordedAndTheJobCompletes) {
  AddWorker("cpu:1");
  v1::Job job = Submit("examples/cpu/faulty/faulty.yaml");
  ASSERT_GT(job.job_id(), 0);
  v1::Job done = WaitForEnd(job.job_id(), seconds(180));
  ASSERT_EQ(done.state(), v1::JOB_STATE_SUCCEEDED) << done.DebugString();
  auto results = client_->ListResults(job.job_id());
  ASSERT_TRUE(results.ok());
  std::map<v1::ResultStatus, std::vector<std::string>> errors;
  for (const auto& r : *results) errors[r.status()].push_back(r.error());
  ASSERT_EQ(errors[v1::RESULT_STATUS_RUNTIME_FAILED].size(), 1u);
  EXPECT_NE(errors[v1::RESULT_STATUS_RUNTIME_FAILED][0].find("SIGSEGV"), std::string::npos)
      << errors[v1::RESULT_STATUS_RUNTIME_FAILED][0];
  ASSERT_EQ(errors[v1::RESULT_STATUS_TIMEOUT].size(), 1u);
  EXPECT_NE(errors[v1::RESULT_STATUS_TIMEOUT][0].find("timed out"), std::string::npos);
  EXPECT_EQ(errors[v1::RESULT_STATUS_WRONG_RESULT].size(), 1u);
  EXPECT_GE(errors[v1::RESULT_STATUS_OK].size(), 2u);
  EXPECT_EQ(done.candidates_failed(), 3);
  ExpectExactlyOneResultPerCandidate(job.job_id());
}

TEST_P(FleetTest, WorkerKilledMidLeaseHasItsCandidatesFinishedByAnother) {
  Process& doomed = AddWorker("cpu:1");
  v1::Job job = Submit("tests/integration/data/slow/slow.yaml");
  ASSERT_GT(job.job_id(), 0);
  // Strike once the worker holds a lease and has reported part of the job.
  ASSERT_TRUE(WaitFor(
      [&] {
        auto workers = client_->ListWorkers();
        auto now = client_->GetJob(job.job_id());
        return workers.ok() && now.ok() && !workers->empty() && (*workers)[0].active_leases() > 0 &&
               now->candidates_done() >= 2;
      },
      seconds(120)));
  doomed.Kill();
  auto before = client_->GetJob(job.job_id());
  ASSERT_TRUE(before.ok());
  EXPECT_LT(before->candidates_done(), before->candidates_total());
  AddWorker("cpu:1");
  v1::Job done = WaitForEnd(job.job_id(), seconds(180));
  EXPECT_EQ(done.state(), v1::JOB_STATE_SUCCEEDED) << done.DebugString();
  EXPECT_EQ(done.candidates_done(), done.candidates_total());
  EXPECT_EQ(done.candidates_failed(), 0);
  ExpectExactlyOneResultPerCandidate(job.job_id());
}

// A device whose runner cannot start (here its work directory's name is
// taken by a file) took a lease, handed it back and took the next as fast
// as the coordinator answered, hundreds a second; it now waits longer each
// time, and a healthy device finishes the job.
TEST_P(FleetTest, ADeviceWhoseRunnerCannotStartWaitsBetweenLeasesAndAnotherFinishesTheJob) {
  std::filesystem::create_directories(dir_ / "worker0-cache/runners");
  ASSERT_TRUE(WriteFileAtomic(dir_ / "worker0-cache/runners/device-0", "").ok());
  Process& broken = AddWorker("cpu:1");
  v1::Job job = Submit("tests/integration/data/slow/slow.yaml");
  ASSERT_GT(job.job_id(), 0);
  auto failures = [&] {
    const std::string log = broken.Log();
    int count = 0;
    for (size_t at = log.find("cannot run lease"); at != std::string::npos;
         at = log.find("cannot run lease", at + 1)) {
      ++count;
    }
    return count;
  };
  ASSERT_TRUE(WaitFor([&] { return failures() > 0; }, seconds(60))) << broken.Log();
  EXPECT_NE(broken.Log().find("Not a directory"), std::string::npos) << broken.Log();
  std::this_thread::sleep_for(seconds(5));
  EXPECT_LE(failures(), 4) << "waits of 1, 2 and 4 s between tries";
  AddWorker("cpu:1");
  v1::Job done = WaitForEnd(job.job_id(), seconds(180));
  EXPECT_EQ(done.state(), v1::JOB_STATE_SUCCEEDED) << done.DebugString();
  EXPECT_EQ(done.candidates_failed(), 0);
  ExpectExactlyOneResultPerCandidate(job.job_id());
}

TEST_P(FleetTest, CoordinatorKilledMidJobResumesOnItsDatabase) {
  AddWorker("cpu:1");
  v1::Job job = Submit("tests/integration/data/slow/slow.yaml");
  ASSERT_GT(job.job_id(), 0);
  ASSERT_TRUE(WaitFor(
      [&] {
        auto now = client_->GetJob(job.job_id());
        return now.ok() && now->candidates_done() >= 3;
      },
      seconds(120)));
  coordinator_->Kill();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  coordinator_->Start();  // same database, same port; the worker reconnects
  v1::Job done = WaitForEnd(job.job_id(), seconds(180));
  EXPECT_EQ(done.state(), v1::JOB_STATE_SUCCEEDED) << done.DebugString();
  EXPECT_EQ(done.candidates_done(), done.candidates_total());
  EXPECT_EQ(done.candidates_failed(), 0);
  ExpectExactlyOneResultPerCandidate(job.job_id());
  EXPECT_EQ(done.configurations(), 24);
  EXPECT_EQ(done.builds_done(), 24);
  // Ended, the job says what it built after the next restart too.
  coordinator_->Kill();
  coordinator_->Start();
  v1::Job after;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto now = client_->GetJob(job.job_id());
        if (now.ok()) after = *now;
        return now.ok();
      },
      seconds(30)));
  EXPECT_EQ(after.configurations(), 24);
  EXPECT_EQ(after.builds_done(), 24);
}

TEST_P(FleetTest, SubmitWaitRidesOutACoordinatorRestart) {
  AddWorker("cpu:1");
  auto cli = Process::Start({BinaryPath("bin/tunefleet"), "--coordinator", coordinator_->address(),
                             "--token-file", dir_ / "submitter.token", "submit",
                             SourcePath("tests/integration/data/slow/slow.yaml"), "--wait"},
                            dir_ / "submit.log");
  int64_t job_id = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto jobs = client_->ListJobs(1);
        if (!jobs.ok() || jobs->empty() || (*jobs)[0].candidates_done() < 3) return false;
        job_id = (*jobs)[0].job_id();
        return true;
      },
      seconds(120)))
      << cli->Log();
  coordinator_->Kill();
  std::this_thread::sleep_for(std::chrono::seconds(2));  // the CLI retries meanwhile
  coordinator_->Start();                                 // same database, same port
  int wait_status = 0;
  ASSERT_TRUE(WaitFor([&] { return cli->Exited(&wait_status); }, seconds(180))) << cli->Log();
  const std::string log = cli->Log();
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) << log;
  EXPECT_NE(log.find("cannot reach coordinator at " + coordinator_->address()), std::string::npos)
      << log;
  EXPECT_NE(log.find("reconnecting"), std::string::npos) << log;
  EXPECT_NE(log.find("job " + std::to_string(job_id) + " succeeded"), std::string::npos) << log;
  EXPECT_NE(log.find("MEDIAN"), std::string::npos) << log;  // the best table
  ExpectExactlyOneResultPerCandidate(job_id);
}

TEST_P(FleetTest, CancelFreesTheLeaseAtOnceAndTheWorkerMovesOnWithinAHeartbeat) {
  Process& worker = AddWorker("cpu:1");
  // Each candidate of this job takes 2 s: its first lease alone would take
  // about a minute if the worker did not stop it.
  auto endless = LoadTestSpec("tests/integration/data/slow/slow.yaml", [](v1::KernelSpec& spec) {
    spec.mutable_benchmark()->set_min_time_ms(2000);
    spec.mutable_benchmark()->set_max_repeats(1000000);
    spec.mutable_benchmark()->set_timeout_s(60);
  });
  v1::Job doomed = SubmitSpec(*client_, endless);
  ASSERT_TRUE(WaitFor(
      [&] {
        auto workers = client_->ListWorkers();
        return workers.ok() && !workers->empty() && (*workers)[0].active_leases() > 0;
      },
      seconds(120)));
  auto cancelled = Cli({"cancel", std::to_string(doomed.job_id())});
  ASSERT_EQ(cancelled.exit_code, 0) << cancelled.output;
  auto workers = client_->ListWorkers();
  ASSERT_TRUE(workers.ok());
  EXPECT_EQ((*workers)[0].active_leases(), 0) << "cancel frees the leases before it answers";
  auto results_at_cancel = client_->ListResults(doomed.job_id());
  ASSERT_TRUE(results_at_cancel.ok());
  // Submitted after the check: a job already waiting could be leased to the
  // worker between the cancel's answer and the check.
  v1::Job next = SubmitSpec(*client_, LoadTestSpec("tests/integration/data/slow/slow.yaml"));
  ASSERT_GT(next.job_id(), 0);

  v1::Job done = WaitForEnd(next.job_id(), seconds(40));
  EXPECT_EQ(done.state(), v1::JOB_STATE_SUCCEEDED) << done.DebugString();
  EXPECT_NE(worker.Log().find("lease stopped"), std::string::npos);
  auto results_after = client_->ListResults(doomed.job_id());
  ASSERT_TRUE(results_after.ok());
  EXPECT_EQ(results_after->size(), results_at_cancel->size()) << "a result counted after cancel";
  EXPECT_EQ(client_->GetJob(doomed.job_id())->state(), v1::JOB_STATE_CANCELLED);
}

TF_ON_BOTH_DATABASES(FleetTest);

}  // namespace
}  // namespace tf::testing
