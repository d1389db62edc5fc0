#include "vendors/device_kinds.h"

#include "vendors/cpu/cpu_devices.h"
#include "vendors/replay/replay_devices.h"
#ifdef TF_VENDOR_NVIDIA
#include "vendors/nvidia/nvidia_backend.h"
#include "vendors/nvidia/nvidia_devices.h"
#endif

namespace tf::vendors {
namespace {

const DeviceKind kDeviceKinds[] = {
    {"cpu", cpu::CheckCpuDeviceNumbers, cpu::DiscoverCpuDevices, cpu::MakeCpuBackend},
#ifdef TF_VENDOR_NVIDIA
    {"nvidia", nvidia::CheckNvidiaDeviceNumbers, nvidia::DiscoverNvidiaDevices,
     nvidia::MakeNvidiaBackend},
#endif
    {"replay", nullptr, nullptr, replay::MakeReplayBackend, replay::DiscoverReplayDevice},
};

}  // namespace

Result<const DeviceKind*> FindDeviceKind(std::string_view name) {
  std::string known;
  for (const DeviceKind& kind : kDeviceKinds) {
    if (name == kind.name) return &kind;
    known += known.empty() ? kind.name : std::string(", ") + kind.name;
  }
  return Status::InvalidArgument("unknown device kind '" + std::string(name) +
                                 "'; known kinds: " + known);
}

}  // namespace tf::vendors
