#include "vendors/nvidia/nvidia_sensors.h"

#include <spdlog/spdlog.h>

#include "common/shared_library.h"

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
    auto library = SharedLibrary::Open("libnvidia-ml.so.1", "NVML");
    if (!library.ok()) {
      spdlog::info("NVML not loadable ({}): results carry no SM clock or temperature",
                   library.status().message());
      return nullptr;
    }
    auto* loaded = new Api;  // lives as long as the process
    library->Bind(loaded->init, "nvmlInit_v2");
    library->Bind(loaded->device_by_pci_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
    library->Bind(loaded->clock_info, "nvmlDeviceGetClockInfo");
    library->Bind(loaded->temperature, "nvmlDeviceGetTemperature");
    if (const Status bound = library->CheckBound(); !bound.ok() || loaded->init() != 0) {
      spdlog::warn("NVML present but unusable ({}): results carry no SM clock or temperature",
                   bound.ok() ? "nvmlInit_v2 failed" : bound.message());
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
