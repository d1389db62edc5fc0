// The devices a worker benchmarks on, found at start-up from its --devices
// flag by each kind's discovery (vendors/device_kinds.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "runner/device.h"

namespace tf::worker {

namespace v1 = ::tunefleet::v1;

using runner::Device;

// Parses the --devices flag and discovers those devices, numbered in order.
// Kinds are separated by commas, each optionally followed by numbers after a
// colon, which each kind checks (vendors::DeviceKindsUsage() says how), e.g.
// "cpu:1,KIND:0,1". The whole flag is checked before anything is discovered;
// an unknown kind is refused naming the known ones.
// Kinds backed by a file take a path instead of numbers and may repeat:
// "replay:a.json.gz,replay:b_cache.json" (a path must not hold a comma), one
// device each, replaying at `replay_speed`.
// `label` (may be empty) is added to every device's labels and device class.
// A kind without a device on this host is skipped ("KIND,cpu:1" where KIND
// finds none: the CPU); a flag that finds nothing at all, or a numbered GPU
// its driver does not show, fails Unavailable: the driver may not be up yet.
Result<std::vector<Device>> DiscoverDevices(std::string_view devices_flag, const std::string& label,
                                            double replay_speed = 1.0);

}  // namespace tf::worker
