#include "common/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

namespace tf {
namespace {

std::vector<char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// Closes the descriptors a child was given, each once.
void CloseChildEnds(const std::array<int, 3>& stdio) {
  for (auto it = stdio.begin(); it != stdio.end(); ++it) {
    if (*it >= 0 && std::find(stdio.begin(), it, *it) == it) close(*it);
  }
}

// Forks a child that leads a new process group, has `stdio` (-1: ours) as its
// stdin, stdout and stderr, changes to `cwd` (empty: ours) and execs `argv`.
// The child is killed when the thread that forked it ends, so that a runner
// never outlives its worker killed by SIGKILL (spawn from a long-lived thread).
// The caller closes its copies of `stdio`.
Result<pid_t> ForkExec(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                       const std::array<int, 3>& stdio, const std::string& cwd) {
  auto args = CStrings(argv);  // allocated before the fork
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return Status::Internal(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // Only async-signal-safe calls until exec.
    setpgid(0, 0);
    // Armed after the fork: a parent gone before it would not signal.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(125);
    for (int fd = 0; fd < 3; ++fd) {
      if (stdio[fd] >= 0) dup2(stdio[fd], fd);
    }
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
    execvp(args[0], args.data());
    const char* msg = "exec failed: ";
    (void)!write(2, msg, strlen(msg));
    (void)!write(2, args[0], strlen(args[0]));
    (void)!write(2, "\n", 1);
    _exit(127);
  }
  setpgid(pid, pid);  // also in the parent: no race with an early kill
  return pid;
}

double Seconds(const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; }

}  // namespace

std::string DescribeWaitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return "exited with code " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    int sig = WTERMSIG(wait_status);
    const char* abbrev = sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) + " (SIG" + (abbrev ? abbrev : "?") + ")";
  }
  return "ended with wait status " + std::to_string(wait_status);
}

Result<ProcessResult> RunProcess(const std::vector<std::string>& argv, const RunOptions& options) {
  if (argv.empty()) return Status::InvalidArgument("RunProcess: empty command");
  int out_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    return Status::Internal(std::string("pipe: ") + std::strerror(errno));
  }
  const std::array<int, 3> stdio = {open("/dev/null", O_RDONLY | O_CLOEXEC), out_pipe[1],
                                    out_pipe[1]};
  auto start = std::chrono::steady_clock::now();
  auto forked = ForkExec(argv, options.env, stdio, options.cwd);
  CloseChildEnds(stdio);
  if (!forked.ok()) {
    close(out_pipe[0]);
    return forked.status();
  }
  const pid_t pid = *forked;

  ProcessResult result;
  auto deadline = start + std::chrono::duration<double>(options.timeout_s);
  char buf[8192];
  bool open_pipe = true;
  while (open_pipe) {
    int wait_ms = -1;
    if (options.timeout_s > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        result.timed_out = true;
        kill(-pid, SIGKILL);
        break;
      }
      wait_ms = static_cast<int>(left.count()) + 1;
    }
    pollfd pfd{out_pipe[0], POLLIN, 0};
    int n = poll(&pfd, 1, wait_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) continue;
    ssize_t got = read(out_pipe[0], buf, sizeof buf);
    if (got <= 0) {
      if (got < 0 && errno == EINTR) continue;
      open_pipe = false;
    } else if (result.output.size() < options.max_output_bytes) {
      result.output.append(buf,
                           std::min<size_t>(got, options.max_output_bytes - result.output.size()));
    }
  }
  close(out_pipe[0]);
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  // Descendants left in the group (a compiler's subprocesses) go too.
  kill(-pid, SIGKILL);
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.cpu_seconds = Seconds(usage.ru_utime) + Seconds(usage.ru_stime);
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

Result<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(const std::vector<std::string>& argv,
                                                          const SpawnOptions& options) {
  if (argv.empty()) return Status::InvalidArgument("ChildProcess: empty command");
  std::array<int, 3> stdio;
  int stdin_fd = -1, stdout_fd = -1;  // our ends of its pipes
  if (options.log_path.empty()) {
    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0) return Status::Internal("pipe failed");
    if (pipe2(from_child, O_CLOEXEC) != 0) {
      close(to_child[0]);
      close(to_child[1]);
      return Status::Internal("pipe failed");
    }
    stdio = {to_child[0], from_child[1], -1};
    stdin_fd = to_child[1];
    stdout_fd = from_child[0];
  } else {
    int log = open(options.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log < 0) {
      return Status::Internal("cannot open " + options.log_path + ": " + std::strerror(errno));
    }
    stdio = {open("/dev/null", O_RDONLY | O_CLOEXEC), log, log};
  }
  auto pid = ForkExec(argv, options.env, stdio, "");
  CloseChildEnds(stdio);
  if (!pid.ok()) {
    if (stdin_fd >= 0) close(stdin_fd);
    if (stdout_fd >= 0) close(stdout_fd);
    return pid.status();
  }
  std::unique_ptr<ChildProcess> child(new ChildProcess);
  child->pid_ = *pid;
  child->stdin_fd_ = stdin_fd;
  child->stdout_fd_ = stdout_fd;
  return child;
}

ChildProcess::~ChildProcess() {
  if (!reaped_) Kill();
  CloseStdin();
  if (stdout_fd_ >= 0) close(stdout_fd_);
}

void ChildProcess::CloseStdin() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  stdin_fd_ = -1;
}

bool ChildProcess::Exited(int* wait_status) {
  if (!reaped_) {
    pid_t r = waitpid(pid_, &wait_status_, WNOHANG);
    if (r == pid_) reaped_ = true;
  }
  if (reaped_ && wait_status) *wait_status = wait_status_;
  return reaped_;
}

int ChildProcess::Kill() {
  if (reaped_) return wait_status_;
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
  while (waitpid(pid_, &wait_status_, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  return wait_status_;
}

int ChildProcess::Terminate(double grace_s) {
  if (Exited(nullptr)) return wait_status_;
  kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
  while (std::chrono::steady_clock::now() < deadline) {
    if (Exited(nullptr)) return wait_status_;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return Kill();
}

std::string ExecutableDir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

}  // namespace tf
