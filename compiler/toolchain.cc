#include "compiler/toolchain.h"

#include <regex>

#include "compiler/cuda_toolchain.h"
#include "compiler/host_toolchain.h"

namespace tf::compiler {

std::string CompileArch(const std::string& target_arch, const std::string& device_arch) {
  if (!target_arch.empty() || device_arch.empty()) return target_arch;
  // sm_90 and later have architecture-specific instructions (wgmma, setmaxnreg)
  // that only sm_XXa code may use; the job runs on this one architecture.
  static const std::regex kFamily("sm_([0-9]+)");
  std::smatch match;
  if (std::regex_match(device_arch, match, kFamily) && std::stoi(match[1]) >= 90) {
    return device_arch + "a";
  }
  return device_arch;
}

Result<std::unique_ptr<Toolchain>> MakeToolchain(const v1::KernelSpec& spec,
                                                 const std::string& device_arch) {
  const std::string& language = spec.language();
  if (language == "cpp") {
    TF_ASSIGN_OR_RETURN(std::unique_ptr<HostToolchain> host, HostToolchain::Detect());
    return std::unique_ptr<Toolchain>(std::move(host));
  }
  if (language == "cuda") {
    TF_ASSIGN_OR_RETURN(std::unique_ptr<CudaToolchain> cuda,
                        CudaToolchain::Detect(CompileArch(spec.target().arch(), device_arch)));
    return std::unique_ptr<Toolchain>(std::move(cuda));
  }
  if (language == "hip") {
    return Status::Unavailable("language: the hip toolchain is not available in this build");
  }
  return Status::InvalidArgument("language: '" + language + "' is not one of cpp, cuda, hip");
}

}  // namespace tf::compiler
