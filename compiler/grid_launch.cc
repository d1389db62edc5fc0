#include "compiler/grid_launch.h"

#include <string>

#include "kernelspec/config.h"
#include "kernelspec/expr.h"

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

Result<BlockSize> EvaluateBlockSize(const ::tunefleet::v1::KernelSpec& spec,
                                    const ::tunefleet::v1::Config& config,
                                    const ::tunefleet::v1::Problem& problem,
                                    const std::map<std::string, int64_t>& device) {
  kernelspec::Bindings vars;
  kernelspec::BindConfig(config, &vars);
  kernelspec::BindProblem(problem, &vars);
  for (const auto& [name, value] : device) vars["device." + name] = value;

  BlockSize block;
  for (const auto& dim : spec.launch().block()) {
    TF_ASSIGN_OR_RETURN(int64_t n, kernelspec::EvaluateInt(dim, vars));
    block.threads *= n;
  }
  if (!spec.launch().shared_mem_bytes().empty()) {
    TF_ASSIGN_OR_RETURN(block.dynamic_shared_bytes,
                        kernelspec::EvaluateInt(spec.launch().shared_mem_bytes(), vars));
  }
  return block;
}

}  // namespace tf::compiler
