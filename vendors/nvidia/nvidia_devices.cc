#include "vendors/nvidia/nvidia_devices.h"

#include "runner/device_identity.h"
#include "runner/gpu_discovery.h"
#include "vendors/device_kinds.h"
#include "vendors/nvidia/cuda_driver.h"
#include "vendors/nvidia/nvidia_backend.h"
#include "vendors/nvidia/nvidia_vendor.h"

namespace tf::nvidia {

Status CheckNvidiaDeviceNumbers(const std::vector<int>&) { return Status::Ok(); }

namespace {

// Messages name the GPUs "NVIDIA GPU N" (runner/gpu_discovery.h).
constexpr char kVendor[] = "NVIDIA";

}  // namespace

#ifdef TF_HAVE_CUDA_HEADERS

namespace {

// As nvidia-smi writes it, without its prefix.
std::string UuidText(const CUuuid& uuid) {
  std::string text;
  for (int i = 0; i < 16; ++i) {
    static constexpr char kHex[] = "0123456789abcdef";
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    const auto byte = static_cast<unsigned char>(uuid.bytes[i]);
    text += kHex[byte >> 4];
    text += kHex[byte & 15];
  }
  return text;
}

Result<runner::Device> Describe(const CudaDriver& cuda, int ordinal, int index,
                                const std::string& label) {
  const std::string what = "CUDA device " + std::to_string(ordinal);
  CUdevice handle;
  TF_RETURN_IF_ERROR(cuda.Check(cuda.cuDeviceGet(&handle, ordinal), what));
  char name[256] = {};
  TF_RETURN_IF_ERROR(cuda.Check(cuda.cuDeviceGetName(name, sizeof name - 1, handle), what));
  size_t memory = 0;
  TF_RETURN_IF_ERROR(cuda.Check(cuda.cuDeviceTotalMem(&memory, handle), what));
  // The UUID, not the PCI bus id, which the MIG instances of one GPU share.
  CUuuid uuid;
  TF_RETURN_IF_ERROR(cuda.Check(cuda.cuDeviceGetUuid(&uuid, handle), what));

  runner::Device device;
  device.ordinal = ordinal;
  device.host_id = UuidText(uuid);
  v1::DeviceInfo& info = device.info;
  auto& props = *info.mutable_properties();
  const std::pair<const char*, CUdevice_attribute> kAttributes[] = {
      {"sm_count", CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT},
      {"max_threads_per_block", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
      {"max_shared_mem_per_block", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK},
      {"max_shared_mem_per_block_optin", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN},
      {"max_shared_mem_per_sm", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR},
      {"regs_per_block", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK},
      {"regs_per_sm", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR},
      {"l2_bytes", CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE},
      {"warp_size", CU_DEVICE_ATTRIBUTE_WARP_SIZE},
      {"clock_khz", CU_DEVICE_ATTRIBUTE_CLOCK_RATE},
      {"memory_clock_khz", CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE},
      {"memory_bus_width", CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH},
      {"cc_major", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR},
      {"cc_minor", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR},
  };
  for (const auto& [property, attribute] : kAttributes) {
    int value = 0;
    TF_RETURN_IF_ERROR(cuda.Check(cuda.cuDeviceGetAttribute(&value, attribute, handle),
                                  what + ": attribute " + property));
    props[property] = value;
  }
  props["memory_bytes"] = static_cast<int64_t>(memory);

  const std::string arch =
      "sm_" + std::to_string(props["cc_major"]) + std::to_string(props["cc_minor"]);
  runner::SetDeviceIdentity({.index = index,
                             .vendor = "nvidia",
                             .model = name,
                             .arch = arch,
                             .detail = arch,
                             .label = label,
                             .memory_bytes = static_cast<int64_t>(memory),
                             .compute_units = static_cast<int32_t>(props["sm_count"])},
                            info);
  return device;
}

}  // namespace

Result<std::vector<runner::Device>> DiscoverNvidiaDevices(const std::vector<int>& ordinals,
                                                          int first_index,
                                                          const std::string& label) {
  auto cuda = CudaDriver::Get();
  if (!cuda.ok()) return runner::NoGpus(kVendor, ordinals, cuda.status().message());
  int count = 0;
  if (const Status counted = (*cuda)->Check((*cuda)->cuDeviceGetCount(&count), "cuDeviceGetCount");
      !counted.ok()) {
    return runner::NoGpus(kVendor, ordinals, counted.message());
  }
  if (count == 0) return runner::NoGpus(kVendor, ordinals, "the CUDA driver sees no GPU");
  return runner::DescribeGpus(kVendor, ordinals, count, first_index, [&](int ordinal, int index) {
    return Describe(**cuda, ordinal, index, label);
  });
}

#else  // !TF_HAVE_CUDA_HEADERS

Result<std::vector<runner::Device>> DiscoverNvidiaDevices(const std::vector<int>& ordinals, int,
                                                          const std::string&) {
  return runner::NoGpus(kVendor, ordinals, "this worker was built without the CUDA toolkit headers",
                        Code::kFailedPrecondition);
}

#endif  // TF_HAVE_CUDA_HEADERS

void ConfineNvidiaRunner(uint64_t memory_bytes, sandbox::Policy& policy) {
  policy.read_paths.insert(policy.read_paths.end(), {"/proc", "/sys", "/etc"});
  policy.write_paths.insert(policy.write_paths.end(), {"/dev", "/proc/self/task"});
  policy.max_open_files = 4096;
  policy.allow_unix_sockets = true;  // the driver's; the candidates are device code
  policy.max_data_bytes = memory_bytes;
}

const vendors::DeviceKind kDeviceKind = {
    kNames.vendor,
    "nvidia (every NVIDIA GPU found) or nvidia:0,1 (these CUDA ordinals)",
    CheckNvidiaDeviceNumbers,
    DiscoverNvidiaDevices,
    MakeNvidiaBackend,
    ConfineNvidiaRunner,
    false};

}  // namespace tf::nvidia
