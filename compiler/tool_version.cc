#include "compiler/tool_version.h"

#include "common/subprocess.h"

namespace tf::compiler {

Result<std::string> ToolVersion(const std::string& program) {
  RunOptions options;
  options.timeout_s = 30;
  auto run = RunProcess({program, "--version"}, options);
  if (!run.ok()) return Status::Unavailable(run.status().message());
  if (!run->success()) return Status::Unavailable(run->output);
  return run->output.substr(0, run->output.find('\n'));
}

}  // namespace tf::compiler
