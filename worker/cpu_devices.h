// CPU devices: the cores this process may use (sched_getaffinity) split into
// equal disjoint sets, one per device, so that runners benchmarking at the
// same time do not share cores. Cores left over by the split stay unused.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "worker/devices.h"

namespace tf::worker {

// Device indices start at first_index.
Result<std::vector<Device>> DiscoverCpuDevices(int count, int first_index,
                                               const std::string& label);

}  // namespace tf::worker
