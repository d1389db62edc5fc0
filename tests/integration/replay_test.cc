// Whole jobs on recorded hardware: a real coordinator and a real worker
// process whose device replays a recorded convolution space
// (--devices replay:FILE), searched with `auto` on a budget; and a job of two
// problems on a folder of recordings, one per problem (--devices
// replay:FOLDER).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "client/client.h"
#include "common/files.h"
#include "kernelspec/config.h"
#include "search/evaluate.h"
#include "search/recorded_space.h"
#include "tests/test_util.h"

namespace tf::testing {
namespace {

namespace v1 = ::tunefleet::v1;
using std::chrono::seconds;
using ::testing::HasSubstr;

const char* const kSpec = "tests/data/spaces/convolution/convolution_replay.yaml";

class ReplayTest : public ::testing::Test {
 protected:
  // `dir`: the fleet's state, dir_ unless given.
  void StartFleet(const std::string& recording, const std::string& speed = "0",
                  std::string dir = "") {
    if (dir.empty()) dir = dir_.path();
    coordinator_ = std::make_unique<CoordinatorProcess>(dir);
    coordinator_->Start();
    worker_ = StartWorker(coordinator_->address(), dir, "replay-worker",
                          "replay:" + SourcePath(recording), {"--replay-speed", speed});
    auto client = client::Client::Connect(coordinator_->address(), {});
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(*client);
  }

  // Runs `spec` as a job to its end and lists its results; a job that does not succeed fails
  // the test with its error and both processes' logs.
  v1::Job RunJob(const kernelspec::LoadedSpec& spec, seconds timeout,
                 std::vector<v1::CandidateResult>* results) {
    v1::Job job = WaitForJobEnd(*client_, SubmitSpec(*client_, spec).job_id(), timeout);
    EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.error() << "\n"
                                                    << coordinator_->Log() << worker_->Log();
    auto listed = client_->ListResults(job.job_id());
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    if (listed.ok()) *results = *std::move(listed);
    return job;
  }

  TempDir dir_;
  std::unique_ptr<CoordinatorProcess> coordinator_;
  std::unique_ptr<Process> worker_;
  std::unique_ptr<client::Client> client_;
};

// One seed says little about a randomised search: on the A100 recording,
// auto with a budget of 100 either reaches the optimum's region or settles
// in a deceptive local optimum near 0.65 of it (three coordinated changes
// away from the best), by seed and by the order in which results come back.
// Seed 1 alone gave 0.656, below random sampling's expected 0.724, while 20
// seeds averaged 0.849 through the service and 0.854 offline (search_eval)
// with auto as it then was (the model for all 100 evaluations):
// the service searches as well as the library does. So the job runs with 10
// seeds, each on a fresh fleet (a second job would reuse the first one's
// results), and their mean is compared with random sampling's expectation
// (offline, auto's mean is 0.866 on this space; one seed's spread is about
// 0.16, so 0.866 is about 2.8 standard deviations of a mean of 10 above
// random).
TEST_F(ReplayTest, AutoWithABudgetOf100BeatsRandomSamplingAndRecordsEachCandidateOnce) {
  const std::string file = "tests/data/spaces/convolution/A100_T4.json.gz";
  auto recording = search::ReadRecordedSpace(SourcePath(file));
  ASSERT_TRUE(recording.ok()) << recording.status().ToString();
  std::map<std::string, const search::RecordedResult*> recorded;
  double optimum_ns = 1e300;
  for (search::ConfigId id = 0; id < recording->space.size(); ++id) {
    const search::RecordedResult& r = recording->results[id];
    recorded[recording->space.Describe(id)] = &r;
    if (r.outcome == search::Outcome::kOk) optimum_ns = std::min(optimum_ns, r.time_ms * 1e6);
  }
  const double random = search::RandomFractionCurve(*recording, 100).back();

  constexpr int kSeeds = 10;
  double sum = 0;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const std::string dir = dir_ / ("seed" + std::to_string(seed));
    ASSERT_TRUE(std::filesystem::create_directory(dir)) << dir;
    StartFleet(file, "0", dir);
    kernelspec::LoadedSpec spec =
        LoadTestSpec(kSpec, [&](v1::KernelSpec& s) { s.mutable_search()->set_seed(seed); });
    ASSERT_EQ(spec.spec.search().strategy(), "auto");
    ASSERT_EQ(spec.spec.search().max_candidates(), 100);
    std::vector<v1::CandidateResult> results;
    v1::Job job = RunJob(spec, seconds(300), &results);
    ASSERT_FALSE(HasFailure());
    EXPECT_EQ(job.stop_reason(), "search.max_candidates (100) evaluated");
    EXPECT_EQ(job.candidates_total(), 100);
    EXPECT_THAT(job.device_class(), HasSubstr("replay/"));
    ExpectExactlyOneResultPerCandidate(coordinator_->db_path(), job.job_id());

    // Each result is the recording's: its time, or its failure.
    ASSERT_EQ(results.size(), 100u);
    std::set<std::string> configs;
    for (const v1::CandidateResult& r : results) {
      const std::string key = kernelspec::ConfigKey(r.config());
      configs.insert(key);
      auto it = recorded.find(key);
      ASSERT_NE(it, recorded.end()) << key << " is outside the recorded space";
      if (it->second->outcome == search::Outcome::kOk) {
        EXPECT_EQ(r.status(), v1::RESULT_STATUS_OK) << key << ": " << r.error();
        EXPECT_DOUBLE_EQ(r.timing().median_ns(), it->second->time_ms * 1e6) << key;
      } else {
        EXPECT_NE(r.status(), v1::RESULT_STATUS_OK) << key;
        EXPECT_THAT(r.error(), HasSubstr("recorded on "));
      }
    }
    EXPECT_EQ(configs.size(), 100u) << "a configuration evaluated twice";

    ASSERT_EQ(job.best_size(), 1);
    const double fraction = optimum_ns / job.best(0).timing().median_ns();
    std::printf("auto, seed %d, 100 evaluations: %.3f of the optimum\n", seed, fraction);
    sum += fraction;
    client_.reset();
    worker_.reset();
    coordinator_.reset();
  }

  // The search must beat what 100 uniform draws are expected to find.
  std::printf("auto, %d seeds: mean %.3f of the optimum (random sampling: %.3f expected)\n", kSeeds,
              sum / kSeeds, random);
  EXPECT_GT(sum / kSeeds, random);
}

TEST_F(ReplayTest, AConfigurationOutsideTheRecordingIsAnErrorResult) {
  StartFleet("tests/data/spaces/convolution/A100_kerneltuner_cache.json.gz", "0.001");
  kernelspec::LoadedSpec spec = LoadTestSpec(kSpec, [](v1::KernelSpec& s) {
    // block_size_x=17 was never recorded; 16 was.
    s.mutable_params(0)->clear_values();
    *s.mutable_params(0)->add_values() = kernelspec::IntValue(16);
    *s.mutable_params(0)->add_values() = kernelspec::IntValue(17);
    s.add_constraints("block_size_y == 1 and tile_size_x == 1 and tile_size_y == 1");
    s.mutable_search()->set_strategy("exhaustive");
    s.mutable_search()->set_max_candidates(0);
  });
  std::vector<v1::CandidateResult> results;
  v1::Job job = RunJob(spec, seconds(120), &results);
  ASSERT_FALSE(HasFailure());
  int outside = 0, inside = 0;
  for (const v1::CandidateResult& r : results) {
    if (r.config().settings(0).value().int_value() == 17) {
      ++outside;
      EXPECT_EQ(r.status(), v1::RESULT_STATUS_RUNTIME_FAILED);
      EXPECT_THAT(r.error(), HasSubstr("block_size_x=17 was never recorded"));
    } else {
      ++inside;
      EXPECT_THAT(r.error(), ::testing::Not(HasSubstr("outside the space recorded")));
    }
  }
  EXPECT_GT(outside, 0);
  EXPECT_GT(inside, 0);
  EXPECT_EQ(job.stop_reason(),
            "all " + std::to_string(inside + outside) + " valid configurations evaluated");
}

// Replayed as a device times: a candidate whose recorded time is over the early-stop factor
// times the best so far is stopped early (its estimate kept, no failure), and the winner never.
TEST_F(ReplayTest, AnEarlyStopFactorStopsRecordedLosersAndNeverTheWinner) {
  StartFleet("tests/data/spaces/convolution/A100_kerneltuner_cache.json.gz");
  kernelspec::LoadedSpec spec = LoadTestSpec(kSpec, [](v1::KernelSpec& s) {
    s.mutable_search()->set_strategy("random");
    s.mutable_search()->set_max_candidates(60);
    s.mutable_search()->set_seed(3);
    s.mutable_search()->set_early_stop(1.2);
  });
  std::vector<v1::CandidateResult> results;
  v1::Job job = RunJob(spec, seconds(120), &results);
  ASSERT_FALSE(HasFailure());
  int stopped = 0, failed = 0;
  double fastest_ok = 1e300, fastest_stopped = 1e300;
  for (const v1::CandidateResult& r : results) {
    if (r.status() == v1::RESULT_STATUS_EARLY_STOPPED) {
      ++stopped;
      EXPECT_THAT(r.error(), HasSubstr("over the early-stop threshold"));
      fastest_stopped = std::min(fastest_stopped, r.timing().median_ns());
    } else if (r.status() == v1::RESULT_STATUS_OK) {
      fastest_ok = std::min(fastest_ok, r.timing().median_ns());
    } else {
      ++failed;
    }
  }
  EXPECT_GT(stopped, 10);
  EXPECT_GT(fastest_stopped, fastest_ok);
  EXPECT_EQ(job.candidates_failed(), failed);
}

// The H100's Hopper GEMM recordings name their problems; as one device, each problem's
// candidates are answered from its own recording.
TEST_F(ReplayTest, AFolderAnswersEachProblemFromItsOwnRecording) {
  const std::string folder = "tests/data/spaces/hopper_gemm/h100_2026-12-05/";
  std::map<std::string, std::map<std::string, const search::RecordedResult*>> recorded;
  std::vector<search::RecordedSpace> recordings;
  for (const char* shape : {"1024x1024x1024", "3000x5000x2000"}) {
    auto recording =
        search::ReadRecordedSpace(SourcePath(folder + "H100_f16_" + shape + "_cache.json.gz"));
    ASSERT_TRUE(recording.ok()) << recording.status().ToString();
    recordings.push_back(*std::move(recording));
  }
  for (const search::RecordedSpace& r : recordings) {
    for (search::ConfigId id = 0; id < r.space.size(); ++id) {
      recorded[r.problem][r.space.Describe(id)] = &r.results[id];
    }
  }
  StartFleet(folder);
  kernelspec::LoadedSpec spec =
      LoadTestSpec(folder + "hopper_gemm_replay.yaml", [](v1::KernelSpec& s) {
        v1::Problem small;
        for (const auto& [name, value] : {std::pair{"M", 1024}, {"N", 1024}, {"K", 1024}}) {
          v1::ProblemVar* var = small.add_vars();
          var->set_name(name);
          var->set_value(value);
        }
        *s.add_problems() = small;
        s.mutable_search()->set_strategy("auto");
        s.mutable_search()->set_max_candidates(24);
      });
  ASSERT_EQ(spec.spec.problems_size(), 2);
  std::vector<v1::CandidateResult> results;
  const v1::Job job = RunJob(spec, seconds(300), &results);
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(results.size(), 48u);
  std::map<std::string, int> per_problem;
  for (const v1::CandidateResult& r : results) {
    const std::string problem = kernelspec::ProblemText(r.problem());
    const std::string key = kernelspec::ConfigKey(r.config());
    ++per_problem[problem];
    ASSERT_TRUE(recorded.count(problem)) << problem;
    auto it = recorded[problem].find(key);
    ASSERT_NE(it, recorded[problem].end()) << key << " is outside " << problem << "'s recording";
    if (it->second->outcome == search::Outcome::kOk) {
      EXPECT_EQ(r.status(), v1::RESULT_STATUS_OK) << key << ": " << r.error();
      EXPECT_DOUBLE_EQ(r.timing().median_ns(), it->second->time_ms * 1e6) << problem << " " << key;
    } else {
      EXPECT_THAT(r.error(), HasSubstr(problem)) << "a failure names its recording's problem";
    }
  }
  EXPECT_EQ(per_problem, (std::map<std::string, int>{{"M=1024,N=1024,K=1024", 24},
                                                     {"M=3000,N=5000,K=2000", 24}}));

  // The job's T4 export holds both problems. Imported as it is, each is a job of its own that
  // answers `best` with this job's winner; with --problem (its variables in any order), one.
  const std::string address = coordinator_->address();
  ProcessResult exported =
      RunCli(address, {"results", std::to_string(job.job_id()), "--format", "t4"});
  ASSERT_TRUE(exported.success()) << exported.output;
  const std::string file = dir_ / "job_T4.json";
  ASSERT_TRUE(WriteFileAtomic(file, exported.output).ok());
  auto import = [&](const std::string& device_class, std::vector<std::string> more) {
    std::vector<std::string> args = {"import",         "results",        file,        "--kernel",
                                     spec.spec.name(), "--device-class", device_class};
    args.insert(args.end(), more.begin(), more.end());
    return RunCli(address, args);
  };
  ProcessResult both = import("exported", {});
  ASSERT_TRUE(both.success()) << both.output;
  EXPECT_THAT(both.output, HasSubstr("for M=1024,N=1024,K=1024 on exported"));
  EXPECT_THAT(both.output, HasSubstr("for M=3000,N=5000,K=2000 on exported"));
  ASSERT_EQ(job.best_size(), 2);
  for (const v1::BestEntry& winner : job.best()) {
    const std::string problem = kernelspec::ProblemText(winner.problem());
    ProcessResult best =
        RunCli(address, {"best", spec.spec.name(), "--problem", problem, "--device", "exported"});
    ASSERT_TRUE(best.success()) << best.output;
    EXPECT_THAT(best.output, HasSubstr("config:   " + kernelspec::ConfigKey(winner.config())))
        << problem;
  }
  ProcessResult one = import("one", {"--problem", "K=2000,M=3000,N=5000"});
  ASSERT_TRUE(one.success()) << one.output;
  EXPECT_THAT(one.output, HasSubstr("for K=2000,M=3000,N=5000 on one"));
  EXPECT_THAT(one.output, ::testing::Not(HasSubstr("M=1024")));
  ProcessResult none = import("none", {"--problem", "M=1,N=1,K=1"});
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_THAT(none.output, HasSubstr("job_T4.json records M=1024,N=1024,K=1024; M=3000,N=5000,"
                                     "K=2000, not --problem M=1,N=1,K=1"));
}

// A recording that names its problem answers no other: the job's other problem fails, naming
// what the device holds, instead of being answered with another shape's times.
TEST_F(ReplayTest, ARecordingAnswersOnlyTheProblemItNames) {
  StartFleet("tests/data/spaces/hopper_gemm/h100_2026-12-05/H100_f16_3000x5000x2000_cache.json.gz");
  kernelspec::LoadedSpec spec =
      LoadTestSpec("tests/data/spaces/hopper_gemm/h100_2026-12-05/hopper_gemm_replay.yaml",
                   [](v1::KernelSpec& s) {
                     v1::Problem other = s.problems(0);
                     other.mutable_vars(0)->set_value(1024);
                     *s.add_problems() = other;
                     s.mutable_search()->set_strategy("random");
                     s.mutable_search()->set_max_candidates(4);
                   });
  std::vector<v1::CandidateResult> results;
  const v1::Job job = RunJob(spec, seconds(120), &results);
  ASSERT_FALSE(HasFailure());
  // The job succeeded for one problem; the other is named, not left out.
  ASSERT_EQ(job.best_size(), 1);
  ASSERT_EQ(job.problems_without_success_size(), 1);
  EXPECT_EQ(kernelspec::ProblemText(job.problems_without_success(0)), "M=1024,N=5000,K=2000");
  const ProcessResult status =
      RunCli(coordinator_->address(), {"status", std::to_string(job.job_id())});
  EXPECT_THAT(status.output, HasSubstr("M=1024,N=5000,K=2000: no candidate succeeded (tunefleet "
                                       "results " +
                                       std::to_string(job.job_id()) + " says why)"));
  int answered = 0, refused = 0;
  for (const v1::CandidateResult& r : results) {
    if (r.problem().vars(0).value() == 3000) {
      answered += r.status() != v1::RESULT_STATUS_RUNTIME_FAILED ||
                  r.error().find("no recording") == std::string::npos;
    } else {
      ++refused;
      EXPECT_EQ(r.status(), v1::RESULT_STATUS_RUNTIME_FAILED);
      EXPECT_THAT(r.error(), HasSubstr("no recording of M=1024,N=5000,K=2000 on this replay device "
                                       "(recorded: M=3000,N=5000,K=2000)"));
    }
  }
  EXPECT_EQ(answered, 4);
  EXPECT_EQ(refused, 4);
}

}  // namespace
}  // namespace tf::testing
