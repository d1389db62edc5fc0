// The launch rule of toolchains whose kernels run as grids of thread blocks:
// launch.grid and launch.block need 1 to 3 dimensions each, and so do
// verify.grid and verify.block when the spec names a reference kernel (a
// kernel of its own, launched over the problem only). Host toolchains call
// functions and have no such rule.
#pragma once

#include "common/status.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::compiler {

// InvalidArgument naming the first field with no or too many dimensions.
Status CheckGridLaunch(const ::tunefleet::v1::KernelSpec& spec);

}  // namespace tf::compiler
