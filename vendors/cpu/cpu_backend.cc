#include "vendors/cpu/cpu_backend.h"

#include <dlfcn.h>

#include <map>

namespace tf::cpu {
namespace {

// Used when the device reports no cache sizes.
constexpr int64_t kAssumedLastLevelCacheBytes = 32 << 20;

int64_t LastLevelCacheBytes(const v1::DeviceInfo& device) {
  const auto& props = device.properties();
  for (const char* name : {"l3_bytes", "l2_bytes"}) {
    if (props.contains(name) && props.at(name) > 0) return props.at(name);
  }
  return kAssumedLastLevelCacheBytes;
}

// Host memory stands in for the device's: the uploaded buffers themselves
// are the pristine copies.
struct CpuBuffers : runner::DeviceBuffers {
  int64_t bytes() const override {
    int64_t total = 0;
    for (const runner::HostBuffer& buffer : pristine)
      total += 2 * static_cast<int64_t>(buffer.bytes());
    for (const auto& [index, buffer] : reference) total += static_cast<int64_t>(buffer.bytes());
    return total;
  }

  std::vector<runner::HostBuffer> pristine;
  std::vector<runner::HostBuffer> work;         // what the kernels see
  std::vector<void*> pointers;                  // work[i].data()
  std::map<int, runner::HostBuffer> reference;  // by buffer index: the reference outputs
};

CpuBuffers& Cpu(runner::DeviceBuffers& buffers) { return static_cast<CpuBuffers&>(buffers); }

}  // namespace

CpuBackend::CpuBackend(const v1::DeviceInfo& device)
    : last_level_cache_bytes_(LastLevelCacheBytes(device)) {}

CpuBackend::~CpuBackend() { Unload(); }

void CpuBackend::Unload() {
  for (void* library : libraries_) dlclose(library);
  libraries_.clear();
}

Status CpuBackend::Load(const std::vector<std::string>& artifact_paths) {
  Unload();
  for (const std::string& path : artifact_paths) {
    void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      Unload();
      return Status::FailedPrecondition(std::string("cannot load artifact: ") + dlerror());
    }
    libraries_.push_back(library);
  }
  return Status::Ok();
}

Result<runner::Launchable> CpuBackend::Find(size_t artifact, const std::string& symbol) {
  void* fn = artifact < libraries_.size() ? dlsym(libraries_[artifact], symbol.c_str()) : nullptr;
  if (fn == nullptr) return Status::NotFound("symbol '" + symbol + "' is not in the artifact");
  runner::Launchable kernel;
  kernel.function = fn;
  return kernel;
}

Result<std::unique_ptr<runner::DeviceBuffers>> CpuBackend::Upload(
    std::vector<runner::HostBuffer> initial) {
  auto buffers = std::make_unique<CpuBuffers>();
  for (const runner::HostBuffer& buffer : initial) {
    TF_ASSIGN_OR_RETURN(runner::HostBuffer work, runner::HostBuffer::AllocateLike(buffer));
    buffers->work.push_back(std::move(work));
    buffers->pointers.push_back(buffers->work.back().data());
  }
  buffers->pristine = std::move(initial);
  return std::unique_ptr<runner::DeviceBuffers>(std::move(buffers));
}

Status CpuBackend::Reset(runner::DeviceBuffers& buffers, const std::vector<int>& outputs) {
  CpuBuffers& cpu = Cpu(buffers);
  for (size_t i = 0; i < cpu.work.size(); ++i) cpu.work[i].CopyFrom(cpu.pristine[i]);
  for (int index : outputs) cpu.work[index].Poison();
  return Status::Ok();
}

Status CpuBackend::Run(const runner::Launchable& kernel, runner::DeviceBuffers& buffers,
                       const std::vector<int64_t>& scalars) {
  reinterpret_cast<KernelFn>(kernel.function)(Cpu(buffers).pointers.data(), scalars.data());
  return Status::Ok();
}

Status CpuBackend::KeepReference(runner::DeviceBuffers& buffers, const std::vector<int>& outputs) {
  CpuBuffers& cpu = Cpu(buffers);
  for (int index : outputs) {
    TF_ASSIGN_OR_RETURN(runner::HostBuffer kept, runner::HostBuffer::AllocateLike(cpu.work[index]));
    kept.CopyFrom(cpu.work[index]);
    cpu.reference.insert_or_assign(index, std::move(kept));
  }
  return Status::Ok();
}

Result<runner::Comparison> CpuBackend::Compare(runner::DeviceBuffers& buffers, int index,
                                               double rtol, double atol) {
  CpuBuffers& cpu = Cpu(buffers);
  auto reference = cpu.reference.find(index);
  if (reference == cpu.reference.end()) {
    return Status::FailedPrecondition("buffer " + std::to_string(index) +
                                      " has no reference output");
  }
  return tf::runner::Compare(cpu.work[index], reference->second, rtol, atol);
}

Result<v1::TimingStats> CpuBackend::Time(const runner::Launchable& kernel,
                                         runner::DeviceBuffers& buffers,
                                         const std::vector<int64_t>& scalars,
                                         const v1::BenchmarkSettings& settings) {
  if (settings.flush_l2() && flusher_ == nullptr) {
    flusher_ = std::make_unique<runner::CacheFlusher>(last_level_cache_bytes_);
  }
  KernelFn fn = reinterpret_cast<KernelFn>(kernel.function);
  void* const* pointers = Cpu(buffers).pointers.data();
  return runner::Benchmark([&] { fn(pointers, scalars.data()); }, settings,
                           settings.flush_l2() ? flusher_.get() : nullptr);
}

}  // namespace tf::cpu
