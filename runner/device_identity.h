// What every kind's discovery (vendors/device_kinds.h) sets the same way in a
// device's DeviceInfo, and the one rule for its device class:
// "VENDOR/MODEL/DETAIL", MODEL as SanitizeForDeviceClass makes it and DETAIL
// what sets devices of one model apart (a GPU's architecture, a CPU device's
// core count), then "/LABEL" when the worker has a --label, which also becomes
// one of the device's labels. Jobs bind to device classes, so two kinds must
// not spell them differently.
#pragma once

#include <cstdint>
#include <string>

#include "tunefleet/v1/common.pb.h"

namespace tf::runner {

struct DeviceIdentity {
  int index = 0;       // the device's number on this worker
  std::string vendor;  // the device kind, the device class's first part
  std::string model;   // as the driver or the host names it
  std::string arch;
  std::string detail;         // the device class's last part; empty: none
  std::string label;          // the worker's --label; empty: none
  int64_t memory_bytes = 0;   // 0: not known
  int32_t compute_units = 0;  // 0: not known
};

// Sets index, vendor, model, arch, device_class, labels, memory_bytes and
// compute_units of `info`; the label is added to the labels already there.
void SetDeviceIdentity(const DeviceIdentity& identity, ::tunefleet::v1::DeviceInfo& info);

}  // namespace tf::runner
