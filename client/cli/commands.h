// The subcommands of `tunefleet`, one function each. They print their output
// (text, or JSON with --json) and return the process exit code; cli_main.cc
// only parses flags and dispatches.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "auth/tls.h"

namespace tf::cli {

// What scripts can rely on.
enum ExitCode : int {
  kExitOk = 0,
  kExitJobFailed = 1,  // the job failed or was cancelled, or an unexpected error
  kExitUsage = 2,      // bad flags, unreadable or invalid spec
  kExitUnreachable = 3,
  kExitNotFound = 4,
  kExitAuth = 5,  // no token, unknown or revoked token, or its role may not
  // Following a job (submit --wait, watch) was stopped by SIGINT; SIGTERM
  // exits 143. The job goes on.
  kExitInterrupted = 130,
};

struct GlobalOptions {
  std::string coordinator;  // HOST:PORT
  bool json = false;
  auth::ClientTls tls;
  // --token-file or TUNEFLEET_TOKEN_FILE; when empty, TUNEFLEET_TOKEN holds
  // the token itself.
  std::string token_file;
};

struct TokenCreateOptions {
  std::string name;
  std::string role;  // reader, submitter, worker, admin
};

struct SubmitOptions {
  std::string spec_path;
  bool wait = false;
  int priority = 0;
};

struct BestOptions {
  std::string kernel;
  std::string problem;  // "M=4096,N=4096,K=4096"
  std::string device_class;
};

struct CompileOptions {
  std::string spec_path;
  std::string target;  // empty: the spec's own target arch
  int batch_size = 16;
  int jobs = 0;                           // 0: one compiler per hardware thread
  std::string out_dir;                    // artifact store
  std::vector<std::string> device_props;  // NAME=VALUE
  int64_t limit = 0;                      // > 0: a seeded sample of this many configurations
  uint64_t seed = 1;
};

struct SpaceOptions {
  std::string spec_path;
  std::vector<std::string> device_props;  // NAME=VALUE
  int show = 5;                           // configurations listed per problem
  double max_seconds = 10;                // counting stops here with a lower bound; 0: never
};

struct ImportKernelTunerOptions {
  std::string t1_path;
  std::string out_path;   // empty: the spec on stdout
  std::string reference;  // a kernel of the source to check outputs against
};

struct ImportResultsOptions {
  std::string path;  // a Kernel Tuner cache or T4 file, gzip-compressed or not
  std::string kernel;
  std::string device_class;
  std::string problem;  // "problem_size_x=4096,problem_size_y=4096"
  std::string device;   // the device recorded on; default: as the file says, else its name
};

struct KernelOwnerOptions {
  std::string kernel;
  std::string team;  // empty: none given
  bool none = false;
};

struct ExportOptions {
  std::string kernel;
  std::string device_class;     // empty: every device class
  std::string format = "json";  // json or cpp
  std::string out_path;         // empty: stdout
};

int RunSubmit(const GlobalOptions& global, const SubmitOptions& options);
// Follows a job as `submit --wait` does: progress on stderr, then the result;
// exits as the job ended.
int RunWatch(const GlobalOptions& global, int64_t job_id);
int RunStatus(const GlobalOptions& global, int64_t job_id);
int RunJobs(const GlobalOptions& global, int limit);
int RunCancel(const GlobalOptions& global, int64_t job_id);
// format: table (or JSON with --json), json, or t4 (client/t4_format.h).
int RunResults(const GlobalOptions& global, int64_t job_id, const std::string& format);
int RunWorkers(const GlobalOptions& global);
int RunBest(const GlobalOptions& global, const BestOptions& options);
// Tokens (admin only): create prints the new token's text, once.
int RunTokenCreate(const GlobalOptions& global, const TokenCreateOptions& options);
int RunTokenList(const GlobalOptions& global);
int RunTokenRevoke(const GlobalOptions& global, int64_t token_id);
// Prints the SubmitJobRequest (spec with defaults, sources) of a spec file,
// or of YAML on stdin when `spec_path` is "-", as protobuf JSON.
int RunSpec(const std::string& spec_path);
// Builds the candidates locally: no coordinator, no workers.
int RunCompile(const GlobalOptions& global, const CompileOptions& options);
// The size of each problem's constrained space and its first configurations;
// builds nothing.
int RunSpace(const GlobalOptions& global, const SpaceOptions& options);
// Writes a spec from a Kernel Tuner T1 file (client/kerneltuner_import.h).
int RunImportKernelTuner(const GlobalOptions& global, const ImportKernelTunerOptions& options);
// Loads a Kernel Tuner cache or T4 file into the coordinator's tuning
// database (admin), as a finished job of its own (client/cli/results_import.h).
int RunImportResults(const GlobalOptions& global, const ImportResultsOptions& options);
// Writes the best configuration per (problem, device class) of a kernel as
// JSON or a C++ header (client/best_export.h).
int RunExport(const GlobalOptions& global, const ExportOptions& options);
// The kernels the coordinator answers for (of `device_class` only, when not
// empty), with their owners; exits 4 when there is none.
int RunKernels(const GlobalOptions& global, const std::string& device_class);
// Hands a kernel name to a team, or to no one (admin); prints the change.
int RunKernelSetOwner(const GlobalOptions& global, const KernelOwnerOptions& options);

}  // namespace tf::cli
