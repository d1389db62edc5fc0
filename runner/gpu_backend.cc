#include "runner/gpu_backend.h"

#include <algorithm>
#include <bit>
#include <climits>

#include "common/files.h"
#include "kernelspec/config.h"
#include "runner/benchmark.h"

namespace tf::runner {
namespace {

// Enough blocks of the compare kernels to fill any GPU; they stride over the rest.
constexpr int64_t kCompareBlocks = 4096;
constexpr int kCompareThreads = 256;

// What the compare kernels accumulate.
struct CompareTotals {
  uint64_t mismatches = 0;
  uint64_t first_mismatch = ~uint64_t{0};
  uint64_t max_abs_error_bits = 0;  // a double >= 0
};

std::string Dims(const std::array<int64_t, 3>& dims) {
  return std::to_string(dims[0]) + "," + std::to_string(dims[1]) + "," + std::to_string(dims[2]);
}

GpuBuffers& Gpu(DeviceBuffers& buffers) { return static_cast<GpuBuffers&>(buffers); }

class GpuBackend : public Backend {
 public:
  GpuBackend(std::unique_ptr<GpuRuntime> runtime, int64_t l2_bytes)
      : runtime_(std::move(runtime)), l2_bytes_(l2_bytes) {}

  // Frees through the runtime, which members destroy after this.
  ~GpuBackend() override {
    if (flush_buffer_ != 0) runtime_->Free(flush_buffer_);
    if (totals_ != 0) runtime_->Free(totals_);
    Unload();
    if (compare_module_ != nullptr) runtime_->UnloadModule(compare_module_);
  }

  Status Init(const void* compare_image, const std::string& compare_what) {
    auto module = runtime_->LoadModule(compare_image);
    if (!module.ok()) {
      return Status(module.status().code(),
                    "loading " + compare_what + ": " + module.status().message());
    }
    compare_module_ = *module;
    TF_ASSIGN_OR_RETURN(totals_, Allocate(sizeof(CompareTotals)));
    return Status::Ok();
  }

  Status Load(const std::vector<std::string>& artifact_paths) override {
    Unload();
    for (const std::string& path : artifact_paths) {
      auto image = ReadFile(path);
      if (!image.ok()) {
        Unload();
        return Status::FailedPrecondition("cannot load artifact: " + image.status().message());
      }
      auto module = runtime_->LoadModule(image->data());
      if (!module.ok()) {
        Unload();
        return Status::FailedPrecondition("cannot load artifact " + path + ": " +
                                          module.status().message());
      }
      modules_.push_back(*module);
    }
    return Status::Ok();
  }

  Result<Launchable> Find(size_t artifact, const std::string& symbol) override {
    Result<void*> function = Status::NotFound("no such artifact");
    if (artifact < modules_.size()) function = runtime_->FindKernel(modules_[artifact], symbol);
    if (!function.ok()) return Status::NotFound("symbol '" + symbol + "' is not in the artifact");
    Launchable kernel;
    kernel.function = *function;
    kernel.artifact = modules_[artifact];
    kernel.symbol = symbol;
    return kernel;
  }

  Result<std::unique_ptr<DeviceBuffers>> Upload(std::vector<HostBuffer> initial) override {
    auto buffers = std::make_unique<GpuBuffers>(
        [runtime = runtime_.get()](DevicePointer pointer) { runtime->Free(pointer); });
    for (const HostBuffer& buffer : initial) {
      buffers->sizes.push_back(buffer.bytes());
      buffers->dtypes.push_back(buffer.dtype());
      buffers->counts.push_back(buffer.count());
      TF_ASSIGN_OR_RETURN(DevicePointer pristine, Allocate(buffer.bytes()));
      buffers->pristine.push_back(pristine);
      TF_ASSIGN_OR_RETURN(DevicePointer work, Allocate(buffer.bytes()));
      buffers->work.push_back(work);
      TF_RETURN_IF_ERROR(runtime_->CopyToDevice(pristine, buffer.data(), buffer.bytes()));
    }
    return std::unique_ptr<DeviceBuffers>(std::move(buffers));
  }

  Status Reset(DeviceBuffers& buffers, const std::vector<int>& outputs) override {
    GpuBuffers& device = Gpu(buffers);
    for (size_t i = 0; i < device.work.size(); ++i) {
      TF_RETURN_IF_ERROR(
          runtime_->CopyOnDevice(device.work[i], device.pristine[i], device.sizes[i]));
    }
    // All-ones bytes are NaN in every float dtype.
    for (int index : outputs) {
      TF_RETURN_IF_ERROR(
          runtime_->Fill(device.work[index], 0xFF, device.sizes[index], /*wait=*/true));
    }
    return Status::Ok();
  }

  Status Run(const Launchable& kernel, DeviceBuffers& buffers,
             const std::vector<int64_t>& scalars) override {
    TF_RETURN_IF_ERROR(FillConstants(kernel, Gpu(buffers)));
    TF_ASSIGN_OR_RETURN(Arguments arguments, MakeArguments(kernel, Gpu(buffers), scalars));
    TF_RETURN_IF_ERROR(Launch(kernel, arguments));
    return runtime_->Synchronize();
  }

  Status KeepReference(DeviceBuffers& buffers, const std::vector<int>& outputs) override {
    GpuBuffers& device = Gpu(buffers);
    for (int index : outputs) {
      if (!device.reference.contains(index)) {
        TF_ASSIGN_OR_RETURN(device.reference[index], Allocate(device.sizes[index]));
      }
      TF_RETURN_IF_ERROR(
          runtime_->CopyOnDevice(device.reference[index], device.work[index], device.sizes[index]));
    }
    return Status::Ok();
  }

  // On the device; only the totals, and the two elements of the first
  // mismatch, come back.
  Result<Comparison> Compare(DeviceBuffers& buffers, int index, double rtol, double atol) override {
    GpuBuffers& device = Gpu(buffers);
    auto reference = device.reference.find(index);
    if (reference == device.reference.end()) {
      return Status::FailedPrecondition("buffer " + std::to_string(index) +
                                        " has no reference output");
    }
    Launchable compare;
    TF_ASSIGN_OR_RETURN(compare.function, CompareKernel(device.dtypes[index]));
    long long count = device.counts[index];
    compare.grid[0] =
        std::clamp<int64_t>((count + kCompareThreads - 1) / kCompareThreads, 1, kCompareBlocks);
    compare.block[0] = kCompareThreads;
    CompareTotals totals;
    TF_RETURN_IF_ERROR(runtime_->CopyToDevice(totals_, &totals, sizeof totals));
    void* arguments[] = {&device.work[index], &reference->second, &count, &rtol, &atol, &totals_};
    TF_RETURN_IF_ERROR(runtime_->Enqueue(compare, arguments, " of the output-compare kernel"));
    TF_RETURN_IF_ERROR(runtime_->CopyToHost(&totals, totals_, sizeof totals));
    Comparison result;
    result.count = count;
    result.mismatches = static_cast<int64_t>(totals.mismatches);
    result.max_abs_error = std::bit_cast<double>(totals.max_abs_error_bits);
    if (result.mismatches > 0) {
      result.first_mismatch = static_cast<int64_t>(totals.first_mismatch);
      TF_ASSIGN_OR_RETURN(result.got,
                          Element(device, device.work[index], index, result.first_mismatch));
      TF_ASSIGN_OR_RETURN(result.expected,
                          Element(device, reference->second, index, result.first_mismatch));
    }
    return result;
  }

  Result<v1::TimingStats> Time(const Launchable& kernel, DeviceBuffers& buffers,
                               const std::vector<int64_t>& scalars,
                               const v1::BenchmarkSettings& settings) override {
    if (settings.flush_l2() && flush_buffer_ == 0) {
      flush_bytes_ = static_cast<size_t>(GpuFlushBytes(l2_bytes_));
      TF_ASSIGN_OR_RETURN(flush_buffer_, Allocate(flush_bytes_));
    }
    // Made once, so that the timed region holds only the launch.
    TF_RETURN_IF_ERROR(FillConstants(kernel, Gpu(buffers)));
    TF_ASSIGN_OR_RETURN(Arguments arguments, MakeArguments(kernel, Gpu(buffers), scalars));
    GpuTimingCalls calls;
    calls.launch = [&] { return Launch(kernel, arguments); };
    calls.synchronize = [&] { return runtime_->Synchronize(); };
    calls.flush_l2 = [&](unsigned char value) {
      return runtime_->Fill(flush_buffer_, value, flush_bytes_, /*wait=*/false);
    };
    calls.device_time = [&](const std::function<Status()>& enqueue) {
      return runtime_->DeviceTime(enqueue);
    };
    TF_ASSIGN_OR_RETURN(v1::TimingStats stats, TimeOnGpu(calls, settings));
    runtime_->ReadSensors(stats);
    return stats;
  }

  bool lost() const override { return runtime_->lost(); }

 private:
  // What a launch points at: buffers, scalars, then the runtime's extras.
  struct Arguments {
    std::vector<DevicePointer> pointers;
    std::vector<int64_t> scalars;
    std::shared_ptr<void> extras;  // holds what the last addresses point at
    std::vector<void*> addresses;
  };

  Result<Arguments> MakeArguments(const Launchable& kernel, const GpuBuffers& buffers,
                                  const std::vector<int64_t>& scalars) {
    Arguments arguments;
    arguments.pointers = buffers.work;
    arguments.scalars = scalars;
    for (DevicePointer& pointer : arguments.pointers) arguments.addresses.push_back(&pointer);
    for (int64_t& scalar : arguments.scalars) arguments.addresses.push_back(&scalar);
    TF_ASSIGN_OR_RETURN(arguments.extras,
                        runtime_->ExtraArguments(kernel, buffers, arguments.addresses));
    return arguments;
  }

  // Copies each constant buffer's inputs into the __constant__ variable of
  // its name in the kernel's module: the one of the kernel's own copy of
  // the source in a define-style batch, whose symbols live in its
  // namespace. Kernels cannot write constant memory, so once before a
  // kernel's launches.
  Status FillConstants(const Launchable& kernel, const GpuBuffers& buffers) {
    for (const auto& [index, name] : kernel.constants) {
      const std::string symbol = kernelspec::ConstantSymbol(kernel.symbol, name);
      Result<GpuRuntime::Global> global = runtime_->FindGlobal(kernel.artifact, symbol);
      // The compiler drops a __constant__ variable that no kernel of the
      // module reads (a reference using the pointer instead): nothing to fill.
      if (global.status().code() == Code::kNotFound) continue;
      if (!global.ok()) {
        return Status(global.status().code(),
                      "buffer '" + name + "' (memory: constant): " + global.status().message());
      }
      if (global->bytes < buffers.sizes[index]) {
        return Status::InvalidArgument("buffer '" + name + "' (memory: constant) holds " +
                                       std::to_string(buffers.sizes[index]) +
                                       " bytes, but the module's __constant__ " + name + " only " +
                                       std::to_string(global->bytes));
      }
      TF_RETURN_IF_ERROR(
          runtime_->CopyOnDevice(global->address, buffers.pristine[index], buffers.sizes[index]));
    }
    return Status::Ok();
  }

  Status Launch(const Launchable& kernel, Arguments& arguments) {
    for (int d = 0; d < 3; ++d) {
      if (kernel.grid[d] < 1 || kernel.grid[d] > INT_MAX || kernel.block[d] < 1 ||
          kernel.block[d] > INT_MAX) {
        return Status::InvalidArgument("launch geometry out of range: grid (" + Dims(kernel.grid) +
                                       "), block (" + Dims(kernel.block) + ")");
      }
    }
    return runtime_->Enqueue(
        kernel, arguments.addresses.data(),
        " with grid (" + Dims(kernel.grid) + "), block (" + Dims(kernel.block) + "), " +
            std::to_string(kernel.shared_mem_bytes) + " bytes of dynamic shared memory");
  }

  void Unload() {
    for (void* module : modules_) runtime_->UnloadModule(module);
    modules_.clear();
  }

  Result<void*> CompareKernel(Dtype dtype) {
    auto found = compare_kernels_.find(dtype);
    if (found != compare_kernels_.end()) return found->second;
    TF_ASSIGN_OR_RETURN(
        void* kernel,
        runtime_->FindKernel(compare_module_, "tf_compare_" + std::string(DtypeName(dtype))));
    return compare_kernels_[dtype] = kernel;
  }

  // Element `i` of the device copy `pointer` of buffer `index`, as a double.
  Result<double> Element(const GpuBuffers& buffers, DevicePointer pointer, int index, int64_t i) {
    TF_ASSIGN_OR_RETURN(HostBuffer element,
                        HostBuffer::Allocate(DtypeName(buffers.dtypes[index]), 1));
    TF_RETURN_IF_ERROR(
        runtime_->CopyToHost(element.data(), pointer + i * element.bytes(), element.bytes()));
    return element.Get(0);
  }

  // An empty buffer still needs an address.
  Result<DevicePointer> Allocate(size_t bytes) {
    return runtime_->Allocate(std::max<size_t>(bytes, 1));
  }

  const std::unique_ptr<GpuRuntime> runtime_;
  const int64_t l2_bytes_;
  std::vector<void*> modules_;  // the loaded artifacts
  void* compare_module_ = nullptr;
  std::map<Dtype, void*> compare_kernels_;
  DevicePointer totals_ = 0;  // one CompareTotals
  DevicePointer flush_buffer_ = 0;
  size_t flush_bytes_ = 0;
};

}  // namespace

Result<std::shared_ptr<void>> GpuRuntime::ExtraArguments(const Launchable& kernel,
                                                         const GpuBuffers&, std::vector<void*>&) {
  if (!kernel.tensor_maps.empty()) return Status::InvalidArgument("this GPU takes no tensor maps");
  return std::shared_ptr<void>();
}

GpuBuffers::~GpuBuffers() {
  for (DevicePointer pointer : pristine) free(pointer);
  for (DevicePointer pointer : work) free(pointer);
  for (const auto& [index, pointer] : reference) free(pointer);
}

int64_t GpuBuffers::bytes() const {
  int64_t total = 0;
  for (size_t size : sizes) total += 2 * static_cast<int64_t>(size);
  for (const auto& [index, pointer] : reference) total += static_cast<int64_t>(sizes[index]);
  return total;
}

Result<std::unique_ptr<Backend>> MakeGpuBackend(std::unique_ptr<GpuRuntime> runtime,
                                                int64_t l2_bytes, const void* compare_image,
                                                const std::string& compare_what) {
  auto backend = std::make_unique<GpuBackend>(std::move(runtime), l2_bytes);
  TF_RETURN_IF_ERROR(backend->Init(compare_image, compare_what));
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace tf::runner
