// SM clock and temperature of an NVIDIA GPU through NVML, loaded at run time
// from libnvidia-ml.so.1: a timing means little without the clock it ran at
// (a throttling GPU runs slower). Absent NVML, results simply carry no clock.
#pragma once

#include <memory>
#include <string>

namespace tf::nvidia {

class NvidiaSensors {
 public:
  // The GPU at `pci_bus_id` ("0000:3B:00.0", as cuDeviceGetPCIBusId gives
  // it, so that CUDA and NVML numbering cannot disagree); null when NVML or
  // the GPU cannot be reached.
  static std::unique_ptr<NvidiaSensors> Open(const std::string& pci_bus_id);

  struct Reading {
    double sm_clock_mhz = 0;   // 0: not read
    double temperature_c = 0;  // 0: not read
  };
  Reading Read() const;

 private:
  struct Api;
  NvidiaSensors(const Api* api, void* device) : api_(api), device_(device) {}
  const Api* api_;
  void* device_;  // nvmlDevice_t
};

}  // namespace tf::nvidia
