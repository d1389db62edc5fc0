// The runner end to end: a real artifact built with g++, run in-process for
// verification and timing, and through the real tunefleet-runner child for
// fault containment (crash, hang, wrong answer), as the worker runs it.
#include "runner/runner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "common/files.h"
#include "common/sanitizer.h"
#include "common/subprocess.h"
#include "runner/benchmark.h"
#include "runner/host_buffers.h"
#include "runner/lease_artifacts.h"
#include "tests/test_util.h"
#include "vendors/cpu/cpu_devices.h"
#include "worker/runner_supervisor.h"

namespace tf::runner {
namespace {

// Y = 2 * X over N elements, with faulty variants.
constexpr const char* kKernelSource = R"(
#include <cstdint>
#include <cstdlib>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
static int* volatile null_pointer = nullptr;
static void scale(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = 2 * x[i];
}
extern "C" void tf_reference(void* const* b, const int64_t* s) {
  if (s[0] == 13) *null_pointer = 1;  // a problem whose reference crashes
  scale(static_cast<const float*>(b[0]), static_cast<float*>(b[1]), s[0]);
}
extern "C" void good(void* const* b, const int64_t* s) {
  scale(static_cast<const float*>(b[0]), static_cast<float*>(b[1]), s[0]);
}
extern "C" void slow(void* const* b, const int64_t* s) {  // 64 times the work
  for (int k = 0; k < 64; ++k) {
    scale(static_cast<const float*>(b[0]), static_cast<float*>(b[1]), s[0]);
    asm volatile("" ::: "memory");
  }
}
extern "C" void off_by_one_at_7(void* const* b, const int64_t* s) {
  scale(static_cast<const float*>(b[0]), static_cast<float*>(b[1]), s[0]);
  static_cast<float*>(b[1])[7] += 1;
}
extern "C" void writes_half(void* const* b, const int64_t* s) {
  scale(static_cast<const float*>(b[0]), static_cast<float*>(b[1]), s[0] / 2);
}
extern "C" void zeroes_its_input(void* const* b, const int64_t* s) {
  scale(static_cast<const float*>(b[0]), static_cast<float*>(b[1]), s[0]);
  for (int64_t i = 0; i < s[0]; ++i) static_cast<float*>(b[0])[i] = 0;
}
extern "C" void crash(void* const*, const int64_t*) { *null_pointer = 1; }
// Kernels that reach outside their box: each computes the right answer only
// when its forbidden step succeeded, so a refused step shows as a wrong result.
#define SCALE_IF(ok) if (ok) scale(static_cast<const float*>(b[0]), static_cast<float*>(b[1]), s[0])
extern "C" void opens_socket(void* const* b, const int64_t* s) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  SCALE_IF(fd >= 0);
  if (fd >= 0) close(fd);
}
extern "C" void forks(void* const* b, const int64_t* s) {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  if (pid > 0) waitpid(pid, nullptr, 0);
  SCALE_IF(pid > 0);
}
extern "C" void runs_a_shell(void* const* b, const int64_t* s) {
  SCALE_IF(system("exit 0") == 0);
}
extern "C" void writes_tmp(void* const* b, const int64_t* s) {
  int fd = open("/tmp/tf_runner_test_escape", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  SCALE_IF(fd >= 0 && write(fd, "x", 1) == 1);
  if (fd >= 0) close(fd);
}
extern "C" void reads_passwd(void* const* b, const int64_t* s) {
  int fd = open("/etc/passwd", O_RDONLY);
  SCALE_IF(fd >= 0);
  if (fd >= 0) close(fd);
}
extern "C" void allocates_2g(void* const* b, const int64_t* s) {
  void* p = malloc(size_t{2} << 30);
  SCALE_IF(p != nullptr);
  free(p);
}
extern "C" void writes_own_dir(void* const* b, const int64_t* s) {
  int fd = open("scratch", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  SCALE_IF(fd >= 0 && write(fd, "x", 1) == 1);
  if (fd >= 0) close(fd);
}
extern "C" void hang(void* const*, const int64_t*) { for (;;) asm volatile(""); }
)";

class RunnerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(std::filesystem::temp_directory_path() /
                           ("runner_test_" + std::to_string(getpid())));
    ASSERT_TRUE(MakeDirs(*dir_).ok());
    ASSERT_TRUE(WriteFileAtomic(*dir_ + "/kernel.cpp", kKernelSource).ok());
    auto built = RunProcess(
        {"g++", "-O1", "-shared", "-fPIC", "-o", *dir_ + "/kernel.so", *dir_ + "/kernel.cpp"}, {});
    ASSERT_TRUE(built.ok() && built->success()) << (built.ok() ? built->output : "");
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }

  static std::string ArtifactPath() { return *dir_ + "/kernel.so"; }

  static v1::Lease MakeLease(const std::vector<std::pair<std::string, int64_t>>& symbol_and_n) {
    v1::Lease lease;
    lease.set_lease_id(1);
    lease.set_reference_symbol("tf_reference");
    v1::KernelSpec& spec = *lease.mutable_spec();
    spec.set_name("scale");
    spec.add_scalars("N");
    v1::Buffer* x = spec.add_buffers();
    x->set_name("X");
    x->set_dtype("f32");
    x->set_count("N");
    v1::Buffer* y = spec.add_buffers();
    y->set_name("Y");
    y->set_dtype("f32");
    y->set_count("N");
    y->set_output(true);
    spec.mutable_verify()->set_rtol(1e-5);
    spec.mutable_verify()->set_atol(1e-6);
    spec.mutable_objective()->set_flops("N");
    v1::BenchmarkSettings& bench = *spec.mutable_benchmark();
    bench.set_warmup_ms(0.1);
    bench.set_min_time_ms(1);
    bench.set_min_repeats(3);
    bench.set_max_repeats(50);
    bench.set_flush_l2(true);
    bench.set_timeout_s(1);
    int64_t id = 1;
    for (const auto& [symbol, n] : symbol_and_n) {
      v1::LeasedCandidate* c = lease.add_candidates();
      c->set_candidate_id(id++);
      c->set_symbol(symbol);
      v1::ProblemVar* var = c->mutable_problem()->add_vars();
      var->set_name("N");
      var->set_value(n);
    }
    return lease;
  }

  static Device CpuDevice() {
    auto devices = cpu::DiscoverCpuDevices({1}, 0, "");
    EXPECT_TRUE(devices.ok()) << devices.status().ToString();
    return devices->front();
  }

  // Runs in a fresh runner, in-process; returns the events.
  static std::vector<v1::RunnerEvent> RunInProcess(const v1::Lease& lease,
                                                   const std::string& artifact) {
    Runner runner;
    return RunIn(runner, lease, artifact);
  }

  // Runs in `runner`, which may have run earlier leases; returns the events.
  static std::vector<v1::RunnerEvent> RunIn(Runner& runner, const v1::Lease& lease,
                                            const std::string& artifact = ArtifactPath(),
                                            const v1::DeviceInfo& device = CpuDevice().info) {
    v1::RunnerRequest request;
    *request.mutable_lease() = lease;
    request.add_artifact_paths(artifact);
    *request.mutable_device() = device;
    std::vector<v1::RunnerEvent> events;
    Status status = runner.Run(request, [&](const v1::RunnerEvent& e) {
      events.push_back(e);
      return Status::Ok();
    });
    EXPECT_TRUE(status.ok()) << status.ToString();
    return events;
  }

  static std::map<int64_t, v1::CandidateResult> Results(
      const std::vector<v1::RunnerEvent>& events) {
    std::map<int64_t, v1::CandidateResult> results;
    for (const auto& e : events) {
      if (e.has_result()) {
        EXPECT_TRUE(results.emplace(e.result().candidate_id(), e.result()).second)
            << "two results for candidate " << e.result().candidate_id();
      }
    }
    return results;
  }

  // The problems whose preparation was announced, in order.
  static std::vector<std::string> PreparedProblems(const std::vector<v1::RunnerEvent>& events) {
    std::vector<std::string> keys;
    for (const auto& e : events) {
      if (e.has_started() && e.started().has_problem_key())
        keys.push_back(e.started().problem_key());
    }
    return keys;
  }

  static std::map<int64_t, v1::CandidateResult> Supervise(worker::RunnerSupervisor& supervisor,
                                                          const v1::Lease& lease) {
    return tf::testing::RunLease(supervisor, lease, ArtifactPath());
  }

  static std::string RunnerPath() { return TF_BINARY_DIR "/bin/tunefleet-runner"; }

  static std::string* dir_;
};

std::string* RunnerTest::dir_ = nullptr;

TEST_F(RunnerTest, CorrectCandidateIsTimedWithSpreadAndThroughput) {
  auto results = Results(RunInProcess(MakeLease({{"good", 4096}}), ArtifactPath()));
  ASSERT_EQ(results.size(), 1u);
  const v1::CandidateResult& r = results[1];
  EXPECT_EQ(r.status(), v1::RESULT_STATUS_OK) << r.error();
  EXPECT_EQ(r.max_abs_error(), 0);
  const v1::TimingStats& t = r.timing();
  EXPECT_GE(t.repeats(), 3);
  EXPECT_LE(t.repeats(), 50);
  EXPECT_GT(t.min_ns(), 0);
  EXPECT_LE(t.min_ns(), t.p10_ns());
  EXPECT_LE(t.p10_ns(), t.median_ns());
  EXPECT_LE(t.median_ns(), t.p90_ns());
  EXPECT_DOUBLE_EQ(t.gflops(), 4096 / t.median_ns());
}

TEST_F(RunnerTest, ALoserOverTheEarlyStopThresholdKeepsItsShortEstimate) {
  v1::Lease lease = MakeLease({{"good", 4096}, {"good", 4096}, {"off_by_one_at_7", 64}});
  lease.mutable_candidates(0)->set_early_stop_ns(1);     // anything is slower than 1 ns
  lease.mutable_candidates(1)->set_early_stop_ns(1e12);  // nothing is slower than 1000 s
  lease.mutable_candidates(2)->set_early_stop_ns(1);     // but it must be correct first
  auto results = Results(RunInProcess(lease, ArtifactPath()));
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[1].status(), v1::RESULT_STATUS_EARLY_STOPPED);
  EXPECT_EQ(results[1].timing().repeats(), 5) << "the estimate's runs";
  EXPECT_GT(results[1].timing().median_ns(), 1);
  EXPECT_DOUBLE_EQ(results[1].timing().gflops(), 4096 / results[1].timing().median_ns());
  EXPECT_NE(results[1].error().find("over the early-stop threshold 1 ns"), std::string::npos)
      << results[1].error();
  EXPECT_EQ(results[2].status(), v1::RESULT_STATUS_OK) << results[2].error();
  EXPECT_GE(results[2].timing().repeats(), 3);
  EXPECT_EQ(results[3].status(), v1::RESULT_STATUS_WRONG_RESULT);
}

// Candidates leased together before any result carry no threshold from the
// coordinator; the runner's own best on the problem stops the later losers.
TEST_F(RunnerTest, EarlyStopUsesTheBestTimedOnThisDeviceSoFar) {
  v1::Lease lease = MakeLease({{"slow", 4096}, {"good", 4096}, {"slow", 4096}, {"good", 4096}});
  lease.mutable_spec()->mutable_search()->set_early_stop(2);
  auto results = Results(RunInProcess(lease, ArtifactPath()));
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[1].status(), v1::RESULT_STATUS_OK) << "nothing timed yet to compare with";
  EXPECT_EQ(results[2].status(), v1::RESULT_STATUS_OK) << results[2].error();
  EXPECT_EQ(results[3].status(), v1::RESULT_STATUS_EARLY_STOPPED) << results[3].error();
  EXPECT_EQ(results[3].timing().repeats(), 5);
  EXPECT_EQ(results[4].status(), v1::RESULT_STATUS_OK) << results[4].error();
}

TEST_F(RunnerTest, WrongAndUnwrittenOutputsAreCaught) {
  auto results = Results(
      RunInProcess(MakeLease({{"off_by_one_at_7", 64}, {"writes_half", 64}}), ArtifactPath()));
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1].status(), v1::RESULT_STATUS_WRONG_RESULT);
  EXPECT_NE(results[1].error().find("output 'Y': 1 of 64 elements differ; first at index 7"),
            std::string::npos)
      << results[1].error();
  EXPECT_NEAR(results[1].max_abs_error(), 1, 1e-6);
  // The untouched half still holds the poison: NaN never matches.
  EXPECT_EQ(results[2].status(), v1::RESULT_STATUS_WRONG_RESULT);
  EXPECT_NE(results[2].error().find("32 of 64 elements differ; first at index 32: got nan"),
            std::string::npos)
      << results[2].error();
}

TEST_F(RunnerTest, CandidatesAreGroupedByProblemAndEachStepAnnounced) {
  auto events =
      RunInProcess(MakeLease({{"good", 100}, {"good", 200}, {"good", 100}}), ArtifactPath());
  std::vector<std::string> steps;
  for (const auto& e : events) {
    if (e.has_started()) {
      steps.push_back(e.started().has_problem_key()
                          ? e.started().problem_key()
                          : "#" + std::to_string(e.started().candidate_id()));
    } else if (e.has_result()) {
      steps.push_back("result #" + std::to_string(e.result().candidate_id()));
    }
  }
  EXPECT_EQ(steps, (std::vector<std::string>{"N=100", "#1", "result #1", "#3", "result #3", "N=200",
                                             "#2", "result #2"}));
  EXPECT_TRUE(events.back().lease_done());
}

TEST_F(RunnerTest, LeasesOfOneJobPrepareEachProblemOnce) {
  Runner runner;
  v1::Lease lease = MakeLease({{"good", 100}, {"good", 200}});
  lease.set_job_id(7);
  EXPECT_EQ(PreparedProblems(RunIn(runner, lease)), (std::vector<std::string>{"N=100", "N=200"}));
  EXPECT_EQ(runner.stats().problems_prepared, 2);

  // The kept reference still catches a wrong candidate.
  lease = MakeLease({{"good", 200}, {"off_by_one_at_7", 100}, {"good", 100}});
  lease.set_job_id(7);
  auto events = RunIn(runner, lease);
  EXPECT_TRUE(PreparedProblems(events).empty());
  EXPECT_EQ(runner.stats().problems_prepared, 2);
  EXPECT_EQ(runner.stats().problems_reused, 2);
  auto results = Results(events);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[1].status(), v1::RESULT_STATUS_OK) << results[1].error();
  EXPECT_EQ(results[2].status(), v1::RESULT_STATUS_WRONG_RESULT);
  EXPECT_EQ(results[3].status(), v1::RESULT_STATUS_OK) << results[3].error();

  lease = MakeLease({{"good", 100}});
  lease.set_job_id(8);
  EXPECT_EQ(PreparedProblems(RunIn(runner, lease)), (std::vector<std::string>{"N=100"}));
  // A job id handed out again by a new coordinator database, for another spec.
  lease.set_job_id(7);
  lease.mutable_spec()->mutable_buffers(0)->set_init("iota");
  EXPECT_EQ(PreparedProblems(RunIn(runner, lease)), (std::vector<std::string>{"N=100"}));
  EXPECT_EQ(runner.stats().problems_prepared, 4);
}

TEST_F(RunnerTest, KeptProblemsStayWithinTheByteLimitMostRecentFirst) {
  Runner runner(/*prepared_problem_bytes=*/1);  // room for the newest problem only
  EXPECT_EQ(PreparedProblems(RunIn(runner, MakeLease({{"good", 100}, {"good", 200}}))),
            (std::vector<std::string>{"N=100", "N=200"}));
  EXPECT_EQ(PreparedProblems(RunIn(runner, MakeLease({{"good", 200}, {"good", 100}}))),
            (std::vector<std::string>{"N=100"}));
  EXPECT_EQ(runner.stats().problems_prepared, 3);
  EXPECT_EQ(runner.stats().problems_reused, 1);
}

TEST_F(RunnerTest, KeptProblemsTakeAtMostHalfOfTheDevicesMemory) {
  v1::DeviceInfo tiny = CpuDevice().info;
  tiny.set_memory_bytes(2);  // room for the newest problem only
  Runner runner;
  const v1::Lease first = MakeLease({{"good", 100}, {"good", 200}});
  const v1::Lease second = MakeLease({{"good", 200}, {"good", 100}});
  RunIn(runner, first, ArtifactPath(), tiny);
  EXPECT_EQ(PreparedProblems(RunIn(runner, second, ArtifactPath(), tiny)),
            (std::vector<std::string>{"N=100"}));

  Runner roomy;  // 4 GiB of the host's memory: both problems stay
  RunIn(roomy, first);
  EXPECT_TRUE(PreparedProblems(RunIn(roomy, second)).empty());
  EXPECT_EQ(roomy.stats().problems_reused, 2);
}

TEST(PreparedProblemBytesTest, HalfOfAGpusMemoryAndAtMostFourGiBOfTheHosts) {
  v1::DeviceInfo h200;
  h200.set_memory_bytes(int64_t{141} << 30);
  EXPECT_EQ(PreparedProblemBytes(h200, /*shares_host_memory=*/false), int64_t{141} << 29);
  EXPECT_EQ(PreparedProblemBytes(h200, /*shares_host_memory=*/true), kHostPreparedProblemBytes);
  EXPECT_EQ(PreparedProblemBytes(v1::DeviceInfo(), false), kHostPreparedProblemBytes);
}

TEST_F(RunnerTest, CandidateThatOverwritesItsInputsSpoilsNoOtherCandidate) {
  Runner runner;
  auto results = Results(RunIn(runner, MakeLease({{"zeroes_its_input", 64}, {"good", 64}})));
  EXPECT_EQ(results[1].status(), v1::RESULT_STATUS_OK) << results[1].error();
  EXPECT_EQ(results[2].status(), v1::RESULT_STATUS_OK) << results[2].error();
  // The next lease reuses the problem: its inputs are still as made.
  results = Results(RunIn(runner, MakeLease({{"good", 64}})));
  EXPECT_EQ(runner.stats().problems_reused, 1);
  EXPECT_EQ(results[1].status(), v1::RESULT_STATUS_OK) << results[1].error();
}

TEST_F(RunnerTest, MissingSymbolAndMissingArtifactAreRuntimeFailures) {
  auto results =
      Results(RunInProcess(MakeLease({{"no_such_symbol", 8}, {"good", 8}}), ArtifactPath()));
  EXPECT_EQ(results[1].status(), v1::RESULT_STATUS_RUNTIME_FAILED);
  EXPECT_NE(results[1].error().find("'no_such_symbol' is not in the artifact"), std::string::npos);
  EXPECT_EQ(results[2].status(), v1::RESULT_STATUS_OK);

  results = Results(RunInProcess(MakeLease({{"good", 8}}), *dir_ + "/missing.so"));
  EXPECT_EQ(results[1].status(), v1::RESULT_STATUS_RUNTIME_FAILED);
  EXPECT_NE(results[1].error().find("cannot load artifact"), std::string::npos);
}

TEST_F(RunnerTest, RunnerProcessContainsCrashHangAndWrongResult) {
  worker::RunnerSupervisor supervisor(RunnerPath(), CpuDevice());
  const auto start = std::chrono::steady_clock::now();
  auto results = Supervise(supervisor, MakeLease({{"good", 256},
                                                  {"crash", 256},
                                                  {"good", 256},
                                                  {"hang", 256},
                                                  {"off_by_one_at_7", 256},
                                                  {"good", 256}}));
  ASSERT_EQ(results.size(), 6u);
  for (int64_t ok_id : {1, 3, 6}) {
    EXPECT_EQ(results[ok_id].status(), v1::RESULT_STATUS_OK)
        << ok_id << ": " << results[ok_id].error();
    EXPECT_GT(results[ok_id].timing().median_ns(), 0);
  }
  EXPECT_EQ(results[2].status(), v1::RESULT_STATUS_RUNTIME_FAILED);
  EXPECT_EQ(results[2].error(), "runner killed by signal 11 (SIGSEGV) while running candidate");
  EXPECT_EQ(results[4].status(), v1::RESULT_STATUS_TIMEOUT);
  EXPECT_EQ(results[4].error(), "timed out after 1.0 s");
  EXPECT_EQ(results[5].status(), v1::RESULT_STATUS_WRONG_RESULT);
  // One hang costs about one timeout, not one per remaining candidate.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4));

  // The restarted runner serves the next lease.
  results = Supervise(supervisor, MakeLease({{"good", 64}}));
  EXPECT_EQ(results[1].status(), v1::RESULT_STATUS_OK) << results[1].error();
}

TEST_F(RunnerTest, CrashingReferenceFailsOnlyItsProblem) {
  worker::RunnerSupervisor supervisor(RunnerPath(), CpuDevice());
  auto results = Supervise(supervisor, MakeLease({{"good", 13}, {"good", 64}, {"good", 13}}));
  ASSERT_EQ(results.size(), 3u);
  for (int64_t id : {1, 3}) {
    EXPECT_EQ(results[id].status(), v1::RESULT_STATUS_RUNTIME_FAILED);
    EXPECT_EQ(results[id].error(),
              "runner killed by signal 11 (SIGSEGV) while preparing problem N=13 (inputs and "
              "reference)");
  }
  EXPECT_EQ(results[2].status(), v1::RESULT_STATUS_OK) << results[2].error();
}

TEST_F(RunnerTest, StopAbandonsTheLeaseWithoutResults) {
  worker::RunnerSupervisor supervisor(RunnerPath(), CpuDevice());
  v1::Lease lease = MakeLease({{"hang", 8}, {"good", 8}});
  lease.mutable_spec()->mutable_benchmark()->set_timeout_s(30);
  const auto start = std::chrono::steady_clock::now();
  int results = 0;
  Status status = supervisor.RunLease(
      lease, {ArtifactPath()}, [&](v1::CandidateResult) { ++results; },
      [&] { return std::chrono::steady_clock::now() - start > std::chrono::milliseconds(300); });
  EXPECT_EQ(status.code(), Code::kCancelled);
  EXPECT_EQ(results, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

// Each forbidden step of a kernel fails that candidate only: the runner goes
// on with the next one, which succeeds. Writing in its own folder works.
TEST_F(RunnerTest, SandboxRefusesNetworkProcessesAndFilesOutsideItsFolder) {
  std::filesystem::remove("/tmp/tf_runner_test_escape");
  worker::RunnerSupervisor supervisor(RunnerPath(), CpuDevice());
  v1::Lease lease = MakeLease({{"opens_socket", 64},
                               {"good", 64},
                               {"forks", 64},
                               {"runs_a_shell", 64},
                               {"writes_tmp", 64},
                               {"reads_passwd", 64},
                               {"writes_own_dir", 64},
                               {"good", 64}});
  lease.mutable_spec()->mutable_benchmark()->set_timeout_s(20);  // no timeouts on a busy host
  auto results = Supervise(supervisor, lease);
  ASSERT_EQ(results.size(), 8u);
  for (int64_t refused : {1, 3, 4, 5, 6}) {
    EXPECT_EQ(results[refused].status(), v1::RESULT_STATUS_WRONG_RESULT)
        << refused << ": " << results[refused].error();
  }
  for (int64_t ok_id : {2, 7, 8}) {
    EXPECT_EQ(results[ok_id].status(), v1::RESULT_STATUS_OK)
        << ok_id << ": " << results[ok_id].error();
  }
  EXPECT_FALSE(std::filesystem::exists("/tmp/tf_runner_test_escape"));
}

// The same kernels unconfined all succeed: what the test above sees is the
// sandbox's doing.
TEST_F(RunnerTest, WithoutTheSandboxTheSameKernelsSucceed) {
  worker::RunnerSandbox off;
  off.enabled = false;
  worker::RunnerSupervisor supervisor(RunnerPath(), CpuDevice(), off);
  v1::Lease lease = MakeLease({{"opens_socket", 64}, {"forks", 64}, {"writes_tmp", 64}});
  lease.mutable_spec()->mutable_benchmark()->set_timeout_s(30);  // a fork per timed run
  auto results = Supervise(supervisor, lease);
  ASSERT_EQ(results.size(), 3u);
  for (int64_t id : {1, 2, 3}) {
    EXPECT_EQ(results[id].status(), v1::RESULT_STATUS_OK) << id << ": " << results[id].error();
  }
  std::filesystem::remove("/tmp/tf_runner_test_escape");
}

// A candidate that allocates past the runner's memory limit fails alone.
TEST_F(RunnerTest, MemoryLimitFailsTheCandidateNotTheWorker) {
  if (TF_ASAN) GTEST_SKIP() << "sanitizer builds run the runner without an address-space limit";
  worker::RunnerSandbox small;
  small.memory_mb = 512;
  worker::RunnerSupervisor supervisor(RunnerPath(), CpuDevice(), small);
  v1::Lease lease = MakeLease({{"allocates_2g", 64}, {"good", 64}});
  lease.mutable_spec()->mutable_benchmark()->set_timeout_s(20);
  auto results = Supervise(supervisor, lease);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_NE(results[1].status(), v1::RESULT_STATUS_OK);
  EXPECT_EQ(results[2].status(), v1::RESULT_STATUS_OK) << results[2].error();
}

// The finalists of a retime lease sit in several artifacts whose symbols may
// repeat: each candidate is looked up in its own, and the paths sent to a
// restarted runner follow the candidates still pending.
TEST(LeaseArtifactsTest, EachCandidateIsFoundInItsOwnArtifact) {
  v1::Lease lease;
  lease.set_artifact_sha256("lease");
  for (const char* artifact : {"b", "", "a", "b"}) {
    lease.add_candidates()->set_artifact_sha256(artifact);
  }
  EXPECT_EQ(ArtifactOrder(lease), (std::vector<std::string>{"b", "lease", "a"}));
  EXPECT_EQ(ArtifactIndex(lease, lease.candidates(0)), 0u);
  EXPECT_EQ(ArtifactIndex(lease, lease.candidates(1)), 1u);
  EXPECT_EQ(ArtifactIndex(lease, lease.candidates(2)), 2u);
  EXPECT_EQ(ArtifactIndex(lease, lease.candidates(3)), 0u);
  lease.mutable_candidates()->DeleteSubrange(0, 2);  // pending after a restart: "a", "b"
  EXPECT_EQ(ArtifactOrder(lease), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(ArtifactIndex(lease, lease.candidates(1)), 1u);
}

TEST(HostBufferTest, RandomInputsAreDeterministicAndNeverAllZeros) {
  for (const char* dtype : {"f32", "f64", "f16", "bf16", "i8", "i32", "u8"}) {
    v1::Buffer spec;
    spec.set_name("A");
    spec.set_dtype(dtype);
    auto a = HostBuffer::Allocate(dtype, 1000);
    auto b = HostBuffer::Allocate(dtype, 1000);
    auto c = HostBuffer::Allocate(dtype, 1000);
    ASSERT_TRUE(a.ok() && b.ok() && c.ok());
    ASSERT_TRUE(a->Fill(spec, InputSeed("A", "M=1")).ok());
    ASSERT_TRUE(b->Fill(spec, InputSeed("A", "M=1")).ok());
    ASSERT_TRUE(c->Fill(spec, InputSeed("A", "M=2")).ok());
    int zeros = 0, same_as_other_seed = 0;
    for (int i = 0; i < 1000; ++i) {
      EXPECT_EQ(a->Get(i), b->Get(i)) << dtype;
      EXPECT_GE(a->Get(i), -8) << dtype;
      EXPECT_LE(a->Get(i), 15) << dtype;
      zeros += a->Get(i) == 0;
      same_as_other_seed += a->Get(i) == c->Get(i);
    }
    EXPECT_LT(zeros, 200) << dtype;
    EXPECT_LT(same_as_other_seed, 200) << dtype;
  }
}

TEST(HostBufferTest, RandomRangeAndInitModesAreHonoured) {
  v1::Buffer spec;
  spec.set_name("A");
  spec.set_random_min(3);
  spec.set_random_max(5);
  auto buffer = HostBuffer::Allocate("i32", 100);
  ASSERT_TRUE(buffer.ok());
  ASSERT_TRUE(buffer->Fill(spec, 1).ok());
  for (int i = 0; i < 100; ++i) {
    EXPECT_GE(buffer->Get(i), 3);
    EXPECT_LE(buffer->Get(i), 5);
  }
  spec.set_init("iota");
  ASSERT_TRUE(buffer->Fill(spec, 1).ok());
  EXPECT_EQ(buffer->Get(99), 99);
  spec.set_init("sparse");
  EXPECT_NE(buffer->Fill(spec, 1).message().find("unknown init 'sparse'"), std::string::npos);
  EXPECT_NE(HostBuffer::Allocate("f8", 1).status().message().find("unknown dtype 'f8'"),
            std::string::npos);
}

TEST(HostBufferTest, CompareAppliesAbsoluteAndRelativeTolerance) {
  auto out = HostBuffer::Allocate("f64", 3);
  auto ref = HostBuffer::Allocate("f64", 3);
  ASSERT_TRUE(out.ok() && ref.ok());
  double* o = static_cast<double*>(out->data());
  double* r = static_cast<double*>(ref->data());
  r[0] = 100, r[1] = 1, r[2] = 0;
  o[0] = 100.5, o[1] = 1, o[2] = 0.05;  // within 0.1 + 0.01 * 100; 0.05 within atol
  Comparison c = Compare(*out, *ref, 0.01, 0.1);
  EXPECT_EQ(c.mismatches, 0);
  EXPECT_DOUBLE_EQ(c.max_abs_error, 0.5);
  o[2] = 0.2;
  c = Compare(*out, *ref, 0.01, 0.1);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_EQ(c.first_mismatch, 2);
}

TEST(BenchmarkTest, SummaryGivesPercentilesOfRunTimes) {
  std::vector<double> ns;
  for (int i = 100; i >= 0; --i) ns.push_back(i * 10.0);
  v1::TimingStats stats = SummarizeRunTimes(ns);
  EXPECT_DOUBLE_EQ(stats.median_ns(), 500);
  EXPECT_DOUBLE_EQ(stats.p10_ns(), 100);
  EXPECT_DOUBLE_EQ(stats.p90_ns(), 900);
  EXPECT_DOUBLE_EQ(stats.min_ns(), 0);
  EXPECT_DOUBLE_EQ(stats.mean_ns(), 500);
  EXPECT_EQ(stats.repeats(), 101);
}

TEST(BenchmarkTest, RepeatsUntilMinimumTimeAndRepeatsWithinTheCap) {
  v1::BenchmarkSettings settings;
  settings.set_min_time_ms(5);
  settings.set_min_repeats(3);
  settings.set_max_repeats(1000);
  int runs = 0;
  auto sleep_1ms = [&] {
    ++runs;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  v1::TimingStats stats = Benchmark(sleep_1ms, settings, nullptr);
  // Repeats until 5 ms are timed, however long the sleeps take on a busy machine.
  EXPECT_GE(stats.repeats(), 3);
  EXPECT_GE(stats.repeats() * stats.mean_ns(), 5e6);
  EXPECT_LT(stats.repeats(), 20);
  EXPECT_GE(stats.min_ns(), 1e6);
  settings.set_max_repeats(2);
  EXPECT_EQ(Benchmark(sleep_1ms, settings, nullptr).repeats(), 2);
  // The host does not rest (settings.rest is for GPUs' power cap).
  settings.set_rest(1000);
  const auto start = std::chrono::steady_clock::now();
  Benchmark(sleep_1ms, settings, nullptr);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
}

// Settings for exactly one warm-up run and three timed runs.
v1::BenchmarkSettings OneWarmUpThenThreeRuns() {
  v1::BenchmarkSettings settings;
  settings.set_warmup_ms(0);
  settings.set_min_time_ms(1e-9);
  settings.set_min_repeats(3);
  settings.set_max_repeats(3);
  return settings;
}

// Runs that report `warm_ns` (warm-up) and `timed_ns` (timed) without taking
// any time; the rests RepeatRuns asks for, in order.
struct FakeRuns {
  double warm_ns = 1000, timed_ns = 3000;
  int warm_ups = 0, timed = 0;
  std::vector<std::chrono::nanoseconds> rests;

  Result<v1::TimingStats> Repeat(const v1::BenchmarkSettings& settings) {
    return RepeatRuns(
        [&]() -> Result<double> {
          ++warm_ups;
          return warm_ns;
        },
        [&]() -> Result<double> {
          ++timed;
          return timed_ns;
        },
        settings, [&](std::chrono::nanoseconds rest) { rests.push_back(rest); });
  }
};

TEST(BenchmarkTest, DeviceRestsAfterEveryRunForRestTimesItsLength) {
  v1::BenchmarkSettings settings = OneWarmUpThenThreeRuns();
  settings.set_rest(2);
  FakeRuns runs;
  auto stats = runs.Repeat(settings);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->repeats(), 3);
  EXPECT_DOUBLE_EQ(stats->median_ns(), 3000);  // the runs' own times, not the rests
  using std::chrono::nanoseconds;
  EXPECT_EQ(runs.rests, (std::vector<nanoseconds>{nanoseconds(2000), nanoseconds(6000),
                                                  nanoseconds(6000), nanoseconds(6000)}));
  settings.set_rest(0);  // none asked: none taken
  FakeRuns unrested;
  ASSERT_TRUE(unrested.Repeat(settings).ok());
  EXPECT_EQ(unrested.timed, 3);
  EXPECT_TRUE(unrested.rests.empty());
}

TEST(BenchmarkTest, MinimumTimeCountsRests) {
  // Each timed run reports 1 ms and rests 4 ms (really, with the default
  // sleep): 20 ms of minimum time hold at most 5 runs, where unrested runs
  // that take no time would go on to max_repeats.
  v1::BenchmarkSettings settings;
  settings.set_min_time_ms(20);
  settings.set_min_repeats(1);
  settings.set_max_repeats(1000);
  settings.set_rest(4);
  int timed = 0;
  auto stats = RepeatRuns([]() -> Result<double> { return 1e6; },
                          [&]() -> Result<double> {
                            ++timed;
                            return 1e6;
                          },
                          settings);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_GE(timed, 1);
  EXPECT_LE(timed, 5);
}

TEST(BenchmarkTest, GpuFlushBufferIsTwiceTheL2AndAtLeastTwoMiB) {
  EXPECT_EQ(GpuFlushBytes(int64_t{60} << 20), int64_t{120} << 20);  // an H200's 60 MiB
  EXPECT_EQ(GpuFlushBytes(0), int64_t{2} << 20);                    // no L2 reported
}

// The order of a GPU timing, as a GPU backend's runtime calls see it.
TEST(BenchmarkTest, GpuTimingFlushesBeforeEachTimedLaunchAndTimesTheLaunchAlone) {
  v1::BenchmarkSettings settings = OneWarmUpThenThreeRuns();
  settings.set_flush_l2(true);
  std::vector<std::string> calls_made;
  GpuTimingCalls calls;
  calls.launch = [&] {
    calls_made.push_back("launch");
    return Status::Ok();
  };
  calls.synchronize = [&] {
    calls_made.push_back("synchronize");
    return Status::Ok();
  };
  calls.flush_l2 = [&](unsigned char value) {
    calls_made.push_back("flush " + std::to_string(value));
    return Status::Ok();
  };
  calls.device_time = [&](const std::function<Status()>& enqueue) -> Result<double> {
    calls_made.push_back("start event");
    TF_RETURN_IF_ERROR(enqueue());
    calls_made.push_back("stop event");
    return 2500.0;
  };
  auto stats = TimeOnGpu(calls, settings);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_DOUBLE_EQ(stats->median_ns(), 2500);
  EXPECT_EQ(calls_made, (std::vector<std::string>{"launch", "synchronize", "flush 1", "start event",
                                                  "launch", "stop event", "flush 2", "start event",
                                                  "launch", "stop event", "flush 3", "start event",
                                                  "launch", "stop event"}));

  settings.set_flush_l2(false);
  calls_made.clear();
  ASSERT_TRUE(TimeOnGpu(calls, settings).ok());
  EXPECT_EQ(std::count(calls_made.begin(), calls_made.end(), "launch"), 4);
  EXPECT_EQ(std::count_if(calls_made.begin(), calls_made.end(),
                          [](const std::string& call) { return call.starts_with("flush"); }),
            0);

  calls.device_time = [](const std::function<Status()>&) -> Result<double> {
    return Status::Internal("illegal address");
  };
  EXPECT_EQ(TimeOnGpu(calls, settings).status().message(), "illegal address");
}

}  // namespace
}  // namespace tf::runner
