// Child processes: run a command to completion with a time limit, or keep one
// running, with pipes to talk to it or with its output in a log file. Each
// child leads its own process group so that a kill reaches everything it
// started.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace tf {

struct RunOptions {
  std::string cwd;                    // empty: the caller's
  double timeout_s = 0;               // 0: none; the group is SIGKILLed at the limit
  size_t max_output_bytes = 1 << 20;  // stdout+stderr kept; the rest is dropped
  std::vector<std::string> env;       // extra NAME=VALUE entries
};

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  bool timed_out = false;
  std::string output;      // stdout and stderr interleaved
  double cpu_seconds = 0;  // user+system of the child and its descendants
  double wall_seconds = 0;
  bool success() const { return exit_code == 0 && !timed_out; }
};

// Fails only when the process cannot be started.
Result<ProcessResult> RunProcess(const std::vector<std::string>& argv, const RunOptions& options);

// "exited with code 3", "killed by signal 11 (SIGSEGV)".
std::string DescribeWaitStatus(int wait_status);

struct SpawnOptions {
  std::vector<std::string> env;  // extra NAME=VALUE entries
  // Empty: the child's stdin and stdout are pipes to us and its stderr is
  // ours, for a child we talk to. Otherwise its stdout and stderr are
  // appended to this file (created if missing) and its stdin is /dev/null,
  // for a daemon whose log is read afterwards; appending keeps the log of an
  // earlier child that used the same file.
  std::string log_path;
};

// A long-running child; SpawnOptions says where its stdin, stdout and stderr go.
class ChildProcess {
 public:
  // Fails when the log cannot be opened or the process cannot be forked; a
  // command that cannot be executed exits with code 127.
  static Result<std::unique_ptr<ChildProcess>> Spawn(const std::vector<std::string>& argv,
                                                     const SpawnOptions& options = {});
  ~ChildProcess();  // kills and reaps the child if still running

  pid_t pid() const { return pid_; }
  // Our ends of the child's stdin and stdout; -1 for a child with a log_path.
  int stdin_fd() const { return stdin_fd_; }
  int stdout_fd() const { return stdout_fd_; }
  // Closes our end of the child's stdin.
  void CloseStdin();
  // SIGKILLs the child's process group and reaps it; returns the wait status.
  int Kill();
  // Sends SIGTERM, waits up to grace_s, then kills; returns the wait status.
  int Terminate(double grace_s);
  // Non-blocking: true and the wait status if the child has exited.
  bool Exited(int* wait_status);

 private:
  ChildProcess() = default;
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  bool reaped_ = false;
  int wait_status_ = 0;
};

// Path of the running executable's directory, for finding sibling binaries.
std::string ExecutableDir();

}  // namespace tf
