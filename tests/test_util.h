// Helpers for tests that run the real binaries: temporary directories, child
// processes with their logs kept, and a coordinator/worker fleet on 127.0.0.1.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/subprocess.h"

namespace tf::testing {

// A fresh directory, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A long-running child process whose stdout and stderr go to `log_path`.
class Process {
 public:
  static std::unique_ptr<Process> Start(const std::vector<std::string>& argv,
                                        const std::string& log_path);
  ~Process();  // SIGKILL if still running
  pid_t pid() const { return pid_; }
  void Kill();      // SIGKILL and reap
  int Terminate();  // SIGTERM, wait, returns wait status
  bool Running();
  std::string Log() const;

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  std::string log_path_;
};

std::string BinaryPath(const std::string& relative);  // under the build tree
std::string SourcePath(const std::string& relative);  // under the source tree

// Polls `condition` every 20 ms until it holds or `timeout` passes.
bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout);

// A coordinator on 127.0.0.1 with its database and artifacts in `dir`.
class CoordinatorProcess {
 public:
  CoordinatorProcess(const std::string& dir, std::vector<std::string> extra_args = {});
  void Start();  // (re)starts on the same database and port
  void Kill() { process_->Kill(); }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  std::string db_path() const { return dir_ + "/tunefleet.db"; }
  std::string Log() const { return process_ ? process_->Log() : ""; }

 private:
  std::string dir_;
  std::vector<std::string> extra_args_;
  int port_ = 0;
  int starts_ = 0;
  std::unique_ptr<Process> process_;
};

std::unique_ptr<Process> StartWorker(const std::string& address, const std::string& dir,
                                     const std::string& name, const std::string& devices,
                                     std::vector<std::string> extra_args = {});

// Runs the `tunefleet` CLI against `address` and returns what it printed.
ProcessResult RunCli(const std::string& address, std::vector<std::string> args,
                     double timeout_s = 120);

}  // namespace tf::testing
