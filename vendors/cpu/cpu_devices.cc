#include "vendors/cpu/cpu_devices.h"

#include <sched.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <sstream>

#include "common/files.h"
#include "runner/device_identity.h"
#include "vendors/cpu/cpu_backend.h"
#include "vendors/cpu/cpu_vendor.h"
#include "vendors/device_kinds.h"

namespace tf::cpu {
namespace {

// First value of "key : value" lines in /proc files such as cpuinfo.
std::string ProcField(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
    if (name != key) continue;
    size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

int64_t MemoryBytes() {
  // "24683548 kB"
  return std::atoll(ProcField("/proc/meminfo", "MemTotal").c_str()) * 1024;
}

// "48K" -> 49152.
int64_t ParseCacheSize(std::string text) {
  int64_t value = std::atoll(text.c_str());
  if (text.find('K') != std::string::npos) value <<= 10;
  if (text.find('M') != std::string::npos) value <<= 20;
  return value;
}

struct CacheSizes {
  int64_t l1d = 0, l2 = 0, l3 = 0;
};

// From sysfs for `cpu`; virtual machines often lack it, then glibc's CPUID
// answers (sysconf).
CacheSizes CacheSizesOf(int cpu) {
  CacheSizes sizes;
  std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/index";
  for (int i = 0;; ++i) {
    std::string dir = base + std::to_string(i);
    auto level = ReadFile(dir + "/level");
    auto type = ReadFile(dir + "/type");
    auto size = ReadFile(dir + "/size");
    if (!level.ok() || !type.ok() || !size.ok()) break;
    int64_t bytes = ParseCacheSize(*size);
    switch (std::atoi(level->c_str())) {
      case 1:
        if (type->starts_with("Data") || type->starts_with("Unified")) sizes.l1d = bytes;
        break;
      case 2:
        sizes.l2 = bytes;
        break;
      case 3:
        sizes.l3 = bytes;
        break;
    }
  }
  if (sizes.l1d == 0) sizes.l1d = sysconf(_SC_LEVEL1_DCACHE_SIZE);
  if (sizes.l2 == 0) sizes.l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (sizes.l3 == 0) sizes.l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return sizes;
}

}  // namespace

Status CheckCpuDeviceNumbers(const std::vector<int>& numbers) {
  if (numbers.size() > 1 || (!numbers.empty() && numbers[0] < 1)) {
    return Status::InvalidArgument("count must be a positive integer");
  }
  return Status::Ok();
}

Result<std::vector<runner::Device>> DiscoverCpuDevices(const std::vector<int>& numbers,
                                                       int first_index, const std::string& label) {
  const int count = numbers.empty() ? 1 : numbers[0];
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    return Status::Internal(
        "sched_getaffinity failed: cannot tell which cores this worker may use");
  }
  std::vector<int> cores;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cores.push_back(cpu);
  }
  if (count < 1 || static_cast<size_t>(count) > cores.size()) {
    return Status::InvalidArgument("cannot make " + std::to_string(count) +
                                   " CPU devices: this worker may use " +
                                   std::to_string(cores.size()) + " cores");
  }
  const int per_device = static_cast<int>(cores.size()) / count;
  std::string model = ProcField("/proc/cpuinfo", "model name");
  if (model.empty()) model = "unknown";
  const int64_t memory = MemoryBytes();
  const CacheSizes caches = CacheSizesOf(cores[0]);

  std::vector<runner::Device> devices;
  for (int d = 0; d < count; ++d) {
    runner::Device device;
    device.cpus.assign(cores.begin() + d * per_device, cores.begin() + (d + 1) * per_device);
    v1::DeviceInfo& info = device.info;
    runner::SetDeviceIdentity({.index = first_index + d,
                               .vendor = "cpu",
                               .model = model,
                               .arch = "host",
                               .detail = std::to_string(per_device) + "c",
                               .label = label,
                               .memory_bytes = memory,
                               .compute_units = per_device},
                              info);
    auto& props = *info.mutable_properties();
    props["cores"] = per_device;
    props["l1d_bytes"] = caches.l1d;
    props["l2_bytes"] = caches.l2;
    props["l3_bytes"] = caches.l3;
    props["memory_bytes"] = memory;
    devices.push_back(std::move(device));
  }
  return devices;
}

Result<std::unique_ptr<runner::Backend>> MakeCpuBackend(const v1::DeviceInfo& device, int) {
  return std::unique_ptr<runner::Backend>(std::make_unique<CpuBackend>(device));
}

void ConfineCpuRunner(uint64_t memory_bytes, sandbox::Policy& policy) {
  policy.read_paths.insert(policy.read_paths.end(), {"/proc/cpuinfo", "/proc/meminfo", "/proc/stat",
                                                     "/sys/devices/system/cpu", "/sys/fs/cgroup"});
  policy.allow_processes = false;
  policy.max_open_files = 256;
  policy.max_address_space_bytes = memory_bytes;
}

const vendors::DeviceKind kDeviceKind = {kNames.vendor,
                                         "cpu:N splits this host's cores into N devices",
                                         CheckCpuDeviceNumbers,
                                         DiscoverCpuDevices,
                                         MakeCpuBackend,
                                         ConfineCpuRunner,
                                         true};

}  // namespace tf::cpu
