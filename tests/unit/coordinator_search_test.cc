// The coordinator driving a search (coordinator/search_driver.h) through its
// real state machine: a real SQLite database and real (replay) builds; the
// workers are this test, taking leases and reporting the times the A100
// recording of the convolution kernel holds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "coordinator/coordinator.h"
#include "db/sqlite.h"
#include "kernelspec/config.h"
#include "search/recorded_space.h"
#include "tests/test_util.h"

namespace tf::coordinator {
namespace {

namespace v1 = ::tunefleet::v1;
using ::testing::HasSubstr;

class CoordinatorSearchTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto recording = search::ReadRecordedSpace(
        testing::SourcePath("tests/data/spaces/convolution/A100_T4.json.gz"));
    ASSERT_TRUE(recording.ok()) << recording.status().ToString();
    times_ = new std::map<std::string, double>;
    for (search::ConfigId id = 0; id < recording->space.size(); ++id) {
      if (recording->results[id].outcome != search::Outcome::kOk) continue;
      (*times_)[recording->space.Describe(id)] = recording->results[id].time_ms * 1e6;
    }
  }

  void Start() {
    CoordinatorOptions options;
    options.db_path = dir_ / "tunefleet.db";
    options.artifact_dir = dir_ / "artifacts";
    options.db_synchronous_full = false;
    options.heartbeat_interval_ms = 60000;  // registered devices stay live
    options.lease_ttl_ms = 60000;
    options.build_parallelism = 1;
    auto started = Coordinator::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    c_ = std::move(*started);
  }

  std::string Register(int devices, const std::string& device_class = "replay/test") {
    v1::RegisterRequest request;
    request.set_hostname("replay-host");
    for (int i = 0; i < devices; ++i) {
      auto* d = request.add_devices();
      d->set_index(i);
      d->set_vendor("replay");
      d->set_arch("replay");
      d->set_device_class(device_class);
    }
    auto response = c_->Register(request);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    return response.ok() ? response->worker_id() : "";
  }

  // `source_edit`, appended to each source: another source of the kernel
  // (another fingerprint). `kernel`: another name for the kernel.
  // `constraint`: one more constraint.
  int64_t Submit(const std::function<void(v1::Search&)>& edit, const std::string& device_class = "",
                 const std::string& source_edit = "", const std::string& kernel = "",
                 const std::string& constraint = "") {
    kernelspec::LoadedSpec loaded = testing::LoadTestSpec(
        "tests/data/spaces/convolution/convolution_replay.yaml", [&](v1::KernelSpec& spec) {
          edit(*spec.mutable_search());
          spec.mutable_target()->set_device_class(device_class);
          if (!kernel.empty()) spec.set_name(kernel);
          if (!constraint.empty()) spec.add_constraints(constraint);
          if (spec_edit_) spec_edit_(spec);
        });
    v1::SubmitJobRequest request;
    *request.mutable_spec() = loaded.spec;
    for (const auto& s : loaded.sources) {
      v1::SourceFile* source = request.add_sources();
      *source = s;
      source->mutable_content()->append(source_edit);
    }
    auto job = c_->Submit(request);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? job->job_id() : 0;
  }

  v1::Job Job(int64_t id) {
    auto job = c_->GetJob(id);
    EXPECT_TRUE(job.ok()) << job.status().ToString();
    return job.ok() ? *job : v1::Job();
  }

  // Takes leases on each device in turn and reports their recorded times
  // (or `status` when not OK) until the job ends or `stop_after` results
  // were reported; a configuration `times_out` holds for times out. Returns
  // the most candidates the job had without a result.
  int64_t Work(const std::string& worker, int devices, int64_t job_id,
               v1::ResultStatus status = v1::RESULT_STATUS_OK, int stop_after = 1 << 30,
               const std::function<bool(const std::string&)>& times_out = {}) {
    int64_t most_outstanding = 0;
    int reported = 0;
    for (int round = 0; round < 20000 && reported < stop_after; ++round) {
      v1::Job job = Job(job_id);
      most_outstanding = std::max(most_outstanding, job.candidates_total() - job.candidates_done());
      if (job.state() != v1::JOB_STATE_QUEUED && job.state() != v1::JOB_STATE_RUNNING) break;
      std::vector<v1::Lease> leases;
      for (int d = 0; d < devices; ++d) {
        v1::AcquireLeaseRequest request;
        request.set_worker_id(worker);
        request.set_device_index(d);
        request.set_wait_ms(d == 0 ? 50 : 0);
        auto response = c_->AcquireLease(request);
        EXPECT_TRUE(response.ok()) << response.status().ToString();
        if (response.ok() && response->has_lease()) leases.push_back(response->lease());
      }
      for (const v1::Lease& lease : leases) {
        v1::ReportResultsRequest report;
        report.set_worker_id(worker);
        report.set_lease_id(lease.lease_id());
        report.set_lease_finished(true);
        for (const auto& c : lease.candidates()) {
          auto* r = report.add_results();
          r->set_candidate_id(c.candidate_id());
          auto time = times_->find(kernelspec::ConfigKey(c.config()));
          if (lease.retime()) {  // the finalists, re-timed as recorded
            r->set_status(v1::RESULT_STATUS_OK);
            r->mutable_retiming()->set_median_ns(time->second);
            r->mutable_retiming()->set_repeats(1);
            continue;
          }
          // A lease carries the threshold once its problem has a best time.
          EXPECT_EQ(c.early_stop_ns(), best_ns_ < 1e300 ? early_stop_ * best_ns_ : 0);
          if (times_out && times_out(kernelspec::ConfigKey(c.config()))) {
            r->set_status(v1::RESULT_STATUS_TIMEOUT);
            r->set_error("timed out");
            continue;
          }
          if (status != v1::RESULT_STATUS_OK || time == times_->end()) {
            r->set_status(status == v1::RESULT_STATUS_OK ? v1::RESULT_STATUS_RUNTIME_FAILED
                                                         : status);
            continue;
          }
          const bool stopped = c.early_stop_ns() > 0 && time->second > c.early_stop_ns();
          r->set_status(stopped ? v1::RESULT_STATUS_EARLY_STOPPED : v1::RESULT_STATUS_OK);
          r->mutable_timing()->set_median_ns(time->second);
          early_stopped_ += stopped;
          ++reported;
        }
        for (const auto& r : report.results()) {
          if (r.status() == v1::RESULT_STATUS_OK && !lease.retime())
            best_ns_ = std::min(best_ns_, r.timing().median_ns());
        }
        auto response = c_->ReportResults(report);
        EXPECT_TRUE(response.ok()) << response.status().ToString();
        if (status != v1::RESULT_STATUS_OK) reported += lease.candidates_size();
      }
    }
    return most_outstanding;
  }

  // Configurations with a result in the database, each once.
  std::set<std::string> ResultConfigs(int64_t job_id) {
    auto db = db::Database::Open(dir_ / "tunefleet.db", false);
    EXPECT_TRUE(db.ok());
    auto stmt = (*db)->Prepare("SELECT config_key FROM results WHERE job_id = ?");
    stmt->Bind(1, job_id);
    std::set<std::string> keys;
    size_t rows = 0;
    while (*stmt->Step()) {
      keys.insert(stmt->Text(0));
      ++rows;
    }
    EXPECT_EQ(rows, keys.size()) << "a configuration has two results";
    return keys;
  }

  // Each configuration's result in the job: its status, and whether it was
  // reused from an earlier job.
  std::map<std::string, std::pair<v1::ResultStatus, bool>> Results(int64_t job_id) {
    auto db = db::Database::Open(dir_ / "tunefleet.db", false);
    EXPECT_TRUE(db.ok());
    auto stmt = (*db)->Prepare("SELECT config_key, status, cached FROM results WHERE job_id = ?");
    stmt->Bind(1, job_id);
    std::map<std::string, std::pair<v1::ResultStatus, bool>> results;
    while (*stmt->Step()) {
      results[stmt->Text(0)] = {static_cast<v1::ResultStatus>(stmt->Int(1)), stmt->Int(2) != 0};
    }
    return results;
  }

  std::string FirstCandidate(int64_t job_id) {
    auto db = db::Database::Open(dir_ / "tunefleet.db", false);
    EXPECT_TRUE(db.ok());
    auto stmt =
        (*db)->Prepare("SELECT config_key FROM candidates WHERE job_id = ? ORDER BY id LIMIT 1");
    stmt->Bind(1, job_id);
    return *stmt->Step() ? stmt->Text(0) : "";
  }

  static std::map<std::string, double>* times_;     // recorded A100 times by config key, ns
  std::function<void(v1::KernelSpec&)> spec_edit_;  // applied to every spec submitted
  double early_stop_ = 0;   // the job's search.early_stop, to check leases against
  double best_ns_ = 1e300;  // the best OK time reported so far (one problem)
  int early_stopped_ = 0;
  testing::TempDir dir_;
  std::unique_ptr<Coordinator> c_;
};

std::map<std::string, double>* CoordinatorSearchTest::times_ = nullptr;

TEST_F(CoordinatorSearchTest, SearchKeepsAWindowPerDeviceAndEndsSucceededWithItsReason) {
  Start();
  const std::string worker = Register(1);
  const int64_t id = Submit([](v1::Search& s) {
    s.set_strategy("auto");
    s.set_max_candidates(40);
  });
  EXPECT_LE(Work(worker, 1, id), static_cast<int64_t>(kProposalsPerDevice));
  v1::Job job = Job(id);
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.error();
  EXPECT_EQ(job.candidates_total(), 40);
  EXPECT_EQ(job.candidates_done(), 40);
  EXPECT_EQ(job.stop_reason(), "search.max_candidates (40) evaluated");
  EXPECT_EQ(ResultConfigs(id).size(), 40u);
  ASSERT_EQ(job.best_size(), 1);
}

TEST_F(CoordinatorSearchTest, TwoDevicesGetTwiceTheWindow) {
  Start();
  const std::string worker = Register(2);
  const int64_t id = Submit([](v1::Search& s) {
    s.set_strategy("bayes");
    s.set_max_candidates(128);  // an eighth: 16 in flight
  });
  int64_t most = Work(worker, 2, id);
  EXPECT_GT(most, static_cast<int64_t>(kProposalsPerDevice));
  EXPECT_LE(most, static_cast<int64_t>(2 * kProposalsPerDevice));
  EXPECT_EQ(Job(id).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(ResultConfigs(id).size(), 128u);
}

TEST_F(CoordinatorSearchTest, AutoRunsASmallSpaceWholeAtOnce) {
  Start();
  const std::string worker = Register(1);
  kernelspec::LoadedSpec loaded = testing::LoadTestSpec(
      "tests/data/spaces/convolution/convolution_replay.yaml", [](v1::KernelSpec& spec) {
        spec.mutable_search()->set_max_candidates(0);
        spec.add_constraints("block_size_x <= 32 and block_size_y <= 2");
      });
  v1::SubmitJobRequest request;
  *request.mutable_spec() = loaded.spec;
  for (const auto& s : loaded.sources) *request.add_sources() = s;
  auto submitted = c_->Submit(request);
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  const int64_t total = Job(submitted->job_id()).candidates_total();
  EXPECT_GT(total, static_cast<int64_t>(kProposalsPerDevice)) << "not asked in windows";
  Work(worker, 1, submitted->job_id());
  v1::Job job = Job(submitted->job_id());
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job.candidates_total(), total);
  EXPECT_EQ(job.stop_reason(), "all " + std::to_string(total) + " valid configurations evaluated");
}

TEST_F(CoordinatorSearchTest, FailuresAreToldAndCountAgainstTheBudget) {
  Start();
  const std::string worker = Register(1);
  const int64_t id = Submit([](v1::Search& s) {
    s.set_strategy("local");
    s.set_max_candidates(20);
  });
  Work(worker, 1, id, v1::RESULT_STATUS_RUNTIME_FAILED);
  v1::Job job = Job(id);
  EXPECT_EQ(job.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(job.candidates_total(), 20);
  EXPECT_EQ(job.candidates_failed(), 20);
  EXPECT_THAT(job.error(), HasSubstr("no candidate succeeded"));
}

TEST_F(CoordinatorSearchTest, MaxSecondsStopsProposingAndTheJobSucceeds) {
  Start();
  const std::string worker = Register(1);
  const int64_t id = Submit([](v1::Search& s) {
    s.set_strategy("evolutionary");
    s.set_max_seconds(1);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(1300));
  Work(worker, 1, id);
  v1::Job job = Job(id);
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.error();
  EXPECT_EQ(job.stop_reason(), "search.max_seconds (1 s) reached");
  EXPECT_EQ(job.candidates_total(), static_cast<int64_t>(kProposalsPerDevice))
      << "only the first window, proposed before the time ran out";
}

TEST_F(CoordinatorSearchTest, PatienceEndsASearchThatStoppedImproving) {
  Start();
  const std::string worker = Register(1);
  const int64_t id = Submit([](v1::Search& s) {
    s.set_strategy("random");
    s.set_patience(15);
    s.set_min_improvement_percent(50);
  });
  Work(worker, 1, id);
  v1::Job job = Job(id);
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.error();
  EXPECT_EQ(job.stop_reason(), "no improvement of 50% in 15 evaluations");
  EXPECT_LT(job.candidates_total(), 200);
}

TEST_F(CoordinatorSearchTest, ARestartedCoordinatorResumesTheSearchWithoutRepeats) {
  Start();
  std::string worker = Register(1);
  const int64_t id = Submit([](v1::Search& s) {
    s.set_strategy("bayes");
    s.set_max_candidates(30);
  });
  Work(worker, 1, id, v1::RESULT_STATUS_OK, /*stop_after=*/12);
  ASSERT_EQ(Job(id).state(), v1::JOB_STATE_RUNNING);
  c_.reset();
  Start();
  worker = Register(1);
  Work(worker, 1, id);
  v1::Job job = Job(id);
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.error();
  EXPECT_EQ(job.candidates_total(), 30);
  EXPECT_EQ(ResultConfigs(id).size(), 30u);
  EXPECT_EQ(job.stop_reason(), "search.max_candidates (30) evaluated");
}

// What `best` and `export` answer is a completed tuning: a newer source's
// job that was cancelled or is still running does not replace the kernel's
// completed one, before or after a restart; once it succeeds, it answers.
TEST_F(CoordinatorSearchTest, BestAnswersFromTheNewestCompletedTuningOnly) {
  Start();
  std::string worker = Register(1);
  auto budget = [](v1::Search& s) {
    s.set_strategy("random");
    s.set_max_candidates(16);
  };
  auto best = [&] {
    v1::QueryBestRequest query;
    query.set_kernel("convolution_replay");
    *query.mutable_problem() = *kernelspec::ParseProblem("image_width=4096,image_height=4096");
    v1::QueryBestResponse answer = c_->QueryBest(query);
    v1::ListBestRequest list;
    list.set_kernel("convolution_replay");
    std::vector<v1::QueryBestResponse> exported = c_->ListBest(list);
    EXPECT_EQ(exported.size(), 1u);
    if (!exported.empty()) {
      EXPECT_EQ(exported[0].fingerprint(), answer.fingerprint());
    }
    return answer;
  };
  const int64_t completed = Submit(budget);
  Work(worker, 1, completed);
  ASSERT_EQ(Job(completed).state(), v1::JOB_STATE_SUCCEEDED);
  const v1::QueryBestResponse answer = best();
  ASSERT_TRUE(answer.found());
  EXPECT_EQ(answer.fingerprint(), Job(completed).fingerprint());
  EXPECT_EQ(answer.job_id(), completed);

  // A newer source with a wider budget, so that it is stopped mid-search.
  auto wider = [](v1::Search& s) {
    s.set_strategy("random");
    s.set_max_candidates(100);
  };
  const int64_t cancelled = Submit(wider, "", "// edited\n");
  Work(worker, 1, cancelled, v1::RESULT_STATUS_OK, /*stop_after=*/4);
  ASSERT_TRUE(c_->Cancel(cancelled).ok());
  ASSERT_NE(Job(cancelled).fingerprint(), answer.fingerprint());
  EXPECT_EQ(best().DebugString(), answer.DebugString());

  const int64_t running = Submit(wider, "", "// edited\n");
  Work(worker, 1, running, v1::RESULT_STATUS_OK, /*stop_after=*/4);
  ASSERT_EQ(Job(running).state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(best().DebugString(), answer.DebugString());
  c_.reset();
  Start();
  EXPECT_EQ(best().DebugString(), answer.DebugString()) << "after a restart";

  worker = Register(1);
  Work(worker, 1, running);
  ASSERT_EQ(Job(running).state(), v1::JOB_STATE_SUCCEEDED);
  const v1::QueryBestResponse newer = best();
  EXPECT_EQ(newer.fingerprint(), Job(running).fingerprint());
  c_.reset();
  Start();
  EXPECT_EQ(best().DebugString(), newer.DebugString()) << "after a restart";
}

// Two kernels of one source (one fingerprint) share results, not answers:
// each answers under its own name, the first as before the second ran, before
// and after a restart, and the second from the first's results it reused.
TEST_F(CoordinatorSearchTest, TwoKernelsOfOneSourceEachKeepTheirOwnBest) {
  Start();
  std::string worker = Register(1);
  auto best = [&](const std::string& kernel) {
    v1::QueryBestRequest query;
    query.set_kernel(kernel);
    query.set_device_class("replay/test");
    *query.mutable_problem() = *kernelspec::ParseProblem("image_width=4096,image_height=4096");
    v1::QueryBestResponse answer = c_->QueryBest(query);
    v1::ListBestRequest list;
    list.set_kernel(kernel);
    std::vector<v1::QueryBestResponse> exported = c_->ListBest(list);
    EXPECT_EQ(exported.size(), 1u) << kernel;
    if (!exported.empty()) {
      EXPECT_EQ(exported[0].DebugString(), answer.DebugString()) << kernel;
    }
    return answer;
  };
  auto random = [](int budget) {
    return [budget](v1::Search& s) {
      s.set_strategy("random");
      s.set_max_candidates(budget);
    };
  };
  const int64_t first = Submit(random(16));
  Work(worker, 1, first);
  ASSERT_EQ(Job(first).state(), v1::JOB_STATE_SUCCEEDED);
  const v1::QueryBestResponse first_answer = best("convolution_replay");
  ASSERT_TRUE(first_answer.found());
  EXPECT_EQ(first_answer.job_id(), first);

  // The copy searches further than the first: it reuses the first's times
  // (its failures it runs again) and measures more.
  int64_t times = 0;
  for (const auto& [key, result] : Results(first)) times += result.first == v1::RESULT_STATUS_OK;
  const int64_t copy = Submit(random(200), "", "", "convolution_copy");
  Work(worker, 1, copy);
  ASSERT_EQ(Job(copy).state(), v1::JOB_STATE_SUCCEEDED);
  ASSERT_EQ(Job(copy).fingerprint(), Job(first).fingerprint());
  EXPECT_EQ(Job(copy).candidates_cached(), times);
  const v1::QueryBestResponse copy_answer = best("convolution_copy");
  ASSERT_TRUE(copy_answer.found());
  EXPECT_EQ(copy_answer.kernel(), "convolution_copy");
  ASSERT_EQ(Job(copy).best_size(), 1);
  EXPECT_EQ(copy_answer.config().DebugString(), Job(copy).best(0).config().DebugString());
  EXPECT_EQ(best("convolution_replay").DebugString(), first_answer.DebugString());

  c_.reset();
  Start();
  EXPECT_EQ(best("convolution_replay").DebugString(), first_answer.DebugString())
      << "after a restart";
  EXPECT_EQ(best("convolution_copy").DebugString(), copy_answer.DebugString()) << "after a restart";

  // A third name that measures nothing new answers from the results it reused.
  worker = Register(1);
  const int64_t again = Submit(random(16), "", "", "convolution_again");
  Work(worker, 1, again);
  ASSERT_EQ(Job(again).state(), v1::JOB_STATE_SUCCEEDED);
  const v1::QueryBestResponse again_answer = best("convolution_again");
  ASSERT_TRUE(again_answer.found());
  EXPECT_EQ(again_answer.kernel(), "convolution_again");
  EXPECT_EQ(Job(again).candidates_cached(), Job(again).candidates_total());
  ASSERT_EQ(Job(again).best_size(), 1);
  EXPECT_EQ(again_answer.config().DebugString(), Job(again).best(0).config().DebugString());
}

TEST_F(CoordinatorSearchTest, AResubmittedJobReusesEveryEarlierResult) {
  Start();
  const std::string worker = Register(1);
  auto budget = [](v1::Search& s) {
    s.set_strategy("local");
    s.set_max_candidates(16);
  };
  const int64_t first = Submit(budget);
  Work(worker, 1, first);
  ASSERT_EQ(Job(first).state(), v1::JOB_STATE_SUCCEEDED);
  const int64_t second = Submit(budget);
  Work(worker, 1, second);
  v1::Job job = Job(second);
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job.candidates_cached(), 16);
  EXPECT_EQ(job.candidates_total(), 16);
  EXPECT_EQ(ResultConfigs(second), ResultConfigs(first));
}

// A failure says as much of the machine it ran on as of the configuration (a
// time limit under load, a compiler missing on a worker): a later job runs it
// again and reuses only the times.
TEST_F(CoordinatorSearchTest, AResubmittedJobRunsEarlierFailuresAgainAndReusesOnlyTheTimes) {
  Start();
  const std::string worker = Register(1);
  auto whole = [](v1::Search& s) { s.set_strategy("exhaustive"); };
  const std::string narrow = "block_size_x == 16 && block_size_y == 4 && tile_size_y == 1";
  const int64_t first = Submit(whole, "", "", "", narrow);
  Work(worker, 1, first, v1::RESULT_STATUS_OK, 1 << 30, [](const std::string& key) {
    return key.find("read_only=1") != key.npos;  // say, under load
  });
  ASSERT_EQ(Job(first).state(), v1::JOB_STATE_SUCCEEDED);
  const auto earlier = Results(first);
  int64_t times = 0, timeouts = 0;
  for (const auto& [key, result] : earlier) {
    times += result.first == v1::RESULT_STATUS_OK;
    timeouts += result.first == v1::RESULT_STATUS_TIMEOUT;
  }
  ASSERT_GT(times, 0);
  ASSERT_GT(timeouts, 0);

  const int64_t second = Submit(whole, "", "", "", narrow);
  EXPECT_EQ(Job(second).candidates_cached(), times) << "at once, when bound";
  Work(worker, 1, second);
  const v1::Job job = Job(second);
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job.candidates_cached(), times);
  EXPECT_EQ(job.candidates_total(), static_cast<int64_t>(earlier.size()));
  const auto again = Results(second);
  ASSERT_EQ(again.size(), earlier.size());
  for (const auto& [key, result] : earlier) {
    ASSERT_TRUE(again.count(key)) << key;
    const auto [status, cached] = again.at(key);
    if (result.first == v1::RESULT_STATUS_OK) {
      EXPECT_TRUE(cached) << key;
      EXPECT_EQ(status, v1::RESULT_STATUS_OK) << key;
    } else {
      EXPECT_FALSE(cached) << key << " failed in the first job: run again";
      EXPECT_NE(status, v1::RESULT_STATUS_TIMEOUT) << key;
    }
  }
}

// Tolerances decide whether a result is right: a job checking more strictly
// reuses nothing checked more loosely (a wrong result would win), and jobs
// checking alike go on sharing their times.
TEST_F(CoordinatorSearchTest, EarlierResultsAreReusedOnlyUnderTheToleranceTheyWereCheckedWith) {
  Start();
  const std::string worker = Register(1);
  auto budget = [](v1::Search& s) {
    s.set_strategy("local");
    s.set_max_candidates(16);
  };
  auto tolerance = [](double t) {
    return [t](v1::KernelSpec& spec) {
      spec.mutable_verify()->set_rtol(t);
      spec.mutable_verify()->set_atol(t);
    };
  };
  spec_edit_ = tolerance(1e-2);
  const int64_t loose = Submit(budget);
  Work(worker, 1, loose);
  ASSERT_EQ(Job(loose).state(), v1::JOB_STATE_SUCCEEDED);
  int64_t times = 0;
  for (const auto& [key, result] : Results(loose)) times += result.first == v1::RESULT_STATUS_OK;
  ASSERT_GT(times, 0);

  spec_edit_ = tolerance(1e-6);
  const int64_t strict = Submit(budget);
  EXPECT_NE(Job(strict).fingerprint(), Job(loose).fingerprint());
  EXPECT_EQ(Job(strict).candidates_cached(), 0);
  Work(worker, 1, strict);
  EXPECT_EQ(Job(strict).candidates_cached(), 0);

  spec_edit_ = tolerance(1e-2);
  const int64_t again = Submit(budget);
  EXPECT_EQ(Job(again).fingerprint(), Job(loose).fingerprint());
  Work(worker, 1, again);
  EXPECT_EQ(Job(again).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(Job(again).candidates_cached(), times);
}

// A job narrowed by a constraint reuses only the earlier results it admits: the others are
// configurations its user excluded, and must not become its best.
TEST_F(CoordinatorSearchTest, AJobReusesOnlyTheEarlierResultsItsConstraintsAdmit) {
  Start();
  const std::string worker = Register(1);
  const int64_t first = Submit([](v1::Search& s) {
    s.set_strategy("random");
    s.set_max_candidates(40);
    s.set_seed(5);
  });
  Work(worker, 1, first);
  ASSERT_EQ(Job(first).state(), v1::JOB_STATE_SUCCEEDED);
  size_t admitted = 0;
  for (const std::string& key : ResultConfigs(first))
    admitted += key.find("read_only=1") != key.npos;
  ASSERT_GT(admitted, 0u);
  ASSERT_LT(admitted, 40u);
  // Local search walks the whole constrained space; random samples it (and reuses what the
  // constraints admit outside its sample too).
  for (const std::string strategy : {"local", "random"}) {
    const int64_t narrowed = Submit(
        [&](v1::Search& s) {
          s.set_strategy(strategy);
          s.set_max_candidates(8);
        },
        "", "", "", "read_only == 1");
    Work(worker, 1, narrowed);
    const v1::Job job = Job(narrowed);
    EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << strategy;
    EXPECT_GE(job.candidates_cached(), static_cast<int64_t>(admitted)) << strategy;
    for (const std::string& key : ResultConfigs(narrowed)) {
      EXPECT_THAT(key, HasSubstr("read_only=1")) << strategy;
    }
    ASSERT_EQ(job.best_size(), 1);
    EXPECT_THAT(kernelspec::ConfigKey(job.best(0).config()), HasSubstr("read_only=1"));
  }
}

}  // namespace
}  // namespace tf::coordinator

namespace tf::coordinator {
namespace {

TEST_F(CoordinatorSearchTest, ANewJobStartsFromTheBestOfTheKernelOnAnotherDeviceClass) {
  Start();
  const std::string first_worker = Register(1, "replay/test");
  auto budget = [](v1::Search& s) {
    s.set_strategy("bayes");
    s.set_max_candidates(16);
  };
  const int64_t first = Submit(budget, "replay/test");
  Work(first_worker, 1, first);
  v1::Job done = Job(first);
  ASSERT_EQ(done.state(), v1::JOB_STATE_SUCCEEDED);
  ASSERT_EQ(done.best_size(), 1);
  const std::string winner = kernelspec::ConfigKey(done.best(0).config());

  const std::string second_worker = Register(1, "replay/other");
  const int64_t second = Submit(budget, "replay/other");
  EXPECT_EQ(Job(second).device_class(), "replay/other");
  EXPECT_EQ(FirstCandidate(second), winner);
  EXPECT_EQ(Job(second).candidates_cached(), 0) << "another device class: nothing to reuse";
}

// Two jobs of the kernel searching at once on two device classes: the first's
// best so far is among what the second evaluates (bayes, 40 of 4,362: it
// would not find it alone).
TEST_F(CoordinatorSearchTest, AJobsNewBestIsOfferedToTheKernelsJobOnAnotherDeviceClass) {
  Start();
  const std::string first_worker = Register(1, "replay/test");
  const std::string second_worker = Register(1, "replay/other");
  auto budget = [](uint64_t seed) {
    return [seed](v1::Search& s) {
      s.set_strategy("bayes");
      s.set_max_candidates(40);
      s.set_seed(seed);  // the same seed would propose the same configurations
    };
  };
  const int64_t first = Submit(budget(1), "replay/test");
  const int64_t second = Submit(budget(2), "replay/other");
  ASSERT_EQ(Job(second).state(), v1::JOB_STATE_RUNNING);
  Work(first_worker, 1, first, v1::RESULT_STATUS_OK, /*stop_after=*/8);
  std::string best;
  for (const std::string& key : ResultConfigs(first)) {
    auto time = times_->find(key);
    if (time != times_->end() && (best.empty() || time->second < times_->at(best))) best = key;
  }
  ASSERT_FALSE(best.empty());
  Work(second_worker, 1, second);
  ASSERT_EQ(Job(second).state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_TRUE(ResultConfigs(second).contains(best)) << best;
}

}  // namespace
}  // namespace tf::coordinator

namespace tf::coordinator {
namespace {

TEST_F(CoordinatorSearchTest, LosersOverTheEarlyStopFactorAreRecordedAsSuchNotAsFailures) {
  Start();
  const std::string worker = Register(1);
  early_stop_ = 1.5;
  const int64_t id = Submit([](v1::Search& s) {
    s.set_strategy("random");
    s.set_max_candidates(60);
    s.set_early_stop(1.5);
  });
  Work(worker, 1, id);
  v1::Job job = Job(id);
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.error();
  EXPECT_GT(early_stopped_, 0) << "random picks in this space are often 1.5x the best";
  auto results = c_->ListResults(id);
  ASSERT_TRUE(results.ok());
  int stopped = 0, failed = 0;
  for (const auto& r : *results) {
    stopped += r.status() == v1::RESULT_STATUS_EARLY_STOPPED;
    failed += r.status() != v1::RESULT_STATUS_OK && r.status() != v1::RESULT_STATUS_EARLY_STOPPED;
  }
  EXPECT_EQ(stopped, early_stopped_);
  EXPECT_EQ(job.candidates_failed(), failed) << "early-stopped candidates are not failures";
  ASSERT_EQ(job.best_size(), 1);
  EXPECT_EQ(job.best(0).timing().median_ns(), best_ns_);
}

// A job is bound under the coordinator's lock. A random sample of a million
// from a space too large to walk, whose valid configurations are rare, drew a
// billion times there: minutes in which Submit, heartbeats and every other
// call waited. The sample is now bounded in draws and comes back short.
TEST_F(CoordinatorSearchTest, ARareSampleOfAHugeSpaceIsBoundWithoutHoldingTheCoordinator) {
  Start();
  const std::string worker = Register(1);
  kernelspec::LoadedSpec loaded = testing::LoadTestSpec(
      "tests/data/spaces/convolution/convolution_replay.yaml", [&](v1::KernelSpec& spec) {
        // 640 million combinations, about one in 250,000 valid.
        v1::Param* x = spec.mutable_params(0);
        x->clear_values();
        x->mutable_range()->set_start(1);
        x->mutable_range()->set_stop(1'000'000);
        x->mutable_range()->set_step(1);
        spec.add_constraints("block_size_x % 100000 == 7");
        spec.mutable_search()->set_strategy("random");
        spec.mutable_search()->set_max_candidates(1'000'000);
      });
  v1::SubmitJobRequest request;
  *request.mutable_spec() = loaded.spec;
  for (const auto& s : loaded.sources) *request.add_sources() = s;
  const auto start = std::chrono::steady_clock::now();
  auto job = c_->Submit(request);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_LT(seconds, 30) << "binding the job held the coordinator";
  v1::Job bound = Job(job->job_id());
  EXPECT_EQ(bound.state(), v1::JOB_STATE_RUNNING) << bound.error();
  EXPECT_GT(bound.candidates_total(), 0);
  EXPECT_LT(bound.candidates_total(), 1'000'000) << "short: valid configurations are rare";
}

}  // namespace
}  // namespace tf::coordinator
