// A device as a vendor's discovery finds it (vendors/device_kinds.h): what
// the worker registers, the cores its runner is pinned to and the vendor's
// own number for it, so that the rest of the worker does not care which kind
// of device it runs on.
#pragma once

#include <string>
#include <vector>

#include "tunefleet/v1/common.pb.h"

namespace tf::runner {

struct Device {
  ::tunefleet::v1::DeviceInfo info;  // as registered; info.index numbers devices on this worker
  std::vector<int> cpus;  // host cores the device's runner is pinned to; empty: not pinned
  int ordinal = 0;        // the vendor's own number of the device (its driver's ordinal)
  // What names a GPU on this host whatever ordinals a process's driver gives
  // (its vendor folder's choice: an id that partitions of one GPU do not
  // share where the driver has them), for the worker's device locks
  // (worker/device_locks.h). Empty: not a GPU.
  std::string host_id;
  // Files its runner's backend reads (a replayed recording): the worker
  // places a copy of files[n] in the runner's folder, which is the runner's
  // current directory, as DeviceFileName(n), where a confined runner can
  // read it.
  std::vector<std::string> files;
};

std::string DeviceFileName(size_t n);

// "Model X 200" -> "Model-X-200": a model name as a device class part.
std::string SanitizeForDeviceClass(const std::string& model);

}  // namespace tf::runner
