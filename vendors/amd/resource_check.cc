#include "vendors/amd/resource_check.h"

#include "compiler/grid_launch.h"

namespace tf::amd {
namespace {

int64_t Limit(const std::map<std::string, int64_t>& device, const std::string& name,
              int64_t fallback) {
  auto it = device.find(name);
  return it == device.end() || it->second <= 0 ? fallback : it->second;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

Status Pruned(const std::string& what) { return Status::FailedPrecondition("pruned: " + what); }

}  // namespace

Status CheckResources(const GfxTarget& target, const v1::KernelSpec& spec, const v1::Config& config,
                      const v1::Problem& problem, const v1::ResourceUsage& resources,
                      const std::map<std::string, int64_t>& device) {
  if (resources.vector_registers() == 0 && resources.wave_size() == 0) return Status::Ok();
  TF_ASSIGN_OR_RETURN(const compiler::BlockSize block,
                      compiler::EvaluateBlockSize(spec, config, problem, device));
  const int64_t threads = block.threads;
  const int64_t dynamic_lds = block.dynamic_shared_bytes;

  const int64_t max_threads = Limit(device, "max_threads_per_block", 1024);
  if (threads > max_threads) {
    return Pruned(std::to_string(threads) + " threads per workgroup > device limit " +
                  std::to_string(max_threads));
  }
  if (resources.max_threads_per_block() > 0 && threads > resources.max_threads_per_block()) {
    return Pruned(std::to_string(threads) + " threads per workgroup > the kernel's launch bounds " +
                  std::to_string(resources.max_threads_per_block()));
  }
  const int64_t lds_limit = Limit(device, "max_shared_mem_per_block", target.lds_bytes);
  const int64_t lds = resources.shared_bytes() + dynamic_lds;
  if (lds > lds_limit) {
    return Pruned(std::to_string(lds) + " bytes of LDS (" +
                  std::to_string(resources.shared_bytes()) + " static + " +
                  std::to_string(dynamic_lds) + " dynamic) > " + std::to_string(lds_limit) +
                  " per workgroup");
  }
  const int64_t wave_size = resources.wave_size() > 0
                                ? resources.wave_size()
                                : Limit(device, "wave_size", target.wave_size);
  const int64_t simds = Limit(device, "simds_per_cu", target.simds);
  const int64_t file = Limit(device, "vgprs_per_simd_lane", target.vgprs_per_simd_lane);
  int64_t registers = resources.vector_registers();
  if (target.unified_agprs)
    registers = CeilDiv(registers, 4) * 4 + resources.accumulator_registers();
  registers = CeilDiv(registers, 8) * 8;
  const int64_t waves_per_simd = CeilDiv(CeilDiv(threads, wave_size), simds);
  if (waves_per_simd * registers > file) {
    return Pruned(std::to_string(registers) + " VGPRs" +
                  (target.unified_agprs && resources.accumulator_registers() > 0
                       ? " (with " + std::to_string(resources.accumulator_registers()) + " AGPRs)"
                       : std::string()) +
                  " x " + std::to_string(waves_per_simd) + " waves of " + std::to_string(threads) +
                  " threads on each SIMD > " + std::to_string(file) + " registers per SIMD lane");
  }
  if (spec.forbid_spills() &&
      (resources.spill_store_bytes() > 0 || resources.scratch_bytes() > 0)) {
    return Pruned("spills registers (" + std::to_string(resources.spill_store_bytes() / 4) +
                  " spilled, " + std::to_string(resources.scratch_bytes()) +
                  " bytes of scratch per lane) and the job forbids spills");
  }
  return Status::Ok();
}

}  // namespace tf::amd
