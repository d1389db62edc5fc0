// Two workers on one host must not time on the same cores: the second exits
// 75 naming the first, a SIGKILLed worker's locks go with it, and workers
// given their own cores (taskset) run side by side. Also the worker's
// TUNEFLEET_COORDINATOR and TUNEFLEET_TOKEN_FILE defaults.
#include <gtest/gtest.h>
#include <sched.h>

#include <string>
#include <vector>

#include "auth/token_file.h"
#include "tests/test_util.h"
#include "tests/token_coordinator_fixture.h"

namespace tf::testing {
namespace {

namespace v1 = ::tunefleet::v1;
using std::chrono::seconds;

// The cores this test may use, as the worker sees them.
std::vector<int> AllowedCores() {
  cpu_set_t allowed;
  std::vector<int> cores;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return cores;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cores.push_back(cpu);
  }
  return cores;
}

class WorkerLocksTest : public ::testing::Test {
 protected:
  // A worker of one CPU device that cannot reach its coordinator, so it
  // retries for as long as it runs; on `core` alone when given (taskset).
  std::vector<std::string> WorkerArgv(const std::string& name, int core = -1) {
    std::vector<std::string> argv = {BinaryPath("bin/tunefleet-worker"),
                                     "--coordinator",
                                     "127.0.0.1:1",
                                     "--devices",
                                     "cpu:1",
                                     "--cache",
                                     dir_ / (name + "-cache"),
                                     "--lock-dir",
                                     dir_ / "locks"};
    if (core >= 0) argv.insert(argv.begin(), {"taskset", "-c", std::to_string(core)});
    return argv;
  }

  // Starts it and waits until it holds its locks and is trying to register.
  std::unique_ptr<Process> StartRunning(const std::string& name, int core = -1) {
    auto worker = Process::Start(WorkerArgv(name, core), dir_ / (name + ".log"));
    EXPECT_TRUE(WaitFor([&] { return worker->Log().find("cannot register") != std::string::npos; },
                        seconds(30)))
        << worker->Log();
    int status = 0;
    EXPECT_FALSE(worker->Exited(&status)) << name << " exited: " << worker->Log();
    return worker;
  }

  TempDir dir_;
};

TEST_F(WorkerLocksTest, ASecondWorkerOnTheSameCoresExits75NamingTheFirst) {
  auto first = StartRunning("first");
  EXPECT_NE(first->Log().find("device locks in " + dir_ / "locks"), std::string::npos)
      << first->Log();

  auto second = RunProcess(WorkerArgv("second"), WithTimeout(60));
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->exit_code, 75) << second->output;
  const std::string named =
      "another tunefleet-worker (pid " + std::to_string(first->pid()) + ") is using core ";
  EXPECT_NE(second->output.find(named), std::string::npos) << second->output;
  EXPECT_NE(second->output.find("(cpu device 0): give each worker its own cores with taskset -c"),
            std::string::npos)
      << second->output;

  // kill -9 leaves no stale lock: the next worker takes the cores.
  first->Kill();
  auto third = StartRunning("third");
}

TEST_F(WorkerLocksTest, WorkersOnTheirOwnCoresBothRun) {
  const std::vector<int> cores = AllowedCores();
  if (cores.size() < 2) {
    GTEST_SKIP() << "needs 2 cores to give two workers one each; this test may use "
                 << cores.size();
  }
  auto a = StartRunning("a", cores[0]);
  auto b = StartRunning("b", cores[1]);
  int status = 0;
  EXPECT_FALSE(a->Exited(&status)) << a->Log();
  // Each locks only its own core, so one more on the first core is refused.
  auto c = RunProcess(WorkerArgv("c", cores[0]), WithTimeout(60));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->exit_code, 75) << c->output;
  EXPECT_NE(c->output.find("pid " + std::to_string(a->pid()) + ") is using core " +
                           std::to_string(cores[0])),
            std::string::npos)
      << c->output;
}

class WorkerEnvironmentTest : public TokenCoordinatorTest {};

// As the CLI: TUNEFLEET_COORDINATOR and TUNEFLEET_TOKEN_FILE stand in for
// --coordinator and --token-file, which win over them.
TEST_F(WorkerEnvironmentTest, TheWorkerTakesCoordinatorAndTokenFileFromTheEnvironment) {
  StartCoordinator({});
  ASSERT_TRUE(auth::WriteTokenFile(dir_ / "worker.token", CreateToken(v1::ROLE_WORKER, "w")).ok());
  auto worker = Process::Start(
      {"/usr/bin/env", "TUNEFLEET_COORDINATOR=" + coordinator_->address(),
       "TUNEFLEET_TOKEN_FILE=" + dir_ / "worker.token", BinaryPath("bin/tunefleet-worker"),
       "--devices", "cpu:1", "--cache", dir_ / "cache", "--lock-dir", dir_ / "locks"},
      dir_ / "worker.log");
  EXPECT_TRUE(WaitFor(
      [&] {
        v1::ListWorkersResponse workers;
        return clients_->ListWorkers(Context(admin_).get(), {}, &workers).ok() &&
               workers.workers_size() == 1;
      },
      seconds(30)))
      << worker->Log();
  EXPECT_EQ(worker->Log().find("no --token-file"), std::string::npos) << worker->Log();

  // The flags win; a bad path is named by where it came from.
  auto run = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {"/usr/bin/env",
                                     "TUNEFLEET_COORDINATOR=127.0.0.1:99998",
                                     "TUNEFLEET_TOKEN_FILE=" + dir_ / "missing-env.token",
                                     BinaryPath("bin/tunefleet-worker"),
                                     "--cache",
                                     dir_ / "cache2",
                                     "--lock-dir",
                                     dir_ / "locks2"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto ran = RunProcess(argv, WithTimeout(30));
    EXPECT_TRUE(ran.ok()) << ran.status().ToString();
    return ran.ok() ? *ran : ProcessResult{};
  };
  ProcessResult from_env = run({});
  EXPECT_EQ(from_env.exit_code, 2) << from_env.output;
  EXPECT_NE(from_env.output.find("TUNEFLEET_TOKEN_FILE: "), std::string::npos) << from_env.output;
  EXPECT_NE(from_env.output.find(dir_ / "missing-env.token"), std::string::npos) << from_env.output;
  ProcessResult flag = run({"--token-file", dir_ / "missing-flag.token"});
  EXPECT_EQ(flag.exit_code, 2) << flag.output;
  EXPECT_NE(flag.output.find("--token-file: "), std::string::npos) << flag.output;
  EXPECT_NE(flag.output.find(dir_ / "missing-flag.token"), std::string::npos) << flag.output;
  ProcessResult address =
      run({"--coordinator", "127.0.0.1:99999", "--token-file", dir_ / "worker.token"});
  EXPECT_EQ(address.exit_code, 2) << address.output;
  EXPECT_NE(address.output.find("port 99999 is out of range"), std::string::npos) << address.output;
  ProcessResult env_address = run({"--token-file", dir_ / "worker.token"});
  EXPECT_NE(env_address.output.find("port 99998 is out of range"), std::string::npos)
      << env_address.output;
}

}  // namespace
}  // namespace tf::testing
