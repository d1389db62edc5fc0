// What every GPU backend does the same way, written once over the calls of
// its vendor's runtime (GpuRuntime): the device copies of a problem's
// buffers (pristine, working and reference side by side, so that a reset is
// a device-to-device copy), launches checked for their geometry, outputs
// compared where they lie by the vendor's compare kernels, and timing by
// TimeOnGpu with an L2 flush buffer of GpuFlushBytes. A GPU vendor supplies
// a GpuRuntime and its compare kernels; nothing else. Constant buffers
// (memory: constant) are copied into the module's `__constant__` variable of
// their name before a kernel's launches.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runner/backend.h"

namespace tf::runner {

// A device address, whatever the runtime calls it (CUdeviceptr, void*).
using DevicePointer = uint64_t;

// One problem's buffers on a GPU, in spec order.
struct GpuBuffers : DeviceBuffers {
  explicit GpuBuffers(std::function<void(DevicePointer)> free) : free(std::move(free)) {}
  ~GpuBuffers() override;
  int64_t bytes() const override;

  const std::function<void(DevicePointer)> free;
  std::vector<size_t> sizes;  // bytes per buffer
  std::vector<Dtype> dtypes;
  std::vector<int64_t> counts;  // elements
  std::vector<DevicePointer> pristine;
  std::vector<DevicePointer> work;         // what the kernels see
  std::map<int, DevicePointer> reference;  // by buffer index: the reference outputs
};

// The calls of one GPU's runtime, on its default stream. Every failing call
// returns the runtime's own error, naming the call; a runtime whose device
// no longer synchronizes after a failure (a sticky error: an illegal
// address) reports itself lost.
class GpuRuntime {
 public:
  virtual ~GpuRuntime() = default;

  virtual Result<DevicePointer> Allocate(size_t bytes) = 0;  // bytes >= 1
  virtual void Free(DevicePointer pointer) = 0;
  virtual Status CopyToDevice(DevicePointer to, const void* from, size_t bytes) = 0;
  virtual Status CopyToHost(void* to, DevicePointer from, size_t bytes) = 0;
  virtual Status CopyOnDevice(DevicePointer to, DevicePointer from, size_t bytes) = 0;
  // Sets `bytes` bytes to `value`, waited for or only enqueued.
  virtual Status Fill(DevicePointer to, unsigned char value, size_t bytes, bool wait) = 0;

  // Modules: a loaded artifact or compare-kernel image, and their kernels.
  virtual Result<void*> LoadModule(const void* image) = 0;
  virtual void UnloadModule(void* module) = 0;
  // NotFound when the module has no kernel `name`.
  virtual Result<void*> FindKernel(void* module, const std::string& name) = 0;

  // Enqueues kernel.function with its grid, block and dynamic shared memory
  // (checked in range by the caller) on `arguments`; errors end with `what`.
  virtual Status Enqueue(const Launchable& kernel, void** arguments, const std::string& what) = 0;
  virtual Status Synchronize() = 0;
  // The device's time in ns of what `enqueue` enqueues: events around it.
  virtual Result<double> DeviceTime(const std::function<Status()>& enqueue) = 0;
  virtual bool lost() const = 0;

  // A module's global variable (a `__constant__` one): its address and
  // size, or NotFound when the module has none of that name.
  struct Global {
    DevicePointer address = 0;
    size_t bytes = 0;
  };
  virtual Result<Global> FindGlobal(void* module, const std::string& name) = 0;
  // Appends the addresses of the arguments this runtime passes after the
  // scalars (tensor maps, where the GPU takes them) and returns what holds
  // them. By default there are none, and a kernel with tensor maps is refused.
  virtual Result<std::shared_ptr<void>> ExtraArguments(const Launchable& kernel,
                                                       const GpuBuffers& buffers,
                                                       std::vector<void*>& addresses);
  // The clock and temperature after a timing, where the vendor's sensors say.
  virtual void ReadSensors(v1::TimingStats& /*stats*/) {}
};

// The backend over `runtime`: `l2_bytes` sizes the flush buffer; the module
// `compare_image` holds the compare kernels `tf_compare_<dtype>` (each
// (work, reference, long long count, double rtol, double atol, totals), the
// totals three unsigned 64-bit integers: mismatches, first mismatch, the
// largest absolute error's bits), `compare_what` names it in errors.
Result<std::unique_ptr<Backend>> MakeGpuBackend(std::unique_ptr<GpuRuntime> runtime,
                                                int64_t l2_bytes, const void* compare_image,
                                                const std::string& compare_what);

}  // namespace tf::runner
