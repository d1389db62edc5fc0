// NVIDIA GPUs, found through the CUDA driver loaded at run time. Each GPU is
// one device with its own runner process, so that a fault on one GPU never
// touches another; its device class comes from the GPU itself
// ("nvidia/NVIDIA-H200/sm_90"). The functions here make
// kDeviceKind (nvidia_vendor.h), with MakeNvidiaBackend (nvidia_backend.h).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "runner/device.h"
#include "sandbox/sandbox.h"

namespace tf::nvidia {

namespace v1 = ::tunefleet::v1;

// `ordinals` empty: every GPU the driver sees, and none (logged, not an
// error) on a host without the driver or without GPUs, so that one command
// line serves a mixed fleet. Named ordinals must exist. Device indices start
// at first_index; runners are pinned to no cores (the GPU does the work).
// Ordinals are any non-negative numbers; DiscoverNvidiaDevices checks them.
Status CheckNvidiaDeviceNumbers(const std::vector<int>& ordinals);

Result<std::vector<runner::Device>> DiscoverNvidiaDevices(const std::vector<int>& ordinals,
                                                          int first_index,
                                                          const std::string& label);

// A GPU runner also needs the driver's device files, /proc and /sys, write
// access to its own threads' /proc entries (cuInit fails with
// CUDA_ERROR_OPERATING_SYSTEM otherwise), may let the driver start its
// helpers, and has its data size limited instead of its address space (the
// driver reserves far more address space than it uses).
void ConfineNvidiaRunner(uint64_t memory_bytes, sandbox::Policy& policy);

}  // namespace tf::nvidia
