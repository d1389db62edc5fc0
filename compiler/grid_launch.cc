#include "compiler/grid_launch.h"

#include <string>

namespace tf::compiler {

Status CheckGridLaunch(const ::tunefleet::v1::KernelSpec& spec) {
  auto check = [&](const char* field, int dims, const std::string& what) {
    if (dims >= 1 && dims <= 3) return Status::Ok();
    return Status::InvalidArgument(std::string(field) + ": " + what +
                                   " needs 1 to 3 dimensions, got " + std::to_string(dims));
  };
  const std::string kernel = "a " + spec.language() + " kernel";
  TF_RETURN_IF_ERROR(check("launch.grid", spec.launch().grid_size(), kernel));
  TF_RETURN_IF_ERROR(check("launch.block", spec.launch().block_size(), kernel));
  if (spec.verify().reference().empty()) return Status::Ok();
  const std::string reference = "the " + spec.language() + " reference kernel";
  TF_RETURN_IF_ERROR(check("verify.grid", spec.verify().grid_size(), reference));
  return check("verify.block", spec.verify().block_size(), reference);
}

}  // namespace tf::compiler
