// Pruning before any GPU time is spent: a compiled candidate whose resource
// use (read from its image) exceeds the device's limits for its launch,
// spills when the job forbids spills, or draws a performance warning from
// ptxas when the job forbids those, is recorded as PRUNED with the reason.
#pragma once

#include <map>
#include <string>

#include "common/status.h"
#include "tunefleet/v1/common.pb.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::nvidia {

namespace v1 = ::tunefleet::v1;

// Ok, or FailedPrecondition naming the limit exceeded. Device properties used
// when present: max_threads_per_block, regs_per_block,
// max_shared_mem_per_block_optin. Candidates without resource data (CPU
// builds) always pass.
Status CheckResources(const v1::KernelSpec& spec, const v1::Config& config,
                      const v1::Problem& problem, const v1::ResourceUsage& resources,
                      const std::map<std::string, int64_t>& device);

}  // namespace tf::nvidia
