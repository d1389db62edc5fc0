// An NVIDIA GPU as a device, through the driver API: the artifact is a CUBIN
// loaded once per lease, kernels are launched with the spec's geometry on the
// primary context of the GPU, timed with CUDA events and the L2 flushed by a
// memset over twice its size; outputs are checked on the GPU by the embedded
// compare kernels (cuda_compare.cu). Kernel arguments: buffers (device
// pointers, spec order), the int64 scalars, then the tensor maps.
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
