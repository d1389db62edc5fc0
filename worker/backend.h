// How the runner drives one kind of device. The runner owns the problem's
// host data (inputs as generated, reference outputs) and the checking; a
// backend owns the device's copies of the buffers, loading the artifact,
// launching and timing. One backend serves every request of a runner process.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "tunefleet/v1/common.pb.h"
#include "tunefleet/v1/spec.pb.h"
#include "worker/host_buffers.h"

namespace tf::worker {

namespace v1 = ::tunefleet::v1;

// A kernel of the loaded artifact with its launch geometry (ignored by
// backends that do not launch grids).
struct Launchable {
  void* function = nullptr;  // backend-specific handle
  std::array<int64_t, 3> grid = {1, 1, 1};
  std::array<int64_t, 3> block = {1, 1, 1};
  int64_t shared_mem_bytes = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Replaces the previously loaded artifact.
  virtual Status Load(const std::string& artifact_path) = 0;
  // Errors name the missing symbol; the caller sets the geometry.
  virtual Result<Launchable> Find(const std::string& symbol) = 0;
  // The device's copies of a problem's buffers, replacing the previous
  // problem's; contents undefined until Reset.
  virtual Status Allocate(const std::vector<HostBuffer>& initial) = 0;
  // Every buffer set back to `initial`, then the `outputs` poisoned (NaN in
  // floats) so that an element the kernel never writes cannot pass.
  virtual Status Reset(const std::vector<HostBuffer>& initial, const std::vector<int>& outputs) = 0;
  // One launch, waited for.
  virtual Status Run(const Launchable& kernel, const std::vector<int64_t>& scalars) = 0;
  // Buffer `index` copied into `host` (same dtype and count).
  virtual Status Read(int index, HostBuffer* host) = 0;
  // Warm-up, then timed runs as `settings` say; sensors sampled after.
  virtual Result<v1::TimingStats> Time(const Launchable& kernel,
                                       const std::vector<int64_t>& scalars,
                                       const v1::BenchmarkSettings& settings) = 0;
  // True after an error that leaves the device unusable by this process
  // (a sticky CUDA error): the runner must exit so that a fresh one starts.
  virtual bool lost() const { return false; }
};

}  // namespace tf::worker
