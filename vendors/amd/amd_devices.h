// AMD GPUs, found through the HIP runtime loaded at run time. Each GPU is one
// device with its own runner process; its device class comes from the GPU
// itself ("amd/AMD-Instinct-MI300X/gfx942"). The functions here make
// kDeviceKind (amd_vendor.h), with MakeAmdBackend (amd_backend.h).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "runner/device.h"
#include "sandbox/sandbox.h"

namespace tf::amd {

namespace v1 = ::tunefleet::v1;

// Ordinals are any non-negative numbers; DiscoverAmdDevices checks them.
Status CheckAmdDeviceNumbers(const std::vector<int>& ordinals);

// `ordinals` empty: every GPU HIP sees, and none (logged, not an error) on a
// host without the runtime or without GPUs (hipGetDeviceCount returns
// hipErrorNoDevice), so that one command line serves a mixed fleet. Named
// ordinals must exist. Properties: compute_units, max_threads_per_block,
// max_shared_mem_per_block (LDS), wave_size, l2_bytes, clock_khz,
// memory_bytes, and from the gfx target simds_per_cu and vgprs_per_simd_lane
// (gfx_targets.h), which HIP does not report.
Result<std::vector<runner::Device>> DiscoverAmdDevices(const std::vector<int>& ordinals,
                                                       int first_index, const std::string& label);

// A GPU runner also needs the AMD device nodes (AllowAmdDeviceNodes on
// /dev), /dev/shm (ROCm SMI's per-GPU mutexes), /sys (the runtime reads the
// topology in /sys/class/kfd, ROCm SMI the clocks in /sys/class/drm) and
// /proc, and has its data size limited instead of its address space.
void ConfineAmdRunner(uint64_t memory_bytes, sandbox::Policy& policy);

// Of `dev` ("/dev", or a test's folder), the AMD device nodes that exist: the
// kernel driver's kfd and the dri folder of render nodes become writable,
// and the groups owning them (render, video: the nodes are mode 0660), root's
// aside, are kept when the runner becomes nobody (an NVIDIA node is 0666 and
// needs no group). Nothing is added for nodes that are not there.
void AllowAmdDeviceNodes(const std::string& dev, sandbox::Policy& policy);

}  // namespace tf::amd
