// Core clock and temperature of an AMD GPU through ROCm SMI, loaded at run
// time from librocm_smi64.so.1 (Debian's librocm-smi64-1, ROCm 5's ABI) so
// that one worker binary runs where it is absent: a timing means little
// without the clock it ran at (a throttling GPU runs slower). Absent ROCm SMI,
// or where rsmi_init fails (no amdgpu driver, or no write access to the
// /dev/shm mutexes it creates), results simply carry no clock, as on NVIDIA
// without NVML (nvidia_sensors.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"

namespace tf::amd {

class AmdSensors {
 public:
  // ROCm SMI loaded and initialised, once per process: Unavailable when the
  // library cannot be loaded, FailedPrecondition when it is there but
  // rsmi_init fails (as on a host whose kernel shows no AMD GPU).
  static Status Library();

  // The GPU at `pci_bus_id` ("0000:c1:00.0", as hipDeviceGetPCIBusId gives
  // it, so that HIP and ROCm SMI numbering cannot disagree); null when ROCm
  // SMI or the GPU cannot be reached.
  static std::unique_ptr<AmdSensors> Open(const std::string& pci_bus_id);

  struct Reading {
    double core_clock_mhz = 0;  // the system clock (sclk); 0: not read
    double temperature_c = 0;   // edge, or junction where there is no edge sensor; 0: not read
  };
  Reading Read() const;

 private:
  struct Api;
  struct Loaded;
  // ROCm SMI once per process: its entry points, or why there are none.
  static const Loaded& Load();
  AmdSensors(const Api* api, uint32_t device) : api_(api), device_(device) {}
  const Api* api_;
  uint32_t device_;  // ROCm SMI's device index
};

// ROCm SMI's identifier of the PCI function "DOMAIN:BUS:DEVICE.FUNCTION" (hex):
// (domain << 32) | (bus << 8) | (device << 3) | function. Nullopt when the text
// is not one.
std::optional<uint64_t> PciBdfid(const std::string& pci_bus_id);

}  // namespace tf::amd
