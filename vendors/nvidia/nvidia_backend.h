// An NVIDIA GPU as a device: runner::MakeGpuBackend over the driver API on
// the GPU's primary context. The artifact is a CUBIN loaded once per lease;
// outputs are checked on the GPU by the embedded compare kernels
// (compare_kernels.cu). Kernel arguments: buffers (device pointers, spec
// order), the int64 scalars, then the tensor maps.
#pragma once

#include <memory>

#include "runner/backend.h"

namespace tf::nvidia {

namespace v1 = ::tunefleet::v1;

// GPU `ordinal` (CUDA numbering) described by `device` (l2_bytes sizes the
// flush buffer). Fails when the driver or the GPU cannot be used, or when
// this build has no CUDA support.
Result<std::unique_ptr<runner::Backend>> MakeNvidiaBackend(const v1::DeviceInfo& device,
                                                           int ordinal);

}  // namespace tf::nvidia
