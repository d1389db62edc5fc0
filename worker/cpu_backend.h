// The host CPU as a device: the artifact is a shared library whose kernels
// take (void* const* buffers, const int64_t* scalars) and run on the calling
// thread; timed with the steady clock, caches flushed by writing a buffer
// larger than the last-level cache.
#pragma once

#include <memory>

#include "worker/backend.h"
#include "worker/benchmark.h"

namespace tf::worker {

// The artifact ABI: every candidate symbol and the reference symbol.
using KernelFn = void (*)(void* const* buffers, const int64_t* scalars);

class CpuBackend : public Backend {
 public:
  // The flush buffer is sized from the device's l3_bytes or l2_bytes.
  explicit CpuBackend(const v1::DeviceInfo& device);
  ~CpuBackend() override;

  Status Load(const std::string& artifact_path) override;
  Result<Launchable> Find(const std::string& symbol) override;
  Result<std::unique_ptr<DeviceBuffers>> Upload(std::vector<HostBuffer> initial) override;
  Status Reset(DeviceBuffers& buffers, const std::vector<int>& outputs) override;
  Status Run(const Launchable& kernel, DeviceBuffers& buffers,
             const std::vector<int64_t>& scalars) override;
  Status KeepReference(DeviceBuffers& buffers, const std::vector<int>& outputs) override;
  Result<Comparison> Compare(DeviceBuffers& buffers, int index, double rtol, double atol) override;
  Result<v1::TimingStats> Time(const Launchable& kernel, DeviceBuffers& buffers,
                               const std::vector<int64_t>& scalars,
                               const v1::BenchmarkSettings& settings) override;

 private:
  void Unload();

  const int64_t last_level_cache_bytes_;
  std::unique_ptr<CacheFlusher> flusher_;  // made on first use: allocated once
  void* library_ = nullptr;                // dlopen handle
};

}  // namespace tf::worker
