#include "vendors/amd/amd_sensors.h"

#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdio>

#include "common/shared_library.h"

// Built without ROCm SMI's header; where it is installed, the declarations
// below are checked against it.
#if __has_include(<rocm_smi/rocm_smi.h>)
#include <rocm_smi/rocm_smi.h>
#define TF_CHECK_ROCM_SMI_ABI
#endif

namespace tf::amd {
namespace {

// The few ROCm SMI types used.
constexpr int kMaxFrequencies = 32;  // RSMI_MAX_NUM_FREQUENCIES
struct Frequencies {                 // rsmi_frequencies_t
  uint32_t num_supported;
  uint32_t current;
  uint64_t frequency[kMaxFrequencies];  // Hz
};
constexpr int kClockSystem = 0;               // RSMI_CLK_TYPE_SYS
constexpr uint32_t kTemperatureEdge = 0;      // RSMI_TEMP_TYPE_EDGE
constexpr uint32_t kTemperatureJunction = 1;  // RSMI_TEMP_TYPE_JUNCTION
constexpr int kTemperatureCurrent = 0;        // RSMI_TEMP_CURRENT, in millidegrees

}  // namespace

#ifdef TF_CHECK_ROCM_SMI_ABI
static_assert(kMaxFrequencies == RSMI_MAX_NUM_FREQUENCIES);
static_assert(sizeof(Frequencies) == sizeof(rsmi_frequencies_t));
static_assert(offsetof(Frequencies, current) == offsetof(rsmi_frequencies_t, current));
static_assert(offsetof(Frequencies, frequency) == offsetof(rsmi_frequencies_t, frequency));
static_assert(kClockSystem == RSMI_CLK_TYPE_SYS);
static_assert(kTemperatureEdge == RSMI_TEMP_TYPE_EDGE);
static_assert(kTemperatureJunction == RSMI_TEMP_TYPE_JUNCTION);
static_assert(kTemperatureCurrent == RSMI_TEMP_CURRENT);
#endif

struct AmdSensors::Api {
  using Return = int;  // rsmi_status_t; 0 is success
  Return (*init)(uint64_t flags) = nullptr;
  Return (*status_string)(Return, const char**) = nullptr;
  Return (*num_devices)(uint32_t*) = nullptr;
  Return (*pci_id)(uint32_t, uint64_t*) = nullptr;
  Return (*clock)(uint32_t, int, Frequencies*) = nullptr;
  Return (*temperature)(uint32_t, uint32_t, int, int64_t*) = nullptr;
};

struct AmdSensors::Loaded {
  std::unique_ptr<const Api> api;  // null: ROCm SMI cannot be used
  Status status;
};

const AmdSensors::Loaded& AmdSensors::Load() {
  static const Loaded loaded = []() -> Loaded {
    auto library = SharedLibrary::Open("librocm_smi64.so.1", "ROCm SMI");
    if (!library.ok()) return {nullptr, library.status()};
    auto api = std::make_unique<Api>();
    library->Bind(api->init, "rsmi_init");
    library->Bind(api->status_string, "rsmi_status_string");
    library->Bind(api->num_devices, "rsmi_num_monitor_devices");
    library->Bind(api->pci_id, "rsmi_dev_pci_id_get");
    library->Bind(api->clock, "rsmi_dev_gpu_clk_freq_get");
    library->Bind(api->temperature, "rsmi_dev_temp_metric_get");
    if (Status bound = library->CheckBound(); !bound.ok()) return {nullptr, bound};
    // Only AMD GPUs (flags 0).
    if (const int result = api->init(0); result != 0) {
      const char* text = nullptr;
      api->status_string(result, &text);
      std::string why = "rsmi_init returned " + std::to_string(result);
      if (text != nullptr) why += ": " + std::string(text);
      return {nullptr, Status::FailedPrecondition(why)};
    }
    return {std::move(api), Status::Ok()};
  }();
  return loaded;
}

Status AmdSensors::Library() { return Load().status; }

std::unique_ptr<AmdSensors> AmdSensors::Open(const std::string& pci_bus_id) {
  const Loaded& loaded = Load();
  if (loaded.api == nullptr) {
    spdlog::info("ROCm SMI not usable ({}): results carry no core clock or temperature",
                 loaded.status.message());
    return nullptr;
  }
  const std::optional<uint64_t> wanted = PciBdfid(pci_bus_id);
  uint32_t count = 0;
  if (wanted && loaded.api->num_devices(&count) == 0) {
    for (uint32_t device = 0; device < count; ++device) {
      uint64_t bdfid = 0;
      if (loaded.api->pci_id(device, &bdfid) == 0 && bdfid == *wanted) {
        return std::unique_ptr<AmdSensors>(new AmdSensors(loaded.api.get(), device));
      }
    }
  }
  spdlog::warn("ROCm SMI does not know GPU {}: results carry no core clock or temperature",
               pci_bus_id);
  return nullptr;
}

AmdSensors::Reading AmdSensors::Read() const {
  Reading reading;
  Frequencies clocks{};
  if (api_->clock(device_, kClockSystem, &clocks) == 0 && clocks.current < clocks.num_supported &&
      clocks.current < kMaxFrequencies) {
    reading.core_clock_mhz = static_cast<double>(clocks.frequency[clocks.current]) / 1e6;
  }
  int64_t millidegrees = 0;
  if (api_->temperature(device_, kTemperatureEdge, kTemperatureCurrent, &millidegrees) == 0 ||
      api_->temperature(device_, kTemperatureJunction, kTemperatureCurrent, &millidegrees) == 0) {
    reading.temperature_c = static_cast<double>(millidegrees) / 1000;
  }
  return reading;
}

std::optional<uint64_t> PciBdfid(const std::string& pci_bus_id) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  int end = 0;
  if (std::sscanf(pci_bus_id.c_str(), "%x:%x:%x.%x%n", &domain, &bus, &device, &function, &end) !=
          4 ||
      static_cast<size_t>(end) != pci_bus_id.size() || bus > 0xff || device > 0x1f ||
      function > 7) {
    return std::nullopt;
  }
  return (uint64_t{domain} << 32) | (bus << 8) | (device << 3) | function;
}

}  // namespace tf::amd
