// Grouped compilation: many configurations of one kernel per compiler run,
// several runs in parallel. A batch that fails is split in halves until the
// failing configurations are isolated, so one bad configuration costs a few
// extra runs rather than its whole batch. Before the first split, the code
// every batch of a template-style kernel shares (the source and the
// reference, without configurations) is compiled once: when that fails,
// every configuration fails with its compiler message and no further batch
// is compiled, so that broken shared code costs one run, not two per
// configuration. Configurations too few to give each concurrent run a full
// batch are spread evenly over the runs. Finished batches are reported as
// they complete, so that their candidates can be benchmarked while later
// batches still build.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/artifact_store.h"
#include "compiler/toolchain.h"

namespace tf::compiler {

struct BuildOptions {
  int batch_size = 16;     // at most, configurations per artifact
  int parallelism = 0;     // concurrent compiler runs; 0: one per hardware thread
  double timeout_s = 120;  // per compiler run
  std::string work_root;   // private build directories go here; empty: the system temp dir
  size_t max_diagnostics_bytes = 8 << 10;  // kept per failed configuration
};

// The outcome for one configuration. Configurations built by the same run
// share one artifact.
struct ConfigBuild {
  v1::Config config;
  bool ok = false;
  std::string artifact_sha256;   // when ok
  std::string symbol;            // when ok: the entry point in the artifact
  std::string reference_symbol;  // when ok and the spec names a reference
  v1::ResourceUsage resources;   // when ok, from GPU toolchains
  std::string diagnostics;       // when not ok: why, with the compiler's output
};

struct BuildStats {
  int64_t configs = 0;
  int64_t batches = 0;        // as planned, before any split
  int64_t compiler_runs = 0;  // including the runs of split batches
  int64_t failed_configs = 0;
  double cpu_seconds = 0;  // of all compiler processes
  double wall_seconds = 0;
  // For the job's log: why the spec's batches could not be grouped, or that
  // the code every configuration shares does not compile.
  std::string note;
};

// How many compiler runs a build keeps going at once: options.parallelism, or
// one per hardware thread.
int ConcurrentRuns(const BuildOptions& options);

class BatchBuilder {
 public:
  BatchBuilder(const Toolchain& toolchain, ArtifactStore& store, BuildOptions options);

  // Builds every configuration and blocks until all are done. `on_batch` gets
  // the outcome of each finished compiler run that resolved configurations
  // (successful batches, and each configuration found to fail); calls come
  // from builder threads, one at a time. Fails on setup errors (spec refused
  // by the toolchain, unsafe source paths, duplicate configurations, work
  // directory or store not writable), and with CANCELLED when `cancel` was
  // set: compiler runs already started finish, no new ones start.
  Result<BuildStats> Build(const v1::KernelSpec& spec, const std::vector<v1::SourceFile>& sources,
                           const std::vector<v1::Config>& configs,
                           const std::function<void(std::vector<ConfigBuild>)>& on_batch,
                           const std::atomic<bool>* cancel = nullptr);

 private:
  const Toolchain& toolchain_;
  ArtifactStore& store_;
  BuildOptions options_;
};

}  // namespace tf::compiler
