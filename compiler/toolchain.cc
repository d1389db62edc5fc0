#include "compiler/toolchain.h"

#include "compiler/cuda_toolchain.h"
#include "compiler/host_toolchain.h"

namespace tf::compiler {

Result<std::unique_ptr<Toolchain>> MakeToolchain(const v1::KernelSpec& spec,
                                                 const std::string& arch) {
  const std::string& language = spec.language();
  if (language == "cpp") {
    TF_ASSIGN_OR_RETURN(std::unique_ptr<HostToolchain> host, HostToolchain::Detect());
    return std::unique_ptr<Toolchain>(std::move(host));
  }
  if (language == "cuda") {
    const std::string& target = arch.empty() ? spec.target().arch() : arch;
    if (target.empty()) {
      return Status::InvalidArgument(
          "target.arch: a cuda kernel needs the architecture to compile for, e.g. sm_90 "
          "(set target.arch in the spec, or pass --target)");
    }
    TF_ASSIGN_OR_RETURN(std::unique_ptr<CudaToolchain> cuda, CudaToolchain::Detect(target));
    return std::unique_ptr<Toolchain>(std::move(cuda));
  }
  if (language == "hip") {
    return Status::Unavailable("language: the hip toolchain is not available in this build");
  }
  return Status::InvalidArgument("language: '" + language + "' is not one of cpp, cuda, hip");
}

}  // namespace tf::compiler
