// Devices a worker benchmarks on, found at start-up. Each vendor has its own
// discovery file (cpu_devices.cc; NVIDIA through libcuda loaded with dlopen is
// the next one) returning the same Device, so the rest of the worker does not
// care which kind it runs on.
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
  std::vector<int> cpus;  // host cores the device's runner is pinned to
};

// Parses the --devices flag ("cpu:2", "cpu"; kinds separated by commas) and
// discovers those devices, numbered in order. `label` (may be empty) is added
// to every device's labels and device class.
Result<std::vector<Device>> DiscoverDevices(std::string_view devices_flag,
                                            const std::string& label);

}  // namespace tf::worker
