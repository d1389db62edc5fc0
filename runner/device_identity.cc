#include "runner/device_identity.h"

#include "runner/device.h"

namespace tf::runner {

void SetDeviceIdentity(const DeviceIdentity& identity, ::tunefleet::v1::DeviceInfo& info) {
  info.set_index(identity.index);
  info.set_vendor(identity.vendor);
  info.set_model(identity.model);
  info.set_arch(identity.arch);
  std::string device_class = identity.vendor + "/" + SanitizeForDeviceClass(identity.model);
  if (!identity.detail.empty()) device_class += "/" + identity.detail;
  if (!identity.label.empty()) {
    device_class += "/" + identity.label;
    info.add_labels(identity.label);
  }
  info.set_device_class(device_class);
  info.set_memory_bytes(identity.memory_bytes);
  info.set_compute_units(identity.compute_units);
}

}  // namespace tf::runner
