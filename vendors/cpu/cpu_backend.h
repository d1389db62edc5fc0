// The host CPU as a device: the artifact is a shared library whose kernels
// take (void* const* buffers, const int64_t* scalars) and run on the calling
// thread; timed with the steady clock, caches flushed by writing a buffer
// larger than the last-level cache.
#pragma once

#include <memory>

#include "runner/backend.h"
#include "runner/benchmark.h"

namespace tf::cpu {

namespace v1 = ::tunefleet::v1;

// The artifact ABI: every candidate symbol and the reference symbol.
using KernelFn = void (*)(void* const* buffers, const int64_t* scalars);

class CpuBackend : public runner::Backend {
 public:
  // The flush buffer is sized from the device's l3_bytes or l2_bytes.
  explicit CpuBackend(const v1::DeviceInfo& device);
  ~CpuBackend() override;

  Status Load(const std::vector<std::string>& artifact_paths) override;
  Result<runner::Launchable> Find(size_t artifact, const std::string& symbol) override;
  Result<std::unique_ptr<runner::DeviceBuffers>> Upload(
      std::vector<runner::HostBuffer> initial) override;
  Status Reset(runner::DeviceBuffers& buffers, const std::vector<int>& outputs) override;
  Status Run(const runner::Launchable& kernel, runner::DeviceBuffers& buffers,
             const std::vector<int64_t>& scalars) override;
  Status KeepReference(runner::DeviceBuffers& buffers, const std::vector<int>& outputs) override;
  Result<runner::Comparison> Compare(runner::DeviceBuffers& buffers, int index, double rtol,
                                     double atol) override;
  Result<v1::TimingStats> Time(const runner::Launchable& kernel, runner::DeviceBuffers& buffers,
                               const std::vector<int64_t>& scalars,
                               const v1::BenchmarkSettings& settings) override;

 private:
  void Unload();

  const int64_t last_level_cache_bytes_;
  std::unique_ptr<runner::CacheFlusher> flusher_;  // made on first use: allocated once
  std::vector<void*> libraries_;                   // dlopen handles
};

}  // namespace tf::cpu
