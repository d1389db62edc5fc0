#include "common/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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

// In the child after fork: only async-signal-safe calls until exec.
[[noreturn]] void ExecChild(const std::vector<char*>& argv, const std::vector<std::string>& env) {
  setpgid(0, 0);
  for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
  execvp(argv[0], argv.data());
  const char* msg = "exec failed: ";
  (void)!write(2, msg, strlen(msg));
  (void)!write(2, argv[0], strlen(argv[0]));
  (void)!write(2, "\n", 1);
  _exit(127);
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
  auto args = CStrings(argv);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid < 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return Status::Internal(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(out_pipe[1], 2);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0) _exit(126);
    ExecChild(args, options.env);
  }
  setpgid(pid, pid);  // also in the parent: no race with an early kill
  close(out_pipe[1]);

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
                                                          const std::vector<std::string>& env) {
  if (argv.empty()) return Status::InvalidArgument("ChildProcess: empty command");
  int to_child[2], from_child[2];
  if (pipe2(to_child, O_CLOEXEC) != 0) return Status::Internal("pipe failed");
  if (pipe2(from_child, O_CLOEXEC) != 0) {
    close(to_child[0]);
    close(to_child[1]);
    return Status::Internal("pipe failed");
  }
  auto args = CStrings(argv);
  pid_t pid = fork();
  if (pid < 0) return Status::Internal(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    dup2(to_child[0], 0);
    dup2(from_child[1], 1);
    ExecChild(args, env);
  }
  setpgid(pid, pid);
  close(to_child[0]);
  close(from_child[1]);
  std::unique_ptr<ChildProcess> child(new ChildProcess);
  child->pid_ = pid;
  child->stdin_fd_ = to_child[1];
  child->stdout_fd_ = from_child[0];
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
