// CPU devices: the cores this process may use (sched_getaffinity) split into
// equal disjoint sets, one per device, so that runners benchmarking at the
// same time do not share cores. Cores left over by the split stay unused.
// The functions here make kDeviceKind (cpu_vendor.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "runner/backend.h"
#include "runner/device.h"
#include "sandbox/sandbox.h"

namespace tf::cpu {

namespace v1 = ::tunefleet::v1;

// "cpu" or "cpu:N": at most one number, the count of devices, at least 1.
Status CheckCpuDeviceNumbers(const std::vector<int>& numbers);

// `numbers` as CheckCpuDeviceNumbers allows (empty: one device). Device
// indices start at first_index.
Result<std::vector<runner::Device>> DiscoverCpuDevices(const std::vector<int>& numbers,
                                                       int first_index, const std::string& label);

// A CpuBackend (cpu_backend.h); CPU devices have no ordinal.
Result<std::unique_ptr<runner::Backend>> MakeCpuBackend(const v1::DeviceInfo& device, int ordinal);

// A CPU runner reads what describes the host's cores and memory, starts no
// processes, opens few files, and has its address space limited.
void ConfineCpuRunner(uint64_t memory_bytes, sandbox::Policy& policy);

}  // namespace tf::cpu
