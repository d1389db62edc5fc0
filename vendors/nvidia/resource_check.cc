#include "vendors/nvidia/resource_check.h"

#include "compiler/grid_launch.h"

namespace tf::nvidia {
namespace {

int64_t Property(const std::map<std::string, int64_t>& device, const std::string& name) {
  auto it = device.find(name);
  return it == device.end() ? 0 : it->second;
}

}  // namespace

Status CheckResources(const v1::KernelSpec& spec, const v1::Config& config,
                      const v1::Problem& problem, const v1::ResourceUsage& resources,
                      const std::map<std::string, int64_t>& device) {
  if (resources.vector_registers() == 0) return Status::Ok();
  TF_ASSIGN_OR_RETURN(const compiler::BlockSize block,
                      compiler::EvaluateBlockSize(spec, config, problem, device));
  const int64_t threads = block.threads;
  const int64_t dynamic_smem = block.dynamic_shared_bytes;
  auto exceeds = [](const std::string& what) {
    return Status::FailedPrecondition("pruned: " + what);
  };
  int64_t max_threads = Property(device, "max_threads_per_block");
  if (max_threads > 0 && threads > max_threads) {
    return exceeds(std::to_string(threads) + " threads per block > device limit " +
                   std::to_string(max_threads));
  }
  if (resources.max_threads_per_block() > 0 && threads > resources.max_threads_per_block()) {
    return exceeds(std::to_string(threads) + " threads per block > the kernel's launch bounds " +
                   std::to_string(resources.max_threads_per_block()));
  }
  int64_t regs_per_block = Property(device, "regs_per_block");
  if (regs_per_block > 0 && resources.vector_registers() * threads > regs_per_block) {
    return exceeds(std::to_string(resources.vector_registers()) + " registers x " +
                   std::to_string(threads) + " threads > " + std::to_string(regs_per_block) +
                   " registers per block");
  }
  int64_t smem_limit = Property(device, "max_shared_mem_per_block_optin");
  int64_t smem = resources.shared_bytes() + dynamic_smem;
  if (smem_limit > 0 && smem > smem_limit) {
    return exceeds(std::to_string(smem) + " bytes of shared memory (" +
                   std::to_string(resources.shared_bytes()) + " static + " +
                   std::to_string(dynamic_smem) + " dynamic) > device limit " +
                   std::to_string(smem_limit));
  }
  int64_t spills = resources.spill_store_bytes() + resources.spill_load_bytes();
  if (spec.forbid_spills() && spills > 0) {
    return exceeds("spills registers (" + std::to_string(resources.spill_store_bytes()) +
                   " bytes stored, " + std::to_string(resources.spill_load_bytes()) +
                   " bytes loaded) and the job forbids spills");
  }
  if (spec.forbid_performance_warnings() && resources.performance_warnings_size() > 0) {
    return exceeds("the compiler warns of a performance loss (" +
                   resources.performance_warnings(0) +
                   ") and the job forbids performance warnings");
  }
  return Status::Ok();
}

}  // namespace tf::nvidia
