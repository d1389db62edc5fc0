#include "vendors/nvidia/nvidia_sensors.h"

#include <dlfcn.h>
#include <spdlog/spdlog.h>

namespace tf::nvidia {

// The few NVML entry points used; their C ABI is stable (nvml.h is not part
// of the CUDA toolkit install, so the declarations are here).
struct NvidiaSensors::Api {
  using Return = int;                        // nvmlReturn_t; 0 is success
  static constexpr int kClockSm = 1;         // NVML_CLOCK_SM
  static constexpr int kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
  Return (*init)() = nullptr;
  Return (*device_by_pci_bus_id)(const char*, void**) = nullptr;
  Return (*clock_info)(void*, int, unsigned*) = nullptr;
  Return (*temperature)(void*, int, unsigned*) = nullptr;
};

std::unique_ptr<NvidiaSensors> NvidiaSensors::Open(const std::string& pci_bus_id) {
  static const Api* api = []() -> const Api* {
    void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      spdlog::info("NVML not loadable ({}): results carry no SM clock or temperature", dlerror());
      return nullptr;
    }
    auto* loaded = new Api;  // lives as long as the process
    loaded->init = reinterpret_cast<decltype(loaded->init)>(dlsym(library, "nvmlInit_v2"));
    loaded->device_by_pci_bus_id = reinterpret_cast<decltype(loaded->device_by_pci_bus_id)>(
        dlsym(library, "nvmlDeviceGetHandleByPciBusId_v2"));
    loaded->clock_info =
        reinterpret_cast<decltype(loaded->clock_info)>(dlsym(library, "nvmlDeviceGetClockInfo"));
    loaded->temperature =
        reinterpret_cast<decltype(loaded->temperature)>(dlsym(library, "nvmlDeviceGetTemperature"));
    if (!loaded->init || !loaded->device_by_pci_bus_id || !loaded->clock_info ||
        !loaded->temperature || loaded->init() != 0) {
      spdlog::warn("NVML present but unusable: results carry no SM clock or temperature");
      return nullptr;
    }
    return loaded;
  }();
  if (api == nullptr) return nullptr;
  void* device = nullptr;
  if (api->device_by_pci_bus_id(pci_bus_id.c_str(), &device) != 0) {
    spdlog::warn("NVML does not know GPU {}: results carry no SM clock or temperature", pci_bus_id);
    return nullptr;
  }
  return std::unique_ptr<NvidiaSensors>(new NvidiaSensors(api, device));
}

NvidiaSensors::Reading NvidiaSensors::Read() const {
  Reading reading;
  unsigned value = 0;
  if (api_->clock_info(device_, Api::kClockSm, &value) == 0) reading.sm_clock_mhz = value;
  if (api_->temperature(device_, Api::kTemperatureGpu, &value) == 0) reading.temperature_c = value;
  return reading;
}

}  // namespace tf::nvidia
