// The launch rule of toolchains whose kernels run as grids of thread blocks:
// launch.grid and launch.block need 1 to 3 dimensions each, and so do
// verify.grid and verify.block when the spec names a reference kernel (a
// kernel of its own, launched over the problem only). Host toolchains call
// functions and have no such rule.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "common/status.h"
#include "tunefleet/v1/common.pb.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::compiler {

// InvalidArgument naming the first field with no or too many dimensions.
Status CheckGridLaunch(const ::tunefleet::v1::KernelSpec& spec);

// One block of a candidate's launch, as the resource checks see it.
struct BlockSize {
  int64_t threads = 1;               // the product of launch.block
  int64_t dynamic_shared_bytes = 0;  // launch.shared_mem_bytes
};

// launch.block and launch.shared_mem_bytes evaluated with the configuration's
// parameters, the problem's variables and each device property as
// device.NAME; the expression's error when one does not evaluate.
Result<BlockSize> EvaluateBlockSize(const ::tunefleet::v1::KernelSpec& spec,
                                    const ::tunefleet::v1::Config& config,
                                    const ::tunefleet::v1::Problem& problem,
                                    const std::map<std::string, int64_t>& device);

}  // namespace tf::compiler
