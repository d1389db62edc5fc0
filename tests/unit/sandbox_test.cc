// sandbox::Enter on a forked child of the test: each layer is probed with
// the call it must refuse, and the errno the program sees is checked.
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "common/files.h"

namespace tf::sandbox {
namespace {

// The errno of each probe, in order; 0 when the call succeeded.
enum Probe {
  kReadPasswd,
  kWriteTmp,
  kWriteWorkDir,
  kInetSocket,
  kUnixSocket,
  kSocketPair,
  kFork,
  kThread,
  kNumProbes
};

// Runs the probes in a child confined by `policy`; the child reports each
// probe's errno through a pipe.
std::vector<int> ProbeInChild(const Policy& policy) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    int results[kNumProbes] = {};
    auto entered = Enter(policy);
    if (!entered.ok()) _exit(3);
    auto probe = [](bool ok) { return ok ? 0 : errno; };
    int fd = open("/etc/passwd", O_RDONLY);
    results[kReadPasswd] = probe(fd >= 0);
    fd = open("/tmp/tf_sandbox_test_escape", O_WRONLY | O_CREAT, 0644);
    results[kWriteTmp] = probe(fd >= 0);
    fd = open("inside", O_WRONLY | O_CREAT, 0644);
    results[kWriteWorkDir] = probe(fd >= 0);
    results[kInetSocket] = probe(socket(AF_INET6, SOCK_DGRAM, 0) >= 0);
    results[kUnixSocket] = probe(socket(AF_UNIX, SOCK_STREAM, 0) >= 0);
    int pair[2];
    results[kSocketPair] = probe(socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
    pid_t child = fork();
    if (child == 0) _exit(0);
    results[kFork] = probe(child > 0);
    bool ran = false;
    std::thread([&] { ran = true; }).join();
    results[kThread] = ran ? 0 : -1;
    if (write(fds[1], results, sizeof results) != sizeof results) _exit(4);
    _exit(0);
  }
  close(fds[1]);
  std::vector<int> results(kNumProbes, -2);
  EXPECT_EQ(read(fds[0], results.data(), sizeof(int) * kNumProbes),
            static_cast<ssize_t>(sizeof(int) * kNumProbes));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  return results;
}

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = MakeTempDir("sandbox_test-");
    ASSERT_TRUE(dir.ok());
    dir_ = *dir;
    std::filesystem::remove("/tmp/tf_sandbox_test_escape");
    policy_.read_paths = SystemReadPaths();
    policy_.work_dir = dir_;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_;
  Policy policy_;
};

TEST_F(SandboxTest, ConfinesFilesNetworkAndProcessesButNotThreads) {
  policy_.allow_processes = false;
  auto r = ProbeInChild(policy_);
  EXPECT_EQ(r[kReadPasswd], EACCES);
  EXPECT_EQ(r[kWriteTmp], EACCES);
  EXPECT_EQ(r[kWriteWorkDir], 0);
  EXPECT_EQ(r[kInetSocket], EACCES);
  EXPECT_EQ(r[kUnixSocket], EACCES);  // a path-named socket outside would be reachable
  EXPECT_EQ(r[kSocketPair], 0);
  EXPECT_EQ(r[kFork], EPERM);
  EXPECT_EQ(r[kThread], 0);
  EXPECT_FALSE(std::filesystem::exists("/tmp/tf_sandbox_test_escape"));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/inside"));
}

TEST_F(SandboxTest, ProcessesMayBeAllowedTheRestStaysConfined) {
  policy_.allow_processes = true;
  auto r = ProbeInChild(policy_);
  EXPECT_EQ(r[kFork], 0);
  EXPECT_EQ(r[kReadPasswd], EACCES);
  EXPECT_EQ(r[kInetSocket], EACCES);
}

// GPU runners: their drivers need AF_UNIX sockets; nothing else opens up.
TEST_F(SandboxTest, UnixSocketsMayBeAllowedOtherFamiliesStayRefused) {
  policy_.allow_unix_sockets = true;
  auto r = ProbeInChild(policy_);
  EXPECT_EQ(r[kUnixSocket], 0);
  EXPECT_EQ(r[kInetSocket], EACCES);
  EXPECT_EQ(r[kReadPasswd], EACCES);
}

TEST_F(SandboxTest, RootBecomesNobodyOwningItsFolder) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  ProbeInChild(policy_);
  struct stat st;
  ASSERT_EQ(stat((dir_ + "/inside").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
}

TEST_F(SandboxTest, NobodyKeepsOnlyTheGroupsItIsGiven) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  policy_.keep_groups = {4242, 4243};
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    if (!Enter(policy_).ok()) _exit(3);
    gid_t groups[8] = {};
    const int count = getgroups(8, groups);
    if (count < 0) _exit(4);
    const ssize_t bytes = static_cast<ssize_t>(count * sizeof(gid_t));
    if (write(fds[1], groups, bytes) != bytes) _exit(5);
    _exit(0);
  }
  close(fds[1]);
  gid_t groups[8] = {};
  const ssize_t bytes = read(fds[0], groups, sizeof groups);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(std::vector<gid_t>(groups, groups + bytes / sizeof(gid_t)),
            (std::vector<gid_t>{4242, 4243}));
}

}  // namespace
}  // namespace tf::sandbox
