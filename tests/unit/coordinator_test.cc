// The coordinator's lease policy, driven directly: priorities, fair sharing,
// cancellation, straggler backups and silent workers. Real SQLite database,
// real builds; the workers are this test calling the worker-facing methods.
#include "coordinator/coordinator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "db/database.h"
#include "kernelspec/config.h"
#include "kernelspec/spec_loader.h"
#include "tests/test_util.h"

namespace tf::coordinator {
namespace {

namespace v1 = ::tunefleet::v1;
using std::chrono::seconds;
using testing::WaitFor;

class CoordinatorTest : public ::testing::Test {
 protected:
  void Start(int64_t lease_ttl_ms = 60000, int64_t heartbeat_interval_ms = 100) {
    CoordinatorOptions options;
    options.db_path = dir_ / "tunefleet.db";
    options.artifact_dir = dir_ / "artifacts";
    options.db_synchronous_full = false;
    options.heartbeat_interval_ms = heartbeat_interval_ms;
    options.lease_ttl_ms = lease_ttl_ms;
    options.max_lease_candidates = 4;
    options.build_parallelism = 1;
    options.worker_retention_ms = worker_retention_ms_;
    auto started = Coordinator::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    c_ = std::move(*started);
    heartbeats_ = std::thread([this] {
      while (!stop_) {
        std::set<std::string> alive;
        {
          std::lock_guard lock(mu_);
          alive = alive_;
        }
        for (const auto& id : alive) {
          v1::HeartbeatRequest request;
          request.set_worker_id(id);
          (void)c_->Heartbeat(request);
        }
        {
          std::lock_guard lock(mu_);
          ++heartbeat_rounds_;
        }
        round_done_.notify_all();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
  }

  void TearDown() override {
    stop_ = true;
    if (heartbeats_.joinable()) heartbeats_.join();
  }

  // A new coordinator on the same database; the workers must register again.
  void Restart() {
    TearDown();
    c_.reset();
    stop_ = false;
    Start();
  }

  // The worker stops heartbeating, as if cut off. Returns once the round of
  // heartbeats that may have copied it before has ended: from here on its last
  // heartbeat lies in the past.
  void Silence(const std::string& worker) {
    std::unique_lock lock(mu_);
    alive_.erase(worker);
    const int64_t round = heartbeat_rounds_;
    round_done_.wait(lock, [&] { return heartbeat_rounds_ > round; });
  }

  // `cpp_compiler`: the compiler the worker says it builds C++ with.
  std::string Register(int devices = 1, const std::string& previous_worker_id = "",
                       const std::string& cpp_compiler = "") {
    v1::RegisterRequest request;
    request.set_hostname("test-host");
    request.set_previous_worker_id(previous_worker_id);
    for (int i = 0; i < devices; ++i) {
      auto* d = request.add_devices();
      d->set_index(i);
      d->set_vendor("cpu");
      d->set_arch("host");
      d->set_device_class("cpu-test");
      if (!cpp_compiler.empty()) (*d->mutable_toolchains())["cpp"] = cpp_compiler;
    }
    auto response = c_->Register(request);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    if (!response.ok()) return "";
    std::lock_guard lock(mu_);
    alive_.insert(response->worker_id());
    return response->worker_id();
  }

  // A job of `configs` candidates (one problem) that is built and ready;
  // without `finalists` it ends with its last candidate's result.
  int64_t SubmitBuilt(int priority, int configs = 8, int finalists = 0) {
    auto loaded =
        kernelspec::LoadSpecFile(testing::SourcePath("tests/integration/data/slow/slow.yaml"));
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    v1::SubmitJobRequest request;
    *request.mutable_spec() = loaded->spec;
    request.mutable_spec()->mutable_params(0)->mutable_range()->set_stop(configs);
    request.mutable_spec()->mutable_search()->set_finalists(finalists);
    for (const auto& s : loaded->sources) *request.add_sources() = s;
    request.set_priority(priority);
    auto job = c_->Submit(request);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    if (!job.ok()) return 0;
    int64_t id = job->job_id();
    EXPECT_TRUE(WaitFor(
        [&] {
          auto now = c_->GetJob(id);
          return now.ok() && now->state() == v1::JOB_STATE_RUNNING &&
                 now->builds_done() == now->configurations();
        },
        seconds(120)))
        << "job " << id << " was not built";
    return id;
  }

  std::optional<v1::Lease> Acquire(const std::string& worker, int device = 0) {
    v1::AcquireLeaseRequest request;
    request.set_worker_id(worker);
    request.set_device_index(device);
    auto response = c_->AcquireLease(request);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    if (!response.ok() || !response->has_lease()) return std::nullopt;
    return response->lease();
  }

  v1::ReportResultsResponse Report(const std::string& worker, const v1::Lease& lease) {
    v1::ReportResultsRequest request;
    request.set_worker_id(worker);
    request.set_lease_id(lease.lease_id());
    request.set_lease_finished(true);
    for (const auto& c : lease.candidates()) {
      auto* r = request.add_results();
      r->set_candidate_id(c.candidate_id());
      r->set_status(v1::RESULT_STATUS_OK);
      r->mutable_timing()->set_median_ns(1000 + c.candidate_id());
    }
    auto response = c_->ReportResults(request);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    return response.ok() ? *response : v1::ReportResultsResponse();
  }

  // A heartbeat from `worker` naming the one lease it holds.
  v1::HeartbeatResponse Beat(const std::string& worker, int64_t lease_id) {
    v1::HeartbeatRequest request;
    request.set_worker_id(worker);
    request.add_lease_ids(lease_id);
    auto response = c_->Heartbeat(request);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    return response.ok() ? *response : v1::HeartbeatResponse();
  }

  // A job of `configs` candidates (one problem) that its workers compile.
  v1::SubmitJobRequest CompiledOnWorkers(int configs) {
    auto loaded =
        kernelspec::LoadSpecFile(testing::SourcePath("tests/integration/data/slow/slow.yaml"));
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    v1::SubmitJobRequest request;
    *request.mutable_spec() = loaded->spec;
    request.mutable_spec()->mutable_params(0)->mutable_range()->set_stop(configs);
    request.mutable_spec()->mutable_target()->set_compile_on("worker");
    for (const auto& source : loaded->sources) *request.add_sources() = source;
    return request;
  }

  // The worker as ListWorkers lists it; nothing when it is not listed.
  std::optional<v1::WorkerInfo> Listed(const std::string& worker) {
    for (const v1::WorkerInfo& info : c_->ListWorkers()) {
      if (info.worker_id() == worker) return info;
    }
    return std::nullopt;
  }

  v1::JobState State(int64_t job_id) {
    auto job = c_->GetJob(job_id);
    return job.ok() ? job->state() : v1::JOB_STATE_UNSPECIFIED;
  }

  int64_t ResultsInDb(int64_t job_id) {
    auto db = db::Database::Open(dir_ / "tunefleet.db", false);
    EXPECT_TRUE(db.ok());
    auto stmt = (*db)->Prepare("SELECT COUNT(*) FROM results WHERE job_id = ?");
    stmt->Bind(1, job_id);
    EXPECT_TRUE(*stmt->Step());
    return stmt->Int(0);
  }

  // Set before Start; kept by Restart.
  int64_t worker_retention_ms_ = CoordinatorOptions().worker_retention_ms;
  testing::TempDir dir_;
  std::unique_ptr<Coordinator> c_;
  // Registered workers heartbeat every 20 ms, like real ones, until silenced.
  std::mutex mu_;
  std::set<std::string> alive_;
  int64_t heartbeat_rounds_ = 0;
  std::condition_variable round_done_;
  std::atomic<bool> stop_{false};
  std::thread heartbeats_;
};

TEST_F(CoordinatorTest, FinalistsAreReTimedInOneLeaseAndTheFastestReTimingWins) {
  Start();
  const std::string worker = Register();
  const int64_t id = SubmitBuilt(0, 6, /*finalists=*/3);
  // The search: Report times candidate c at 1000 + c.
  std::vector<int64_t> searched;
  std::optional<v1::Lease> retime;
  while (!retime) {
    auto lease = Acquire(worker);
    ASSERT_TRUE(lease) << "no lease while the job is " << v1::JobState_Name(State(id));
    if (lease->retime()) {
      retime = lease;
      break;
    }
    for (const auto& c : lease->candidates()) searched.push_back(c.candidate_id());
    Report(worker, *lease);
  }
  ASSERT_EQ(searched.size(), 6u);
  std::sort(searched.begin(), searched.end());
  auto job = c_->GetJob(id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state(), v1::JOB_STATE_RUNNING) << "ended before its finalists were re-timed";
  EXPECT_EQ(job->candidates_done(), 6);
  EXPECT_EQ(job->problems_retiming(), 1);
  // The search's three fastest, each with the artifact and symbol it was built into.
  std::vector<int64_t> finalists;
  for (const auto& c : retime->candidates()) {
    finalists.push_back(c.candidate_id());
    EXPECT_FALSE(c.artifact_sha256().empty());
    EXPECT_FALSE(c.symbol().empty());
    EXPECT_EQ(c.early_stop_ns(), 0);
  }
  EXPECT_EQ(finalists, std::vector<int64_t>(searched.begin(), searched.begin() + 3));
  EXPECT_FALSE(Acquire(worker)) << "the finalists went out twice";

  // Re-timed together, the search's second fastest is the fastest.
  v1::ReportResultsRequest report;
  report.set_worker_id(worker);
  report.set_lease_id(retime->lease_id());
  report.set_lease_finished(true);
  for (int64_t f : finalists) {
    auto* r = report.add_results();
    r->set_candidate_id(f);
    r->set_status(v1::RESULT_STATUS_OK);
    r->mutable_retiming()->set_median_ns(f == finalists[1] ? 900 : 950);
    r->mutable_retiming()->set_repeats(20);
  }
  auto reported = c_->ReportResults(report);
  ASSERT_TRUE(reported.ok()) << reported.status().ToString();
  EXPECT_EQ(reported->recorded(), 3);
  job = c_->GetJob(id);
  ASSERT_TRUE(job.ok());
  ASSERT_EQ(job->state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job->problems_retiming(), 0);
  ASSERT_EQ(job->best_size(), 1);
  EXPECT_EQ(job->best(0).candidate_id(), finalists[1]);
  EXPECT_TRUE(job->best(0).confirmed_by_retiming());
  EXPECT_EQ(job->best(0).timing().median_ns(), 900);
  // The stored best, and the results, best first.
  v1::QueryBestRequest query;
  query.set_kernel(job->kernel());
  *query.mutable_problem() = job->best(0).problem();
  v1::QueryBestResponse best = c_->QueryBest(query);
  ASSERT_TRUE(best.found());
  EXPECT_TRUE(best.confirmed_by_retiming());
  EXPECT_EQ(best.timing().median_ns(), 900);
  EXPECT_EQ(kernelspec::ConfigKey(best.config()), kernelspec::ConfigKey(job->best(0).config()));
  auto results = c_->ListResults(id);
  ASSERT_TRUE(results.ok());
  ASSERT_EQ(results->size(), 6u);
  EXPECT_EQ((*results)[0].candidate_id(), finalists[1]);
  EXPECT_TRUE((*results)[0].retime_winner());
  int retimed = 0;
  for (const auto& r : *results) retimed += r.retiming().repeats() == 20;
  EXPECT_EQ(retimed, 3);
}

TEST_F(CoordinatorTest, AReTimeLeaseThatEndsUnreportedGoesToTheNextWorker) {
  Start(/*lease_ttl_ms=*/500);
  const std::string first = Register();
  const int64_t id = SubmitBuilt(0, 4, /*finalists=*/2);
  std::optional<v1::Lease> retime;
  while (!retime) {
    auto lease = Acquire(first);
    ASSERT_TRUE(lease);
    if (lease->retime()) retime = lease;
    if (!lease->retime()) Report(first, *lease);
  }
  Silence(first);  // its lease expires with the finalists unreported
  const std::string second = Register();
  std::optional<v1::Lease> again;
  ASSERT_TRUE(WaitFor([&] { return (again = Acquire(second)).has_value(); }, seconds(10)));
  EXPECT_TRUE(again->retime());
  EXPECT_EQ(again->candidates_size(), 2);
  EXPECT_EQ(State(id), v1::JOB_STATE_RUNNING);
}

TEST_F(CoordinatorTest, AStragglingReTimeLeaseIsTakenOverWholeAndTheJobEnds) {
  Start();
  const std::string slow = Register();
  const std::string fast = Register();
  const int64_t id = SubmitBuilt(0, 8, /*finalists=*/2);
  for (int i = 0; i < 2; ++i) {  // the search, on the fast worker
    auto lease = Acquire(fast);
    ASSERT_TRUE(lease);
    ASSERT_FALSE(lease->retime());
    Report(fast, *lease);
  }
  auto stuck = Acquire(slow);  // heartbeats, but never reports
  ASSERT_TRUE(stuck);
  ASSERT_TRUE(stuck->retime());
  // The re-timings must come from one device: the finalists go whole to the
  // idle worker, once the slow one has taken several leases' time.
  std::optional<v1::Lease> taken;
  ASSERT_TRUE(WaitFor([&] { return (taken = Acquire(fast)).has_value(); }, seconds(30)));
  EXPECT_TRUE(taken->retime());
  EXPECT_NE(taken->lease_id(), stuck->lease_id());
  ASSERT_EQ(taken->candidates_size(), 2);
  v1::ReportResultsRequest report;
  report.set_worker_id(fast);
  report.set_lease_id(taken->lease_id());
  report.set_lease_finished(true);
  for (const auto& c : taken->candidates()) {
    auto* r = report.add_results();
    r->set_candidate_id(c.candidate_id());
    r->set_status(v1::RESULT_STATUS_OK);
    r->mutable_retiming()->set_median_ns(900 + c.candidate_id());
    r->mutable_retiming()->set_repeats(20);
  }
  auto reported = c_->ReportResults(report);
  ASSERT_TRUE(reported.ok()) << reported.status().ToString();
  EXPECT_EQ(reported->recorded(), 2);
  EXPECT_EQ(State(id), v1::JOB_STATE_SUCCEEDED);

  // The slow worker is told to stop; its late re-timings do not count.
  auto beat = Beat(slow, stuck->lease_id());
  EXPECT_EQ(beat.cancelled_lease_ids_size(), 1);
  report.set_worker_id(slow);
  report.set_lease_id(stuck->lease_id());
  reported = c_->ReportResults(report);
  ASSERT_TRUE(reported.ok()) << reported.status().ToString();
  EXPECT_EQ(reported->recorded(), 0);
}

TEST_F(CoordinatorTest, EachTakeoverOfAReTimingDoublesTheTimeTheNextDeviceIsGiven) {
  // Heartbeats of 1.5 s: the first takeover comes after one, the next after two.
  Start(/*lease_ttl_ms=*/60000, /*heartbeat_interval_ms=*/1500);
  const std::string first = Register();
  const std::string second = Register();
  SubmitBuilt(0, 8, /*finalists=*/2);
  for (int i = 0; i < 2; ++i) Report(first, *Acquire(first));  // the search, in no time
  auto retime = Acquire(first);
  ASSERT_TRUE(retime && retime->retime());
  std::optional<v1::Lease> taken;
  ASSERT_TRUE(WaitFor([&] { return (taken = Acquire(second)).has_value(); }, seconds(10)));
  ASSERT_TRUE(taken->retime());
  // Taken back after one heartbeat's time, the re-timing would go on changing
  // hands for as long as it takes longer than that.
  std::this_thread::sleep_for(std::chrono::milliseconds(1800));
  EXPECT_FALSE(Acquire(first));
  std::optional<v1::Lease> again;
  ASSERT_TRUE(WaitFor([&] { return (again = Acquire(first)).has_value(); }, seconds(10)));
  EXPECT_TRUE(again->retime());
}

// Leases out when the coordinator restarts are reported as soon as their
// workers find the new one: how long they ran is unknown. Taken as instant,
// they made the re-timing after them a straggler at once, and two workers
// took it from each other for ever.
TEST_F(CoordinatorTest, LeasesOutAtARestartDoNotCountAsTheUsualLeaseTime) {
  Start();
  const std::string slow = Register();
  const std::string fast = Register();
  SubmitBuilt(0, 8, /*finalists=*/2);
  auto a = Acquire(fast);
  auto b = Acquire(slow);
  ASSERT_TRUE(a && b);
  Restart();
  ASSERT_EQ(Register(1, fast), fast);
  ASSERT_EQ(Register(1, slow), slow);
  Report(fast, *a);
  Report(slow, *b);
  auto retime = Acquire(slow);
  ASSERT_TRUE(retime && retime->retime());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // five heartbeats
  EXPECT_FALSE(Acquire(fast));
}

// Constraints that leave no configuration for any problem fail on every
// device: the submission is refused, naming the problems, and stores nothing.
TEST_F(CoordinatorTest, ASpecNoDeviceCanRunIsRefusedAtSubmission) {
  Start();
  auto loaded =
      kernelspec::LoadSpecFile(testing::SourcePath("tests/integration/data/slow/slow.yaml"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  v1::SubmitJobRequest request;
  *request.mutable_spec() = loaded->spec;
  for (const auto& s : loaded->sources) *request.add_sources() = s;
  v1::Problem* larger = request.mutable_spec()->add_problems();
  *larger = request.spec().problems(0);
  larger->mutable_vars(0)->set_value(4096);
  auto submit = [&](const std::string& constraint) {
    v1::SubmitJobRequest edited = request;
    edited.mutable_spec()->add_constraints(constraint);
    return c_->Submit(edited);
  };

  auto refused = submit("MS > 24");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(refused.status().message(),
            "no configuration satisfies the constraints, for any problem (n=1024, n=4096); "
            "`tunefleet space SPEC` counts them without submitting, as you change the constraints");
  auto jobs = c_->ListJobs(10);
  ASSERT_TRUE(jobs.ok());
  EXPECT_TRUE(jobs->empty());

  // Empty for one problem only, or depending on the device: for the device to say.
  EXPECT_TRUE(submit("MS > 24 || n > 1024").ok());
  EXPECT_TRUE(submit("MS > device.cores * 100").ok());
}

// A queued job says which device it waits for and why none binds it, by the
// rules that bind it; once bound it says nothing.
TEST_F(CoordinatorTest, AQueuedJobSaysWhatItWaitsForUntilBound) {
  Start();
  auto submit = [&](v1::SubmitJobRequest request) {
    auto job = c_->Submit(request);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? *job : v1::Job();
  };
  auto waiting_for = [&](int64_t job) { return c_->GetJob(job)->waiting_for(); };
  v1::SubmitJobRequest labelled = CompiledOnWorkers(/*configs=*/2);
  labelled.mutable_spec()->mutable_target()->clear_compile_on();
  v1::SubmitJobRequest plain = labelled;
  labelled.mutable_spec()->mutable_target()->set_label("big");

  const v1::Job first = submit(plain);
  EXPECT_EQ(first.state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(first.waiting_for(),
            "waiting for a worker with a device of vendor cpu, arch host (no worker is "
            "registered)");
  const int64_t big = submit(labelled).job_id();

  const std::string worker = Register();
  EXPECT_EQ(State(first.job_id()), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(waiting_for(first.job_id()), "");
  EXPECT_EQ(waiting_for(big),
            "waiting for a worker with a device of vendor cpu, arch host, label big "
            "(registered: 1 live worker, with devices cpu-test)");

  // Compiled on its workers, a job is bound only by a worker that asks for
  // work, which a device does once its lease ends.
  ASSERT_TRUE(WaitFor(
      [&] {
        const v1::Job job = *c_->GetJob(first.job_id());
        return job.builds_done() == job.configurations();
      },
      seconds(120)));
  ASSERT_TRUE(Acquire(worker).has_value());
  const int64_t on_workers = submit(CompiledOnWorkers(/*configs=*/2)).job_id();
  EXPECT_EQ(waiting_for(on_workers),
            "waiting for a free device of vendor cpu, arch host (1 matches, 1 busy with other "
            "jobs' leases): compiled on its workers, the job is bound when one asks for work");

  Silence(worker);
  const std::string silent =
      "waiting for a worker with a device of vendor cpu, arch host (no "
      "registered worker is alive; " +
      worker + " has one but is silent)";
  EXPECT_TRUE(WaitFor([&] { return waiting_for(on_workers) == silent; }, seconds(10)))
      << waiting_for(on_workers);
}

// A running job whose only worker went silent stays running and says that
// no live device of its class is left; its watchers are told as the worker
// goes silent and as another comes.
TEST_F(CoordinatorTest, ARunningJobWhoseWorkersWentSilentSaysNoLiveDeviceIsLeft) {
  Start();
  v1::SubmitJobRequest request = CompiledOnWorkers(/*configs=*/2);
  request.mutable_spec()->mutable_target()->clear_compile_on();
  const std::string worker = Register();
  auto job = c_->Submit(request);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  ASSERT_EQ(job->state(), v1::JOB_STATE_RUNNING);
  std::mutex mu;
  std::vector<std::string> told;  // each waiting_for the watch streamed, once in a row
  std::atomic<bool> stop = false;
  std::thread watcher([&] {
    (void)c_->WatchJob(
        job->job_id(),
        [&](const v1::Job& update) {
          std::lock_guard lock(mu);
          if (told.empty() || told.back() != update.waiting_for()) {
            told.push_back(update.waiting_for());
          }
          return true;
        },
        [&] { return stop.load(); });
  });
  auto streamed = [&] {
    std::lock_guard lock(mu);
    return told;
  };
  auto last = [&] {
    const std::vector<std::string> now = streamed();
    return now.empty() ? std::optional<std::string>() : now.back();
  };

  Silence(worker);
  const std::string stranded = "no live device of class cpu-test: its workers stopped (" + worker +
                               " silent); the job resumes when one registers";
  EXPECT_TRUE(WaitFor([&] { return last() == stranded; }, seconds(10)));
  EXPECT_EQ(State(job->job_id()), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(c_->GetJob(job->job_id())->waiting_for(), stranded);

  Register();
  EXPECT_TRUE(WaitFor([&] { return last() == ""; }, seconds(10)));
  EXPECT_EQ(c_->GetJob(job->job_id())->waiting_for(), "");
  stop = true;
  watcher.join();
  EXPECT_EQ(streamed(), (std::vector<std::string>{"", stranded, ""}));
}

TEST_F(CoordinatorTest, AJobItsWorkersCompileIsMeasuredWithOneCompilerWhoseTimesAloneItReuses) {
  Start();
  const v1::SubmitJobRequest request = CompiledOnWorkers(/*configs=*/4);
  // Bound only when a worker asks for work: by then the job takes on its compiler.
  auto submit = [&] {
    auto job = c_->Submit(request);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    if (!job.ok()) return int64_t{0};
    EXPECT_EQ(job->state(), v1::JOB_STATE_QUEUED);
    return job->job_id();
  };
  auto run_out = [&](const std::string& worker, int64_t job) {
    EXPECT_TRUE(WaitFor(
        [&] {
          if (auto lease = Acquire(worker)) Report(worker, *lease);
          return State(job) == v1::JOB_STATE_SUCCEEDED;
        },
        seconds(60)))
        << "job " << job << " did not end";
  };

  const std::string gcc12 = Register(1, "", "g++ 12");
  const int64_t first = submit();
  run_out(gcc12, first);

  // A worker whose compiler was upgraded binds the job: nothing measured with
  // the old compiler is reused, and the old one's devices take no lease.
  const std::string gcc13 = Register(1, "", "g++ 13");
  const int64_t second = submit();
  auto lease = Acquire(gcc13);
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->job_id(), second);
  Report(gcc13, *lease);
  const v1::Job bound = *c_->GetJob(second);
  EXPECT_EQ(bound.candidates_cached(), 0);
  EXPECT_EQ(bound.toolchain(), "g++ 13");
  EXPECT_NE(bound.fingerprint(), c_->GetJob(first)->fingerprint());
  EXPECT_FALSE(Acquire(gcc12).has_value());
  // So after a restart of the coordinator too.
  Restart();
  const std::string gcc12_again = Register(1, gcc12, "g++ 12");
  const std::string gcc13_again = Register(1, gcc13, "g++ 13");
  EXPECT_FALSE(Acquire(gcc12_again).has_value());
  run_out(gcc13_again, second);

  // A device with the old compiler binds the same job again: the old times serve it.
  const int64_t third = submit();
  EXPECT_FALSE(Acquire(gcc12_again).has_value());  // nothing left to run
  const v1::Job reused = *c_->GetJob(third);
  EXPECT_EQ(reused.candidates_cached(), 4);
  EXPECT_EQ(reused.toolchain(), "g++ 12");
  EXPECT_EQ(reused.fingerprint(), c_->GetJob(first)->fingerprint());
}

TEST_F(CoordinatorTest, ResultsListTheResourcesTheWorkersBuildReported) {
  Start();
  const std::string worker = Register();
  auto job = c_->Submit(CompiledOnWorkers(/*configs=*/2));
  ASSERT_TRUE(job.ok()) << job.status().ToString();

  std::optional<v1::Lease> lease;
  ASSERT_TRUE(WaitFor([&] { return (lease = Acquire(worker)).has_value(); }, seconds(60)));
  ASSERT_TRUE(lease->build_on_worker());
  v1::ReportResultsRequest report;
  report.set_worker_id(worker);
  report.set_lease_id(lease->lease_id());
  report.set_lease_finished(true);
  for (const auto& candidate : lease->candidates()) {
    v1::CandidateResult* result = report.add_results();
    result->set_candidate_id(candidate.candidate_id());
    result->set_status(v1::RESULT_STATUS_OK);
    result->mutable_timing()->set_median_ns(1000 + candidate.candidate_id());
    result->mutable_resources()->set_vector_registers(168);
    result->mutable_resources()->add_performance_warnings(
        "C7510: wgmma serialized (candidate " + std::to_string(candidate.candidate_id()) + ")");
  }
  ASSERT_TRUE(c_->ReportResults(report).ok());

  auto results = c_->ListResults(job->job_id());
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  ASSERT_EQ(results->size(), static_cast<size_t>(lease->candidates_size()));
  for (const v1::CandidateResult& result : *results) {
    EXPECT_EQ(result.resources().vector_registers(), 168);
    ASSERT_EQ(result.resources().performance_warnings_size(), 1);
    EXPECT_EQ(result.resources().performance_warnings(0),
              "C7510: wgmma serialized (candidate " + std::to_string(result.candidate_id()) + ")");
  }
}

TEST_F(CoordinatorTest, HigherPriorityJobIsLeasedFirstEvenWhenSubmittedLater) {
  Start();
  std::string worker = Register();
  int64_t low = SubmitBuilt(0);
  int64_t high = SubmitBuilt(5);
  std::vector<int64_t> order;
  while (auto lease = Acquire(worker)) {
    order.push_back(lease->job_id());
    Report(worker, *lease);
  }
  ASSERT_EQ(order.size(), 4u);  // 2 x 8 candidates in leases of 4
  EXPECT_EQ(order, (std::vector<int64_t>{high, high, low, low}));
  EXPECT_EQ(State(low), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(State(high), v1::JOB_STATE_SUCCEEDED);
}

TEST_F(CoordinatorTest, SamePriorityJobsShareWorkersInTurn) {
  Start();
  std::string worker = Register(/*devices=*/2);
  int64_t a = SubmitBuilt(1, 16);
  int64_t b = SubmitBuilt(1, 16);
  // Two devices asking at once get one job each.
  auto first = Acquire(worker, 0);
  auto second = Acquire(worker, 1);
  ASSERT_TRUE(first && second);
  EXPECT_NE(first->job_id(), second->job_id());
  Report(worker, *first);
  Report(worker, *second);
  // One device taking leases one at a time alternates between them.
  std::vector<int64_t> order;
  while (auto lease = Acquire(worker, 0)) {
    order.push_back(lease->job_id());
    Report(worker, *lease);
  }
  ASSERT_EQ(order.size(), 6u);
  for (size_t i = 1; i < order.size(); ++i) EXPECT_NE(order[i], order[i - 1]) << i;
  EXPECT_EQ(State(a), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(State(b), v1::JOB_STATE_SUCCEEDED);
}

TEST_F(CoordinatorTest, CancelFreesTheLeasesAtOnceAndItsResultsAreRefused) {
  Start();
  std::string worker = Register();
  int64_t doomed = SubmitBuilt(5);
  int64_t other = SubmitBuilt(0);
  auto lease = Acquire(worker);
  ASSERT_TRUE(lease);
  ASSERT_EQ(lease->job_id(), doomed);

  auto cancelled = c_->Cancel(doomed);
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(cancelled->state(), v1::JOB_STATE_CANCELLED);
  auto workers = c_->ListWorkers();
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].active_leases(), 0);
  // The worker learns it at its next heartbeat, and its results do not count.
  auto beat = Beat(worker, lease->lease_id());
  ASSERT_EQ(beat.cancelled_lease_ids_size(), 1);
  EXPECT_EQ(beat.cancelled_lease_ids(0), lease->lease_id());
  auto reported = Report(worker, *lease);
  EXPECT_EQ(reported.recorded(), 0);
  EXPECT_EQ(ResultsInDb(doomed), 0);
  // The freed worker goes on with the other job.
  auto next = Acquire(worker);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->job_id(), other);
}

TEST_F(CoordinatorTest, StragglingLeaseIsBackedUpElsewhereAndCountedOnce) {
  Start();
  std::string slow = Register();
  std::string fast = Register();
  int64_t job = SubmitBuilt(0, 16);
  auto straggling = Acquire(slow);
  ASSERT_TRUE(straggling);
  for (int i = 0; i < 3; ++i) {
    auto lease = Acquire(fast);
    ASSERT_TRUE(lease);
    Report(fast, *lease);
  }
  // Once the straggler has taken three times the usual lease (and at least a
  // heartbeat interval), an idle worker gets its candidates too.
  std::optional<v1::Lease> backup;
  ASSERT_TRUE(WaitFor([&] { return (backup = Acquire(fast)).has_value(); }, seconds(30)));
  ASSERT_EQ(backup->candidates_size(), straggling->candidates_size());
  for (int i = 0; i < backup->candidates_size(); ++i) {
    EXPECT_EQ(backup->candidates(i).candidate_id(), straggling->candidates(i).candidate_id());
  }
  EXPECT_FALSE(Acquire(fast)) << "one backup per straggler";
  EXPECT_EQ(Report(fast, *backup).recorded(), backup->candidates_size());
  EXPECT_EQ(State(job), v1::JOB_STATE_SUCCEEDED);

  // The straggler is told to stop; what it reports late is a duplicate.
  auto beat = Beat(slow, straggling->lease_id());
  EXPECT_EQ(beat.cancelled_lease_ids_size(), 1);
  auto late = Report(slow, *straggling);
  EXPECT_EQ(late.recorded(), 0);
  EXPECT_EQ(late.duplicates(), straggling->candidates_size());
  EXPECT_EQ(ResultsInDb(job), 16);
}

TEST_F(CoordinatorTest, WorkerSilentForALeaseTtlLosesItsLeaseAndMustRegisterAgain) {
  Start(/*lease_ttl_ms=*/300);
  std::string silent = Register();
  std::string other = Register();
  int64_t job = SubmitBuilt(0, 4);
  // Silent from before it takes the lease: the lease cannot outlive the
  // worker's silence, so the pass that expires it also expires the worker.
  Silence(silent);
  auto lost = Acquire(silent);
  ASSERT_TRUE(lost);
  // `other` gets the lease once it expired.
  std::optional<v1::Lease> reassigned;
  ASSERT_TRUE(WaitFor([&] { return (reassigned = Acquire(other)).has_value(); }, seconds(30)));
  EXPECT_EQ(reassigned->candidates_size(), lost->candidates_size());

  auto beat = Beat(silent, lost->lease_id());
  EXPECT_TRUE(beat.reregister());
  v1::AcquireLeaseRequest acquire;
  acquire.set_worker_id(silent);
  EXPECT_EQ(c_->AcquireLease(acquire).status().code(), Code::kNotFound);

  v1::RegisterRequest again;
  again.set_hostname("test-host");
  again.set_previous_worker_id(silent);
  auto* d = again.add_devices();
  d->set_vendor("cpu");
  d->set_arch("host");
  d->set_device_class("cpu-test");
  auto registered = c_->Register(again);
  ASSERT_TRUE(registered.ok());
  EXPECT_EQ(registered->worker_id(), silent);
  beat = Beat(silent, lost->lease_id());
  EXPECT_FALSE(beat.reregister());
  ASSERT_EQ(beat.cancelled_lease_ids_size(), 1) << "its old lease is gone";

  // Its late results still count, once: the reassigned lease's are duplicates.
  EXPECT_EQ(Report(silent, *lost).recorded(), lost->candidates_size());
  auto second = Report(other, *reassigned);
  EXPECT_EQ(second.recorded(), 0);
  EXPECT_EQ(second.duplicates(), reassigned->candidates_size());
  EXPECT_EQ(State(job), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(ResultsInDb(job), 4);
}

// Restarted workers register under new ids: the old ones, silent, are
// forgotten once the retention has passed, in the database too, their results
// kept; one that comes back all the same registers again under its id.
TEST_F(CoordinatorTest, ASilentWorkerIsForgottenAfterTheRetentionAndMayComeBack) {
  worker_retention_ms_ = 2000;
  Start(/*lease_ttl_ms=*/300);
  const std::string gone = Register();
  const std::string other = Register();
  const int64_t job = SubmitBuilt(0, 4);
  auto lease = Acquire(gone);
  ASSERT_TRUE(lease);
  ASSERT_EQ(Report(gone, *lease).recorded(), 4);
  Silence(gone);
  ASSERT_TRUE(WaitFor([&] { return !Listed(gone); }, seconds(10))) << "never forgotten";
  EXPECT_TRUE(Listed(other)) << "a worker that heartbeats was forgotten";

  Restart();
  ASSERT_EQ(Register(1, other), other);
  EXPECT_FALSE(Listed(gone)) << "still in the database";
  EXPECT_TRUE(Beat(gone, lease->lease_id()).reregister());
  ASSERT_EQ(Register(1, gone), gone);
  auto back = Listed(gone);
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->alive());
  EXPECT_EQ(back->results_reported(), 4);
  EXPECT_EQ(ResultsInDb(job), 4);
  EXPECT_EQ(State(job), v1::JOB_STATE_SUCCEEDED);
}

TEST_F(CoordinatorTest, AWorkerIsNotForgottenWhileALeaseIsStillItsAfterARestart) {
  worker_retention_ms_ = 200;
  Start();
  const std::string worker = Register();
  SubmitBuilt(0, 4);
  auto lease = Acquire(worker);
  ASSERT_TRUE(lease);
  Restart();  // known from the database, silent, its lease out for another TTL
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  auto listed = Listed(worker);
  ASSERT_TRUE(listed) << "forgotten with a lease out";
  EXPECT_EQ(listed->active_leases(), 1);
  ASSERT_EQ(Register(1, worker), worker);
  EXPECT_EQ(Report(worker, *lease).recorded(), 4);
}

// What `tunefleet workers` shows as a worker's results is what the database
// holds from it: the same after a restart, re-timings of finalists not
// counted again.
TEST_F(CoordinatorTest, AWorkersResultsAreCountedTheSameAfterARestart) {
  Start();
  const std::string worker = Register();
  const int64_t job = SubmitBuilt(0, 4, /*finalists=*/2);
  while (auto lease = Acquire(worker)) Report(worker, *lease);
  ASSERT_EQ(State(job), v1::JOB_STATE_SUCCEEDED);
  ASSERT_EQ(ResultsInDb(job), 4);
  auto before = Listed(worker);
  ASSERT_TRUE(before);
  EXPECT_EQ(before->results_reported(), 4);

  Restart();
  auto loaded = Listed(worker);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->results_reported(), 4);
  ASSERT_EQ(Register(1, worker), worker);
  auto registered = Listed(worker);
  ASSERT_TRUE(registered);
  EXPECT_EQ(registered->results_reported(), 4);
}

}  // namespace
}  // namespace tf::coordinator
