#include "vendors/amd/amd_devices.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "vendors/amd/gfx_targets.h"
#include "vendors/amd/hip_runtime.h"

namespace tf::amd {

Status CheckAmdDeviceNumbers(const std::vector<int>&) { return Status::Ok(); }

namespace {

// No AMD devices: an error when --devices named one (Unavailable: the driver
// may not be up yet), else a log line.
Result<std::vector<runner::Device>> NoDevices(const std::vector<int>& ordinals,
                                              const std::string& why) {
  if (!ordinals.empty()) {
    return Status::Unavailable("--devices asks for AMD GPU " + std::to_string(ordinals.front()) +
                               " but " + why);
  }
  spdlog::info("no AMD devices: {}", why);
  return std::vector<runner::Device>{};
}

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
  runner::Device device;
  device.ordinal = ordinal;
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
  info.set_index(index);
  info.set_vendor("amd");
  info.set_model(p.name);
  info.set_arch(arch);
  std::string device_class = "amd/" + runner::SanitizeForDeviceClass(p.name) + "/" + arch;
  if (!label.empty()) {
    device_class += "/" + label;
    info.add_labels(label);
  }
  info.set_device_class(device_class);
  info.set_memory_bytes(static_cast<int64_t>(p.totalGlobalMem));
  info.set_compute_units(p.multiProcessorCount);
  return device;
}

}  // namespace

Result<std::vector<runner::Device>> DiscoverAmdDevices(const std::vector<int>& ordinals,
                                                       int first_index, const std::string& label) {
  auto hip = HipRuntime::Get();
  if (!hip.ok()) return NoDevices(ordinals, hip.status().message());
  int count = 0;
  const hipError_t counted = (*hip)->hipGetDeviceCount(&count);
  if (counted == hipErrorNoDevice || (counted == hipSuccess && count == 0)) {
    return NoDevices(ordinals, "the HIP runtime sees no GPU (hipErrorNoDevice)");
  }
  TF_RETURN_IF_ERROR((*hip)->Check(counted, "hipGetDeviceCount"));
  std::vector<int> wanted = ordinals;
  for (int ordinal = 0; wanted.empty() && ordinal < count; ++ordinal) wanted.push_back(ordinal);
  std::vector<runner::Device> devices;
  for (int ordinal : wanted) {
    if (ordinal < 0 || ordinal >= count) {
      return Status::InvalidArgument("--devices asks for AMD GPU " + std::to_string(ordinal) +
                                     " but this host has " + std::to_string(count) +
                                     " (ordinals 0.." + std::to_string(count - 1) + ")");
    }
    TF_ASSIGN_OR_RETURN(
        runner::Device device,
        Describe(**hip, ordinal, first_index + static_cast<int>(devices.size()), label));
    devices.push_back(std::move(device));
  }
  return devices;
}

#else  // !TF_HAVE_HIP_HEADERS

Result<std::vector<runner::Device>> DiscoverAmdDevices(const std::vector<int>& ordinals, int,
                                                       const std::string&) {
  return NoDevices(ordinals, "this worker was built without ROCm's HIP headers");
}

#endif  // TF_HAVE_HIP_HEADERS

void ConfineAmdRunner(uint64_t memory_bytes, sandbox::Policy& policy) {
  policy.read_paths.insert(policy.read_paths.end(), {"/proc", "/sys", "/etc", "/opt/rocm"});
  policy.write_paths.insert(policy.write_paths.end(), {"/dev/shm", "/proc/self/task"});
  AllowAmdDeviceNodes("/dev", policy);
  policy.max_open_files = 4096;
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

}  // namespace tf::amd
