// Devices a worker benchmarks on, found at start-up. Each vendor has its own
// discovery file (cpu_devices.cc, nvidia_devices.cc) returning the same
// Device, so the rest of the worker does not care which kind it runs on.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "tunefleet/v1/common.pb.h"

namespace tf::worker {

namespace v1 = ::tunefleet::v1;

struct Device {
  v1::DeviceInfo info;    // as registered; info.index numbers devices on this worker
  std::vector<int> cpus;  // host cores the device's runner is pinned to; empty: not pinned
  int ordinal = 0;        // the vendor's own number of the device (CUDA ordinal)
};

// Parses the --devices flag and discovers those devices, numbered in order.
// Kinds are separated by commas: "cpu" or "cpu:N" (the cores split into N
// devices), "nvidia" (every NVIDIA GPU found; none on a host without them) or
// "nvidia:0,1" (these CUDA ordinals, which must exist), e.g. "cpu:1,nvidia".
// `label` (may be empty) is added to every device's labels and device class.
Result<std::vector<Device>> DiscoverDevices(std::string_view devices_flag,
                                            const std::string& label);

// "NVIDIA H200" -> "NVIDIA-H200": a model name as a device class part.
std::string SanitizeForDeviceClass(const std::string& model);

}  // namespace tf::worker
