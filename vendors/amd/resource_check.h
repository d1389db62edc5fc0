// Pruning before any GPU time is spent, for AMD GPUs: a compiled candidate
// whose resources (read from its code object, code_object.h) exceed what one
// workgroup of its launch may have on the target, or that spills or uses
// scratch when the job forbids spills, is recorded as PRUNED with the reason.
#pragma once

#include <map>
#include <string>

#include "common/status.h"
#include "tunefleet/v1/common.pb.h"
#include "tunefleet/v1/spec.pb.h"
#include "vendors/amd/gfx_targets.h"

namespace tf::amd {

namespace v1 = ::tunefleet::v1;

// Ok, or FailedPrecondition naming the limit exceeded:
//  - threads per workgroup over max_threads_per_block or the kernel's
//    compiled maximum (.max_flat_workgroup_size);
//  - LDS (static + launch.shared_mem) over max_shared_mem_per_block;
//  - the workgroup's waves, spread over the SIMDs, needing more registers
//    (VGPRs, plus AGPRs where they share the file, in granules of 8) than a
//    SIMD holds: ceil(waves / simds) * registers > vgprs_per_simd_lane;
//  - spills or scratch under forbid_spills.
// Limits come from `device` properties of those names when present, else
// from `target`. Candidates without resource data always pass.
Status CheckResources(const GfxTarget& target, const v1::KernelSpec& spec, const v1::Config& config,
                      const v1::Problem& problem, const v1::ResourceUsage& resources,
                      const std::map<std::string, int64_t>& device);

}  // namespace tf::amd
