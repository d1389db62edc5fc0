#include "vendors/replay/replay_toolchain.h"

#include "common/files.h"
#include "kernelspec/config.h"
#include "vendors/replay/replay_vendor.h"

namespace tf::replay {

Status ReplayToolchain::Validate(const v1::KernelSpec& spec) const {
  if (spec.compile_options_size() > 0) {
    return Status::InvalidArgument("compile_options: a replay kernel is not compiled; '" +
                                   spec.compile_options(0) + "' would have no effect");
  }
  return Status::Ok();
}

Result<std::string> ReplayToolchain::GenerateBatch(const v1::KernelSpec&,
                                                   const std::vector<v1::SourceFile>&,
                                                   const std::vector<v1::Config>& configs) const {
  std::string listing = std::string(kArtifactHeader) + "\n";
  for (const v1::Config& config : configs) listing += kernelspec::ConfigKey(config) + "\n";
  return listing;
}

Result<compiler::CompileOutcome> ReplayToolchain::Compile(
    const std::string& work_dir, const std::string& tu_path, const std::string& out_path,
    const v1::KernelSpec&, const std::vector<v1::Config>& configs, double) const {
  TF_ASSIGN_OR_RETURN(std::string listing, ReadFile(work_dir + "/" + tu_path));
  TF_RETURN_IF_ERROR(WriteFileAtomic(work_dir + "/" + out_path, listing));
  compiler::CompileOutcome outcome;
  outcome.ok = true;
  for (const v1::Config& config : configs) {
    outcome.kernels.push_back({kernelspec::ConfigKey(config), {}});
  }
  return outcome;
}

Result<std::unique_ptr<compiler::Toolchain>> MakeReplayToolchain(const v1::KernelSpec&,
                                                                 const std::string&) {
  return std::unique_ptr<compiler::Toolchain>(new ReplayToolchain);
}

const vendors::CompileSide kCompileSide = {MakeReplayToolchain, nullptr};

}  // namespace tf::replay
