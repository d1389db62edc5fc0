#include "worker/cpu_backend.h"

#include <dlfcn.h>

namespace tf::worker {
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

}  // namespace

CpuBackend::CpuBackend(const v1::DeviceInfo& device)
    : last_level_cache_bytes_(LastLevelCacheBytes(device)) {}

CpuBackend::~CpuBackend() { Unload(); }

void CpuBackend::Unload() {
  if (library_ != nullptr) dlclose(library_);
  library_ = nullptr;
}

Status CpuBackend::Load(const std::string& artifact_path) {
  Unload();
  library_ = dlopen(artifact_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    return Status::FailedPrecondition(std::string("cannot load artifact: ") + dlerror());
  }
  return Status::Ok();
}

Result<Launchable> CpuBackend::Find(const std::string& symbol) {
  void* fn = library_ == nullptr ? nullptr : dlsym(library_, symbol.c_str());
  if (fn == nullptr) return Status::NotFound("symbol '" + symbol + "' is not in the artifact");
  Launchable kernel;
  kernel.function = fn;
  return kernel;
}

Status CpuBackend::Allocate(const std::vector<HostBuffer>& initial) {
  work_.clear();
  pointers_.clear();
  for (const HostBuffer& buffer : initial) {
    TF_ASSIGN_OR_RETURN(HostBuffer work, HostBuffer::AllocateLike(buffer));
    work_.push_back(std::move(work));
    pointers_.push_back(work_.back().data());
  }
  return Status::Ok();
}

Status CpuBackend::Reset(const std::vector<HostBuffer>& initial, const std::vector<int>& outputs) {
  for (size_t i = 0; i < work_.size(); ++i) work_[i].CopyFrom(initial[i]);
  for (int index : outputs) work_[index].Poison();
  return Status::Ok();
}

Status CpuBackend::Run(const Launchable& kernel, const std::vector<int64_t>& scalars) {
  reinterpret_cast<KernelFn>(kernel.function)(pointers_.data(), scalars.data());
  return Status::Ok();
}

Status CpuBackend::Read(int index, HostBuffer* host) {
  host->CopyFrom(work_[index]);
  return Status::Ok();
}

Result<v1::TimingStats> CpuBackend::Time(const Launchable& kernel,
                                         const std::vector<int64_t>& scalars,
                                         const v1::BenchmarkSettings& settings) {
  if (settings.flush_l2() && flusher_ == nullptr) {
    flusher_ = std::make_unique<CacheFlusher>(last_level_cache_bytes_);
  }
  KernelFn fn = reinterpret_cast<KernelFn>(kernel.function);
  void* const* buffers = pointers_.data();
  return Benchmark([&] { fn(buffers, scalars.data()); }, settings,
                   settings.flush_l2() ? flusher_.get() : nullptr);
}

}  // namespace tf::worker
