// An AMD GPU as a device, through the HIP runtime (hip_runtime.h), shaped
// like the NVIDIA backend so that the first AMD host is a run, not a port:
// the artifact is a code object loaded with hipModuleLoadData, kernels are
// launched with hipModuleLaunchKernel and the spec's geometry, timed with HIP
// events after a warm-up, the L2 flushed by a memset over twice its size,
// repeats and statistics by runner::RepeatRuns, with the core clock and
// temperature from ROCm SMI where it is present (amd_sensors.h). Outputs are
// checked on the GPU by the compare kernels built for its gfx target
// (compare_kernels.h), with runner::Compare's rule. Kernel arguments:
// buffers (device pointers, spec order), then the int64 scalars. Sticky
// errors (an illegal address, a failed launch) mark the backend lost, so the
// runner restarts. Not yet run on an AMD GPU: nothing here has had one.
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
