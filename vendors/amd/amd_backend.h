// An AMD GPU as a device: runner::MakeGpuBackend over the HIP runtime
// (hip_runtime.h), as the NVIDIA backend is over the CUDA driver, so that the
// first AMD host is a run, not a port. The artifact is a code object; the
// core clock and temperature come from ROCm SMI where it is present
// (amd_sensors.h); outputs are checked on the GPU by the compare kernels
// built for its gfx target (compare_kernels.h). Kernel arguments: buffers
// (device pointers, spec order), then the int64 scalars. Not yet run on an
// AMD GPU: nothing here has had one.
#pragma once

#include <memory>

#include "runner/backend.h"

namespace tf::amd {

namespace v1 = ::tunefleet::v1;

// GPU `ordinal` (HIP numbering) described by `device` (l2_bytes sizes the
// flush buffer, arch picks the compare kernels). Fails when the runtime or the
// GPU cannot be used, when the GPU is of a gfx target TuneFleet does not build
// for, or when this build has no HIP support.
Result<std::unique_ptr<runner::Backend>> MakeAmdBackend(const v1::DeviceInfo& device, int ordinal);

}  // namespace tf::amd
