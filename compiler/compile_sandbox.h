// Every compiler the coordinator runs for a job runs under tunefleet-sandbox
// (sandbox/sandbox_main.cc): it may read the system's folders (the toolchain
// and its headers) and the build's own folder, write only the build's folder,
// reach no network, and is held to CPU-time, memory and file-size limits. An
// #include, .incbin or -include of any other host file fails with
// "Permission denied", and nothing of that file reaches the diagnostics.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "common/subprocess.h"

namespace tf::compiler {

// Limits of one compiler run (each of its processes for memory and files).
struct CompileLimits {
  double cpu_seconds = 0;     // 0: the run's wall-clock timeout
  uint64_t memory_mb = 8192;  // 0: none
  uint64_t file_mb = 512;
};

// `argv` wrapped to run confined in `work_dir`, which also becomes TMPDIR in
// `options`; `program_paths` are extra files or folders to read (a compiler
// outside the system folders). Fails when tunefleet-sandbox cannot be found:
// compilers never run unconfined.
Result<std::vector<std::string>> SandboxedCommand(const std::vector<std::string>& argv,
                                                  const std::string& work_dir,
                                                  const std::vector<std::string>& program_paths,
                                                  const CompileLimits& limits, RunOptions* options);

}  // namespace tf::compiler
