#include "vendors/amd/amd_devices.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "runner/device_identity.h"
#include "runner/gpu_discovery.h"
#include "vendors/amd/amd_backend.h"
#include "vendors/amd/amd_vendor.h"
#include "vendors/amd/gfx_targets.h"
#include "vendors/amd/hip_runtime.h"
#include "vendors/device_kinds.h"

namespace tf::amd {

Status CheckAmdDeviceNumbers(const std::vector<int>&) { return Status::Ok(); }

namespace {

// Messages name the GPUs "AMD GPU N" (runner/gpu_discovery.h).
constexpr char kVendor[] = "AMD";

}  // namespace

#ifdef TF_HAVE_HIP_HEADERS

namespace {

Result<runner::Device> Describe(const HipRuntime& hip, int ordinal, int index,
                                const std::string& label) {
  hipDeviceProp_t p{};
  TF_RETURN_IF_ERROR(hip.Check(hip.hipGetDeviceProperties(&p, ordinal),
                               "hipGetDeviceProperties of AMD GPU " + std::to_string(ordinal)));
  const std::string gcn_arch = p.gcnArchName;  // "gfx90a:sramecc+:xnack-"
  const std::string arch = gcn_arch.substr(0, gcn_arch.find(':'));
  char pci_bus_id[32] = {};
  TF_RETURN_IF_ERROR(hip.Check(hip.hipDeviceGetPCIBusId(pci_bus_id, sizeof pci_bus_id, ordinal),
                               "hipDeviceGetPCIBusId of AMD GPU " + std::to_string(ordinal)));
  runner::Device device;
  device.ordinal = ordinal;
  device.host_id = pci_bus_id;
  v1::DeviceInfo& info = device.info;
  auto& props = *info.mutable_properties();
  props["compute_units"] = p.multiProcessorCount;
  props["max_threads_per_block"] = p.maxThreadsPerBlock;
  props["max_shared_mem_per_block"] = static_cast<int64_t>(p.sharedMemPerBlock);
  props["wave_size"] = p.warpSize;
  props["l2_bytes"] = p.l2CacheSize;
  props["clock_khz"] = p.clockRate;
  props["memory_clock_khz"] = p.memoryClockRate;
  props["memory_bus_width"] = p.memoryBusWidth;
  props["memory_bytes"] = static_cast<int64_t>(p.totalGlobalMem);
  if (const GfxTarget* target = FindGfxTarget(arch)) {
    props["simds_per_cu"] = target->simds;
    props["vgprs_per_simd_lane"] = target->vgprs_per_simd_lane;
  } else {
    spdlog::warn("AMD GPU {} is {}, which TuneFleet does not compile for ({})", ordinal, arch,
                 GfxTargetNames());
  }
  runner::SetDeviceIdentity({.index = index,
                             .vendor = "amd",
                             .model = p.name,
                             .arch = arch,
                             .detail = arch,
                             .label = label,
                             .memory_bytes = static_cast<int64_t>(p.totalGlobalMem),
                             .compute_units = p.multiProcessorCount},
                            info);
  return device;
}

}  // namespace

Result<std::vector<runner::Device>> DiscoverAmdDevices(const std::vector<int>& ordinals,
                                                       int first_index, const std::string& label) {
  auto hip = HipRuntime::Get();
  if (!hip.ok()) return runner::NoGpus(kVendor, ordinals, hip.status().message());
  int count = 0;
  const hipError_t counted = (*hip)->hipGetDeviceCount(&count);
  if (counted == hipErrorNoDevice || (counted == hipSuccess && count == 0)) {
    return runner::NoGpus(kVendor, ordinals, "the HIP runtime sees no GPU (hipErrorNoDevice)");
  }
  TF_RETURN_IF_ERROR((*hip)->Check(counted, "hipGetDeviceCount"));
  return runner::DescribeGpus(kVendor, ordinals, count, first_index, [&](int ordinal, int index) {
    return Describe(**hip, ordinal, index, label);
  });
}

#else  // !TF_HAVE_HIP_HEADERS

Result<std::vector<runner::Device>> DiscoverAmdDevices(const std::vector<int>& ordinals, int,
                                                       const std::string&) {
  return runner::NoGpus(kVendor, ordinals, "this worker was built without ROCm's HIP headers");
}

#endif  // TF_HAVE_HIP_HEADERS

void ConfineAmdRunner(uint64_t memory_bytes, sandbox::Policy& policy) {
  policy.read_paths.insert(policy.read_paths.end(), {"/proc", "/sys", "/etc", "/opt/rocm"});
  policy.write_paths.insert(policy.write_paths.end(), {"/dev/shm", "/proc/self/task"});
  AllowAmdDeviceNodes("/dev", policy);
  policy.max_open_files = 4096;
  policy.allow_unix_sockets = true;  // the driver's; the candidates are device code
  policy.max_data_bytes = memory_bytes;
}

void AllowAmdDeviceNodes(const std::string& dev, sandbox::Policy& policy) {
  std::set<uint32_t> groups;
  auto add_group = [&](const std::filesystem::path& node) {
    struct stat st;
    if (stat(node.c_str(), &st) == 0 && st.st_gid != 0) groups.insert(st.st_gid);
  };
  for (const std::string name : {"kfd", "dri"}) {
    const std::filesystem::path node = dev + "/" + name;
    std::error_code error;
    if (!std::filesystem::exists(node, error)) continue;
    policy.write_paths.push_back(node.string());
    add_group(node);
    if (std::filesystem::is_directory(node, error)) {
      for (const auto& entry : std::filesystem::directory_iterator(node, error)) {
        add_group(entry.path());
      }
    }
  }
  for (uint32_t group : groups) {
    if (std::find(policy.keep_groups.begin(), policy.keep_groups.end(), group) ==
        policy.keep_groups.end()) {
      policy.keep_groups.push_back(group);
    }
  }
}

const vendors::DeviceKind kDeviceKind = {
    kNames.vendor,
    "amd (every AMD GPU found) or amd:0,1 (these HIP ordinals)",
    CheckAmdDeviceNumbers,
    DiscoverAmdDevices,
    MakeAmdBackend,
    ConfineAmdRunner,
    false};

}  // namespace tf::amd
