// ChildProcess with a log file, as the test fleet and the scale bench start
// their daemons.
#include "common/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include "common/files.h"
#include "tests/test_util.h"

namespace tf {
namespace {

// Running, or stopped: not gone and not a zombie waiting for a reaper.
bool Alive(pid_t pid) {
  auto stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  return stat.ok() && stat->substr(stat->rfind(')') + 2, 1) != "Z";
}

int WaitForExit(ChildProcess& child) {
  int status = 0;
  EXPECT_TRUE(testing::WaitFor([&] { return child.Exited(&status); }, std::chrono::seconds(10)));
  return status;
}

TEST(ChildProcessTest, LogGetsStdoutAndStderrAppended) {
  testing::TempDir dir;
  const std::string log = dir / "child.log";
  ASSERT_TRUE(WriteFileAtomic(log, "earlier\n").ok());
  SpawnOptions options;
  options.log_path = log;
  auto child =
      ChildProcess::Spawn({"/bin/sh", "-c", "echo out; echo err >&2; cat; echo done"}, options);
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_EQ((*child)->stdin_fd(), -1);
  EXPECT_EQ((*child)->stdout_fd(), -1);
  // `cat` finds /dev/null, not our stdin, and the child ends on its own.
  int status = WaitForExit(**child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << DescribeWaitStatus(status);
  EXPECT_EQ(*ReadFile(log), "earlier\nout\nerr\ndone\n");
}

TEST(ChildProcessTest, ExecFailureIsExitCode127InTheLog) {
  testing::TempDir dir;
  SpawnOptions options;
  options.log_path = dir / "child.log";
  auto child = ChildProcess::Spawn({dir / "missing"}, options);
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  int status = WaitForExit(**child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 127) << DescribeWaitStatus(status);
  EXPECT_NE(ReadFile(options.log_path)->find("exec failed"), std::string::npos);
}

TEST(ChildProcessTest, UnwritableLogFailsToSpawn) {
  testing::TempDir dir;
  SpawnOptions options;
  options.log_path = dir / "no-such-dir/child.log";
  auto child = ChildProcess::Spawn({"/bin/true"}, options);
  ASSERT_FALSE(child.ok());
  EXPECT_NE(child.status().message().find(options.log_path), std::string::npos);
}

TEST(ChildProcessTest, KillReachesTheWholeGroup) {
  testing::TempDir dir;
  SpawnOptions options;
  options.log_path = dir / "child.log";
  // The shell's own child prints its pid, then both sleep.
  auto child = ChildProcess::Spawn({"/bin/sh", "-c", "sleep 600 & echo $!; wait"}, options);
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  std::string pid_text;
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        pid_text = *ReadFile(options.log_path);
        return !pid_text.empty() && pid_text.back() == '\n';
      },
      std::chrono::seconds(10)));
  const pid_t grandchild = std::stoi(pid_text);
  int status = (*child)->Kill();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << DescribeWaitStatus(status);
  EXPECT_TRUE(testing::WaitFor([&] { return !Alive(grandchild); }, std::chrono::seconds(10)));
}

}  // namespace
}  // namespace tf
