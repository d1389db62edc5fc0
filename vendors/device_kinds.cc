#include "vendors/device_kinds.h"

#include "vendors/cpu/cpu_devices.h"
#include "vendors/replay/replay_devices.h"
#ifdef TF_VENDOR_NVIDIA
#include "vendors/nvidia/nvidia_backend.h"
#include "vendors/nvidia/nvidia_devices.h"
#endif
#ifdef TF_VENDOR_AMD
#include "vendors/amd/amd_backend.h"
#include "vendors/amd/amd_devices.h"
#endif

namespace tf::vendors {
namespace {

const DeviceKind kDeviceKinds[] = {
    {"cpu", "cpu:N splits this host's cores into N devices", cpu::CheckCpuDeviceNumbers,
     cpu::DiscoverCpuDevices, cpu::MakeCpuBackend, cpu::ConfineCpuRunner, true},
#ifdef TF_VENDOR_NVIDIA
    {"nvidia", "nvidia (every NVIDIA GPU found) or nvidia:0,1 (these CUDA ordinals)",
     nvidia::CheckNvidiaDeviceNumbers, nvidia::DiscoverNvidiaDevices, nvidia::MakeNvidiaBackend,
     nvidia::ConfineNvidiaRunner, false},
#endif
#ifdef TF_VENDOR_AMD
    {"amd", "amd (every AMD GPU found) or amd:0,1 (these HIP ordinals)", amd::CheckAmdDeviceNumbers,
     amd::DiscoverAmdDevices, amd::MakeAmdBackend, amd::ConfineAmdRunner, false},
#endif
    {"replay",
     "replay:FILE (repeatable) answers from a recorded space, a Kernel Tuner cache or T4 file, "
     "gzip or not, instead of running; replay:FOLDER, from one recording per problem",
     nullptr, nullptr, replay::MakeReplayBackend, replay::ConfineReplayRunner, false,
     replay::DiscoverReplayDevice},
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

std::string DeviceKindsUsage() {
  std::string usage;
  for (const DeviceKind& kind : kDeviceKinds)
    usage += (usage.empty() ? "" : "; ") + std::string(kind.usage);
  return usage;
}

}  // namespace tf::vendors
