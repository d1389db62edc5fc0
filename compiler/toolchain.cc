#include "compiler/toolchain.h"

#include "compiler/host_toolchain.h"

namespace tf::compiler {

Result<std::unique_ptr<Toolchain>> MakeToolchain(const v1::KernelSpec& spec) {
  const std::string& language = spec.language();
  if (language == "cpp") {
    TF_ASSIGN_OR_RETURN(std::unique_ptr<HostToolchain> host, HostToolchain::Detect());
    return std::unique_ptr<Toolchain>(std::move(host));
  }
  if (language == "cuda" || language == "hip") {
    return Status::Unavailable("language: the " + language +
                               " toolchain is not available in this build (only cpp is)");
  }
  return Status::InvalidArgument("language: '" + language + "' is not one of cpp, cuda, hip");
}

}  // namespace tf::compiler
