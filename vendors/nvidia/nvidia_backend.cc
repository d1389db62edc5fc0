#include "vendors/nvidia/nvidia_backend.h"

#ifdef TF_HAVE_CUDA_HEADERS

#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <map>

#include "common/files.h"
#include "runner/benchmark.h"
#include "vendors/nvidia/compare_kernels.h"
#include "vendors/nvidia/constant_symbol.h"
#include "vendors/nvidia/cuda_driver.h"
#include "vendors/nvidia/nvidia_sensors.h"

namespace tf::nvidia {
namespace {

// Dynamic shared memory a kernel may use without opting in.
constexpr int64_t kDefaultDynamicSharedLimit = 48 << 10;

// Enough blocks of the compare kernels to fill any GPU; they stride over the rest.
constexpr int64_t kCompareBlocks = 4096;
constexpr int kCompareThreads = 256;

// What the compare kernels accumulate (cuda_compare.cu's CompareTotals).
struct CompareTotals {
  uint64_t mismatches = 0;
  uint64_t first_mismatch = ~uint64_t{0};
  uint64_t max_abs_error_bits = 0;  // a double >= 0
};

// Pristine and working copies side by side in device memory: a reset is a
// device-to-device copy, far faster than an upload from the host.
struct NvidiaBuffers : runner::DeviceBuffers {
  explicit NvidiaBuffers(const CudaDriver& cuda) : cuda(cuda) {}
  ~NvidiaBuffers() override {
    for (CUdeviceptr pointer : pristine) cuda.cuMemFree(pointer);
    for (CUdeviceptr pointer : work) cuda.cuMemFree(pointer);
    for (const auto& [index, pointer] : reference) cuda.cuMemFree(pointer);
  }

  int64_t bytes() const override {
    int64_t total = 0;
    for (size_t size : sizes) total += 2 * static_cast<int64_t>(size);
    for (const auto& [index, pointer] : reference) total += static_cast<int64_t>(sizes[index]);
    return total;
  }

  const CudaDriver& cuda;
  std::vector<size_t> sizes;  // bytes per buffer, spec order
  std::vector<runner::Dtype> dtypes;
  std::vector<int64_t> counts;  // elements
  std::vector<CUdeviceptr> pristine;
  std::vector<CUdeviceptr> work;         // what the kernels see
  std::map<int, CUdeviceptr> reference;  // by buffer index: the reference outputs
};

NvidiaBuffers& Cuda(runner::DeviceBuffers& buffers) { return static_cast<NvidiaBuffers&>(buffers); }

class NvidiaBackend : public runner::Backend {
 public:
  NvidiaBackend(const CudaDriver& cuda, CUdevice device, CUcontext context, int64_t l2_bytes,
                std::unique_ptr<NvidiaSensors> sensors)
      : cuda_(cuda),
        device_(device),
        context_(context),
        l2_bytes_(l2_bytes),
        sensors_(std::move(sensors)) {}

  ~NvidiaBackend() override {
    if (flush_buffer_ != 0) cuda_.cuMemFree(flush_buffer_);
    if (totals_ != 0) cuda_.cuMemFree(totals_);
    Unload();
    if (compare_module_ != nullptr) cuda_.cuModuleUnload(compare_module_);
    if (start_ != nullptr) cuda_.cuEventDestroy(start_);
    if (stop_ != nullptr) cuda_.cuEventDestroy(stop_);
    cuda_.cuDevicePrimaryCtxRelease(device_);
  }

  Status Init() {
    TF_RETURN_IF_ERROR(Check(cuda_.cuCtxSetCurrent(context_), "cuCtxSetCurrent"));
    TF_RETURN_IF_ERROR(Check(cuda_.cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate"));
    TF_RETURN_IF_ERROR(Check(cuda_.cuEventCreate(&stop_, CU_EVENT_DEFAULT), "cuEventCreate"));
    TF_RETURN_IF_ERROR(Check(cuda_.cuModuleLoadData(&compare_module_, kCompareKernelsPtx),
                             "loading the runner's output-compare kernels (PTX)"));
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
      CUmodule module = nullptr;
      Status loaded = Check(cuda_.cuModuleLoadData(&module, image->data()), "cuModuleLoadData");
      if (!loaded.ok()) {
        Unload();
        return Status::FailedPrecondition("cannot load artifact " + path + ": " + loaded.message());
      }
      modules_.push_back(module);
    }
    return Status::Ok();
  }

  Result<runner::Launchable> Find(size_t artifact, const std::string& symbol) override {
    CUfunction function = nullptr;
    if (artifact >= modules_.size() ||
        cuda_.cuModuleGetFunction(&function, modules_[artifact], symbol.c_str()) != CUDA_SUCCESS) {
      return Status::NotFound("symbol '" + symbol + "' is not in the artifact");
    }
    runner::Launchable kernel;
    kernel.function = function;
    kernel.artifact = modules_[artifact];
    kernel.symbol = symbol;
    return kernel;
  }

  Result<std::unique_ptr<runner::DeviceBuffers>> Upload(
      std::vector<runner::HostBuffer> initial) override {
    auto buffers = std::make_unique<NvidiaBuffers>(cuda_);
    for (const runner::HostBuffer& buffer : initial) {
      buffers->sizes.push_back(buffer.bytes());
      buffers->dtypes.push_back(buffer.dtype());
      buffers->counts.push_back(buffer.count());
      TF_ASSIGN_OR_RETURN(CUdeviceptr pristine, Allocate(buffer.bytes()));
      buffers->pristine.push_back(pristine);
      TF_ASSIGN_OR_RETURN(CUdeviceptr work, Allocate(buffer.bytes()));
      buffers->work.push_back(work);
      TF_RETURN_IF_ERROR(
          Check(cuda_.cuMemcpyHtoD(pristine, buffer.data(), buffer.bytes()), "cuMemcpyHtoD"));
    }
    return std::unique_ptr<runner::DeviceBuffers>(std::move(buffers));
  }

  Status Reset(runner::DeviceBuffers& buffers, const std::vector<int>& outputs) override {
    NvidiaBuffers& device = Cuda(buffers);
    for (size_t i = 0; i < device.work.size(); ++i) {
      TF_RETURN_IF_ERROR(Check(
          cuda_.cuMemcpyDtoD(device.work[i], device.pristine[i], device.sizes[i]), "cuMemcpyDtoD"));
    }
    // All-ones bytes are NaN in every float dtype.
    for (int index : outputs) {
      TF_RETURN_IF_ERROR(
          Check(cuda_.cuMemsetD8(device.work[index], 0xFF, device.sizes[index]), "cuMemsetD8"));
    }
    return Status::Ok();
  }

  Status Run(const runner::Launchable& kernel, runner::DeviceBuffers& buffers,
             const std::vector<int64_t>& scalars) override {
    TF_RETURN_IF_ERROR(FillConstants(kernel, Cuda(buffers)));
    TF_ASSIGN_OR_RETURN(KernelArguments arguments, Arguments(kernel, Cuda(buffers), scalars));
    TF_RETURN_IF_ERROR(Launch(kernel, arguments));
    return Check(cuda_.cuCtxSynchronize(), "kernel execution");
  }

  Status KeepReference(runner::DeviceBuffers& buffers, const std::vector<int>& outputs) override {
    NvidiaBuffers& device = Cuda(buffers);
    for (int index : outputs) {
      if (!device.reference.contains(index)) {
        TF_ASSIGN_OR_RETURN(device.reference[index], Allocate(device.sizes[index]));
      }
      TF_RETURN_IF_ERROR(Check(
          cuda_.cuMemcpyDtoD(device.reference[index], device.work[index], device.sizes[index]),
          "cuMemcpyDtoD"));
    }
    return Status::Ok();
  }

  // On the device; only the totals, and the two elements of the first
  // mismatch, come back.
  Result<runner::Comparison> Compare(runner::DeviceBuffers& buffers, int index, double rtol,
                                     double atol) override {
    NvidiaBuffers& device = Cuda(buffers);
    auto reference = device.reference.find(index);
    if (reference == device.reference.end()) {
      return Status::FailedPrecondition("buffer " + std::to_string(index) +
                                        " has no reference output");
    }
    TF_ASSIGN_OR_RETURN(CUfunction kernel, CompareKernel(device.dtypes[index]));
    CompareTotals totals;
    TF_RETURN_IF_ERROR(Check(cuda_.cuMemcpyHtoD(totals_, &totals, sizeof totals), "cuMemcpyHtoD"));
    long long count = device.counts[index];
    void* arguments[] = {&device.work[index], &reference->second, &count, &rtol, &atol, &totals_};
    const int64_t blocks =
        std::clamp<int64_t>((count + kCompareThreads - 1) / kCompareThreads, 1, kCompareBlocks);
    TF_RETURN_IF_ERROR(
        Check(cuda_.cuLaunchKernel(kernel, static_cast<unsigned>(blocks), 1, 1, kCompareThreads, 1,
                                   1, 0, nullptr, arguments, nullptr),
              "launching the output-compare kernel"));
    TF_RETURN_IF_ERROR(
        Check(cuda_.cuMemcpyDtoH(&totals, totals_, sizeof totals), "output comparison"));
    runner::Comparison result;
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

  Result<v1::TimingStats> Time(const runner::Launchable& kernel, runner::DeviceBuffers& buffers,
                               const std::vector<int64_t>& scalars,
                               const v1::BenchmarkSettings& settings) override {
    if (settings.flush_l2() && flush_buffer_ == 0) {
      flush_bytes_ = static_cast<size_t>(runner::GpuFlushBytes(l2_bytes_));
      TF_RETURN_IF_ERROR(Check(cuda_.cuMemAlloc(&flush_buffer_, flush_bytes_),
                               "cuMemAlloc of the L2 flush buffer"));
    }
    // Filled and encoded once, so that the timed region holds only the launch
    // (kernels cannot write constant memory).
    TF_RETURN_IF_ERROR(FillConstants(kernel, Cuda(buffers)));
    TF_ASSIGN_OR_RETURN(KernelArguments arguments, Arguments(kernel, Cuda(buffers), scalars));
    runner::GpuTimingCalls calls;
    calls.launch = [&] { return Launch(kernel, arguments); };
    calls.synchronize = [&] { return Check(cuda_.cuCtxSynchronize(), "kernel execution"); };
    calls.flush_l2 = [&](unsigned char value) {
      return Check(cuda_.cuMemsetD8Async(flush_buffer_, value, flush_bytes_, nullptr), "L2 flush");
    };
    calls.device_time = [&](const std::function<Status()>& enqueue) -> Result<double> {
      TF_RETURN_IF_ERROR(Check(cuda_.cuEventRecord(start_, nullptr), "cuEventRecord"));
      TF_RETURN_IF_ERROR(enqueue());
      TF_RETURN_IF_ERROR(Check(cuda_.cuEventRecord(stop_, nullptr), "cuEventRecord"));
      TF_RETURN_IF_ERROR(Check(cuda_.cuEventSynchronize(stop_), "kernel execution"));
      float ms = 0;
      TF_RETURN_IF_ERROR(Check(cuda_.cuEventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime"));
      return ms * 1e6;
    };
    TF_ASSIGN_OR_RETURN(v1::TimingStats stats, runner::TimeOnGpu(calls, settings));
    if (sensors_ != nullptr) {
      NvidiaSensors::Reading reading = sensors_->Read();
      stats.set_core_clock_mhz(reading.sm_clock_mhz);
      stats.set_temperature_c(reading.temperature_c);
    }
    return stats;
  }

  bool lost() const override { return lost_; }

 private:
  void Unload() {
    for (CUmodule module : modules_) cuda_.cuModuleUnload(module);
    modules_.clear();
  }

  // A failed call marks the context lost when it no longer synchronizes:
  // sticky errors (illegal address, ...) fail every later call, while
  // launch errors such as too many resources requested leave it usable.
  Status Check(CUresult result, const std::string& what) {
    if (result == CUDA_SUCCESS) return Status::Ok();
    if (cuda_.cuCtxSynchronize() != CUDA_SUCCESS) lost_ = true;
    return cuda_.Check(result, what);
  }

  Result<CUfunction> CompareKernel(runner::Dtype dtype) {
    auto found = compare_kernels_.find(dtype);
    if (found != compare_kernels_.end()) return found->second;
    const std::string name = "tf_compare_" + std::string(runner::DtypeName(dtype));
    CUfunction function = nullptr;
    TF_RETURN_IF_ERROR(
        Check(cuda_.cuModuleGetFunction(&function, compare_module_, name.c_str()), name));
    return compare_kernels_[dtype] = function;
  }

  // Element `i` of the device copy `pointer` of buffer `index`, as a double.
  Result<double> Element(const NvidiaBuffers& buffers, CUdeviceptr pointer, int index, int64_t i) {
    TF_ASSIGN_OR_RETURN(runner::HostBuffer element,
                        runner::HostBuffer::Allocate(runner::DtypeName(buffers.dtypes[index]), 1));
    TF_RETURN_IF_ERROR(
        Check(cuda_.cuMemcpyDtoH(element.data(), pointer + i * element.bytes(), element.bytes()),
              "cuMemcpyDtoH"));
    return element.Get(0);
  }

  Result<CUdeviceptr> Allocate(size_t bytes) {
    CUdeviceptr pointer = 0;
    // cuMemAlloc refuses 0 bytes; an empty buffer still needs an address.
    TF_RETURN_IF_ERROR(Check(cuda_.cuMemAlloc(&pointer, std::max<size_t>(bytes, 1)),
                             "cuMemAlloc of " + std::to_string(bytes) + " bytes"));
    return pointer;
  }

  // What cuLaunchKernel points at: buffers, scalars, then tensor maps.
  struct KernelArguments {
    std::vector<CUdeviceptr> pointers;
    std::vector<int64_t> scalars;
    std::vector<CUtensorMap> tensor_maps;
    std::vector<void*> addresses;  // into the vectors above
  };

  // Copies each constant buffer's inputs into the __constant__ symbol of its
  // name in the kernel's module: the one of the kernel's own copy of the
  // source in a define-style batch, whose symbols live in its namespace.
  Status FillConstants(const runner::Launchable& kernel, const NvidiaBuffers& buffers) {
    for (const auto& [index, name] : kernel.constants) {
      const std::string symbol = ConstantSymbol(kernel.symbol, name);
      CUdeviceptr global = 0;
      size_t global_bytes = 0;
      const CUresult found = cuda_.cuModuleGetGlobal(
          &global, &global_bytes, static_cast<CUmodule>(kernel.artifact), symbol.c_str());
      // The compiler drops a __constant__ variable that no kernel of the
      // module reads (a reference using the pointer instead): nothing to fill.
      if (found == CUDA_ERROR_NOT_FOUND) continue;
      TF_RETURN_IF_ERROR(Check(found, "buffer '" + name + "' (memory: constant): the module's " +
                                          "__constant__ symbol " + symbol));
      if (global_bytes < buffers.sizes[index]) {
        return Status::InvalidArgument("buffer '" + name + "' (memory: constant) holds " +
                                       std::to_string(buffers.sizes[index]) +
                                       " bytes, but the module's __constant__ " + name + " only " +
                                       std::to_string(global_bytes));
      }
      TF_RETURN_IF_ERROR(
          Check(cuda_.cuMemcpyDtoD(global, buffers.pristine[index], buffers.sizes[index]),
                "filling __constant__ " + name));
    }
    return Status::Ok();
  }

  Result<KernelArguments> Arguments(const runner::Launchable& kernel, const NvidiaBuffers& buffers,
                                    const std::vector<int64_t>& scalars) {
    KernelArguments arguments;
    arguments.pointers = buffers.work;
    arguments.scalars = scalars;
    arguments.tensor_maps.resize(kernel.tensor_maps.size());
    for (size_t k = 0; k < kernel.tensor_maps.size(); ++k) {
      Status encoded = EncodeTensorMap(kernel.tensor_maps[k], buffers, &arguments.tensor_maps[k]);
      if (!encoded.ok()) {
        return Status(encoded.code(),
                      "tensor_maps[" + std::to_string(k) + "]: " + encoded.message());
      }
    }
    for (CUdeviceptr& pointer : arguments.pointers) arguments.addresses.push_back(&pointer);
    for (int64_t& scalar : arguments.scalars) arguments.addresses.push_back(&scalar);
    for (CUtensorMap& map : arguments.tensor_maps) arguments.addresses.push_back(&map);
    return arguments;
  }

  Status EncodeTensorMap(const runner::TensorMapLayout& layout, const NvidiaBuffers& buffers,
                         CUtensorMap* map) {
    if (cuda_.cuTensorMapEncodeTiled == nullptr) {
      return Status::FailedPrecondition(
          "this CUDA driver lacks cuTensorMapEncodeTiled (CUDA 12 or later is needed)");
    }
    static const std::map<std::string, CUtensorMapDataType> kTypes = {
        {"f16", CU_TENSOR_MAP_DATA_TYPE_FLOAT16}, {"bf16", CU_TENSOR_MAP_DATA_TYPE_BFLOAT16},
        {"f32", CU_TENSOR_MAP_DATA_TYPE_FLOAT32}, {"f64", CU_TENSOR_MAP_DATA_TYPE_FLOAT64},
        {"i8", CU_TENSOR_MAP_DATA_TYPE_UINT8},    {"u8", CU_TENSOR_MAP_DATA_TYPE_UINT8},
        {"i32", CU_TENSOR_MAP_DATA_TYPE_INT32},   {"u32", CU_TENSOR_MAP_DATA_TYPE_UINT32},
        {"i64", CU_TENSOR_MAP_DATA_TYPE_INT64},
    };
    static const std::map<int, CUtensorMapSwizzle> kSwizzles = {
        {0, CU_TENSOR_MAP_SWIZZLE_NONE},
        {32, CU_TENSOR_MAP_SWIZZLE_32B},
        {64, CU_TENSOR_MAP_SWIZZLE_64B},
        {128, CU_TENSOR_MAP_SWIZZLE_128B},
    };
    auto type = kTypes.find(layout.dtype);
    auto swizzle = kSwizzles.find(layout.swizzle_bytes);
    const size_t rank = layout.dims.size();
    if (type == kTypes.end() || swizzle == kSwizzles.end() || rank == 0 ||
        layout.box.size() != rank || layout.buffer < 0 ||
        static_cast<size_t>(layout.buffer) >= buffers.work.size()) {
      return Status::InvalidArgument("unsupported tensor map (dtype " + layout.dtype + ", rank " +
                                     std::to_string(rank) + ", swizzle " +
                                     std::to_string(layout.swizzle_bytes) + ")");
    }
    std::vector<cuuint64_t> strides;  // bytes, of every dimension but the innermost
    uint64_t stride = static_cast<uint64_t>(layout.element_bytes);
    for (size_t d = 0; d + 1 < rank; ++d) strides.push_back(stride *= layout.dims[d]);
    std::vector<cuuint32_t> element_strides(rank, 1);
    std::vector<cuuint64_t> dims(layout.dims.begin(), layout.dims.end());
    std::vector<cuuint32_t> box(layout.box.begin(), layout.box.end());
    return Check(cuda_.cuTensorMapEncodeTiled(map, type->second, static_cast<cuuint32_t>(rank),
                                              reinterpret_cast<void*>(buffers.work[layout.buffer]),
                                              dims.data(), strides.data(), box.data(),
                                              element_strides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE,
                                              swizzle->second, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                              CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                 "cuTensorMapEncodeTiled over buffer " + std::to_string(layout.buffer) +
                     " with dims (" + Join(layout.dims) + ") and box (" + Join(layout.box) + ")");
  }

  template <typename T>
  static std::string Join(const std::vector<T>& values) {
    std::string text;
    for (T value : values) text += (text.empty() ? "" : ",") + std::to_string(value);
    return text;
  }

  Status Launch(const runner::Launchable& kernel, KernelArguments& arguments) {
    for (int d = 0; d < 3; ++d) {
      if (kernel.grid[d] < 1 || kernel.grid[d] > INT_MAX || kernel.block[d] < 1 ||
          kernel.block[d] > INT_MAX) {
        return Status::InvalidArgument("launch geometry out of range: grid (" + Dims(kernel.grid) +
                                       "), block (" + Dims(kernel.block) + ")");
      }
    }
    auto function = static_cast<CUfunction>(kernel.function);
    if (kernel.shared_mem_bytes > kDefaultDynamicSharedLimit) {
      TF_RETURN_IF_ERROR(
          Check(cuda_.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         static_cast<int>(kernel.shared_mem_bytes)),
                "raising the dynamic shared memory limit to " +
                    std::to_string(kernel.shared_mem_bytes) + " bytes"));
    }
    return Check(cuda_.cuLaunchKernel(function, kernel.grid[0], kernel.grid[1], kernel.grid[2],
                                      kernel.block[0], kernel.block[1], kernel.block[2],
                                      static_cast<unsigned>(kernel.shared_mem_bytes), nullptr,
                                      arguments.addresses.data(), nullptr),
                 "cuLaunchKernel with grid (" + Dims(kernel.grid) + "), block (" +
                     Dims(kernel.block) + "), " + std::to_string(kernel.shared_mem_bytes) +
                     " bytes of dynamic shared memory");
  }

  static std::string Dims(const std::array<int64_t, 3>& dims) {
    return std::to_string(dims[0]) + "," + std::to_string(dims[1]) + "," + std::to_string(dims[2]);
  }

  const CudaDriver& cuda_;
  const CUdevice device_;
  const CUcontext context_;
  const int64_t l2_bytes_;
  const std::unique_ptr<NvidiaSensors> sensors_;  // null: no clock and temperature
  std::vector<CUmodule> modules_;                 // the loaded artifacts
  CUmodule compare_module_ = nullptr;
  std::map<runner::Dtype, CUfunction> compare_kernels_;
  CUdeviceptr totals_ = 0;  // one CompareTotals
  CUdeviceptr flush_buffer_ = 0;
  size_t flush_bytes_ = 0;
  CUevent start_ = nullptr, stop_ = nullptr;
  bool lost_ = false;
};

}  // namespace

Result<std::unique_ptr<runner::Backend>> MakeNvidiaBackend(const v1::DeviceInfo& device,
                                                           int ordinal) {
  TF_ASSIGN_OR_RETURN(const CudaDriver* cuda, CudaDriver::Get());
  const std::string what = "CUDA device " + std::to_string(ordinal);
  CUdevice handle;
  TF_RETURN_IF_ERROR(cuda->Check(cuda->cuDeviceGet(&handle, ordinal), what));
  char pci_bus_id[32] = {};
  TF_RETURN_IF_ERROR(
      cuda->Check(cuda->cuDeviceGetPCIBusId(pci_bus_id, sizeof pci_bus_id, handle), what));
  CUcontext context;
  TF_RETURN_IF_ERROR(cuda->Check(cuda->cuDevicePrimaryCtxRetain(&context, handle),
                                 what + ": cuDevicePrimaryCtxRetain"));
  const auto& props = device.properties();
  const int64_t l2_bytes = props.contains("l2_bytes") ? props.at("l2_bytes") : 0;
  auto backend = std::make_unique<NvidiaBackend>(*cuda, handle, context, l2_bytes,
                                                 NvidiaSensors::Open(pci_bus_id));
  TF_RETURN_IF_ERROR(backend->Init());
  return std::unique_ptr<runner::Backend>(std::move(backend));
}

}  // namespace tf::nvidia

#else  // !TF_HAVE_CUDA_HEADERS

namespace tf::nvidia {

Result<std::unique_ptr<runner::Backend>> MakeNvidiaBackend(const v1::DeviceInfo&, int) {
  return Status::FailedPrecondition(
      "this runner was built without the CUDA toolkit headers: it cannot run NVIDIA kernels");
}

}  // namespace tf::nvidia

#endif  // TF_HAVE_CUDA_HEADERS
