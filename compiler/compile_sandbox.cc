#include "compiler/compile_sandbox.h"

#include <unistd.h>

#include <cmath>

namespace tf::compiler {
namespace {

// Beside the running program (installed, or the build tree's bin/), else
// where this build put it (for tests and benchmarks outside bin/).
Result<std::string> FindSandbox() {
  for (const std::string& path :
       {ExecutableDir() + "/tunefleet-sandbox", std::string(TF_SANDBOX_BUILD_PATH)}) {
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return Status::FailedPrecondition("tunefleet-sandbox was not found beside " + ExecutableDir() +
                                    " or at " TF_SANDBOX_BUILD_PATH
                                    "; compilers are never run without it");
}

}  // namespace

Result<std::vector<std::string>> SandboxedCommand(const std::vector<std::string>& argv,
                                                  const std::string& work_dir,
                                                  const std::vector<std::string>& program_paths,
                                                  const CompileLimits& limits,
                                                  RunOptions* options) {
  TF_ASSIGN_OR_RETURN(std::string sandbox, FindSandbox());
  const double cpu = limits.cpu_seconds > 0 ? limits.cpu_seconds : options->timeout_s;
  std::vector<std::string> command = {sandbox, "--work-dir", work_dir};
  for (const std::string& path : program_paths) command.insert(command.end(), {"--read", path});
  if (cpu > 0) {
    command.insert(command.end(),
                   {"--cpu-seconds", std::to_string(static_cast<uint64_t>(std::ceil(cpu)))});
  }
  if (limits.memory_mb > 0) {
    command.insert(command.end(), {"--memory-mb", std::to_string(limits.memory_mb)});
  }
  command.insert(command.end(), {"--file-mb", std::to_string(limits.file_mb), "--"});
  command.insert(command.end(), argv.begin(), argv.end());
  options->cwd = work_dir;
  options->env.push_back("TMPDIR=" + work_dir);
  return command;
}

}  // namespace tf::compiler
