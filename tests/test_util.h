// Helpers for tests that run the real binaries: temporary directories, child
// processes with their logs kept, and a coordinator/worker fleet on 127.0.0.1.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "client/client.h"
#include "common/subprocess.h"
#include "kernelspec/spec_loader.h"
#include "worker/runner_supervisor.h"

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

// A long-running child process whose stdout and stderr are appended to
// `log_path`; it and its process group are SIGKILLed on destruction.
class Process {
 public:
  // Throws when the process cannot be started.
  static std::unique_ptr<Process> Start(const std::vector<std::string>& argv,
                                        const std::string& log_path);
  pid_t pid() const { return child_->pid(); }
  void Kill() { child_->Kill(); }  // SIGKILL its group and reap it
  // Non-blocking: true and the wait status once it has exited.
  bool Exited(int* wait_status) { return child_->Exited(wait_status); }
  std::string Log() const;

 private:
  std::unique_ptr<ChildProcess> child_;
  std::string log_path_;
};

std::string BinaryPath(const std::string& relative);  // under the build tree
std::string SourcePath(const std::string& relative);  // under the source tree
// The port a program wrote to a --*port-file: its first line ("" if unreadable).
std::string ReadPortFile(const std::string& path);

// Polls `condition` every 20 ms until it holds or `timeout` passes.
bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout);

// A port on 127.0.0.1 that nothing listened on a moment ago.
int FreePort();

// A throwaway PostgreSQL server of its own: a cluster initialised in a
// temporary folder, listening on 127.0.0.1 at a free port (and on a socket
// in that folder), stopped and removed on destruction. Run as root (as CI
// is), the server runs as the user `postgres` that Debian's postgresql
// package makes. Throws, saying why, when it cannot start.
class PostgresCluster {
 public:
  PostgresCluster();
  ~PostgresCluster();
  // A new, empty database on it; returns its URI.
  std::string CreateDatabase(const std::string& name);
  std::string Url(const std::string& database) const;

 private:
  std::string dir_;
  int port_ = 0;
  std::unique_ptr<Process> server_;
};

// The databases a parameterized test runs on, and their names in test names
// (FleetTest.X/sqlite, FleetTest.X/postgresql).
enum class DbKind { kSqlite, kPostgres };
std::string DbKindName(const ::testing::TestParamInfo<DbKind>& info);
#define TF_ON_BOTH_DATABASES(suite)                                                        \
  INSTANTIATE_TEST_SUITE_P(                                                                \
      , suite,                                                                             \
      ::testing::Values(::tf::testing::DbKind::kSqlite, ::tf::testing::DbKind::kPostgres), \
      ::tf::testing::DbKindName)

// One test's tuning database: an SQLite file in `dir`, or a database on a
// PostgreSQL cluster of its own.
class TestDatabase {
 public:
  TestDatabase(DbKind kind, const std::string& dir);
  // What --db and db::Database::Open take.
  const std::string& location() const { return location_; }

 private:
  std::unique_ptr<PostgresCluster> cluster_;
  std::string location_;
};

// A coordinator on 127.0.0.1 with its artifacts and logs in `dir`, and its
// database there too unless `db_path` (a file or a PostgreSQL URI) is given.
class CoordinatorProcess {
 public:
  CoordinatorProcess(const std::string& dir, std::vector<std::string> extra_args = {},
                     std::string db_path = "");
  // NAME=VALUE settings for the process's environment, applied through env(1).
  void set_environment(std::vector<std::string> environment) {
    environment_ = std::move(environment);
  }
  // (Re)starts on the same database and port; waits until it serves when
  // `wait` (a standby serves only once it has taken over: WaitServing).
  void Start(bool wait = true);
  bool WaitServing(std::chrono::milliseconds timeout);
  // Serve on this port from the next start on (0: any free one).
  void set_port(int port) { port_ = port; }
  int port() const { return port_; }
  void Kill() { process_->Kill(); }
  pid_t pid() const { return process_->pid(); }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  const std::string& db_path() const { return db_path_; }
  std::string Log() const { return process_ ? process_->Log() : ""; }

 private:
  std::string dir_;
  std::vector<std::string> extra_args_;
  std::vector<std::string> environment_;
  std::string db_path_;
  int port_ = 0;
  int starts_ = 0;
  std::unique_ptr<Process> process_;
};

// `environment`: NAME=VALUE settings for the worker's environment (env(1)).
std::unique_ptr<Process> StartWorker(const std::string& address, const std::string& dir,
                                     const std::string& name, const std::string& devices,
                                     std::vector<std::string> extra_args = {},
                                     std::vector<std::string> environment = {});

RunOptions WithTimeout(double timeout_s);

// Runs the `tunefleet` CLI against `address` and returns what it printed.
ProcessResult RunCli(const std::string& address, std::vector<std::string> args,
                     double timeout_s = 120);

// The spec at `path` (under the source tree), changed by `edit` when given.
kernelspec::LoadedSpec LoadTestSpec(
    const std::string& path, const std::function<void(tunefleet::v1::KernelSpec&)>& edit = {});

// Submits through `client`; a job with id 0 (and a test failure) on error.
tunefleet::v1::Job SubmitSpec(client::Client& client, const kernelspec::LoadedSpec& spec,
                              int priority = 0);

// Polls until the job succeeded, failed or was cancelled, or `timeout` passed;
// returns its last state.
tunefleet::v1::Job WaitForJobEnd(client::Client& client, int64_t job_id,
                                 std::chrono::milliseconds timeout);

// Every candidate of the job has exactly one result in the database (a
// file or a PostgreSQL URI).
void ExpectExactlyOneResultPerCandidate(const std::string& db_path, int64_t job_id);

// What a coordinator's database holds after any run, faults included:
// SQLite's `PRAGMA integrity_check` is ok; no job is left queued or running
// (none lost or stuck); every candidate of a succeeded or failed job has
// exactly one result, and the job's counters agree with the results.
void ExpectFleetInvariants(const std::string& db_path);

// Runs `lease` through `supervisor` (the real runner binary, as the worker
// runs leases) with `artifact`; its results by candidate id. A failed run or
// a candidate reported twice fails the test.
std::map<int64_t, tunefleet::v1::CandidateResult> RunLease(worker::RunnerSupervisor& supervisor,
                                                           const tunefleet::v1::Lease& lease,
                                                           const std::string& artifact);

}  // namespace tf::testing
