#include "vendors/device_kinds.h"

#include "vendors/vendor.h"

namespace tf::vendors {

Result<const DeviceKind*> FindDeviceKind(std::string_view name) {
  std::string known;
  for (const DeviceKind* kind : DeviceKindRows()) {
    if (name == kind->name) return kind;
    known += known.empty() ? kind->name : std::string(", ") + kind->name;
  }
  return Status::InvalidArgument("unknown device kind '" + std::string(name) +
                                 "'; known kinds: " + known);
}

std::string DeviceKindsUsage() {
  std::string usage;
  for (const DeviceKind* kind : DeviceKindRows())
    usage += (usage.empty() ? "" : "; ") + std::string(kind->usage);
  return usage;
}

}  // namespace tf::vendors
