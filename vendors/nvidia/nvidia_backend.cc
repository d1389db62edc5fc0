#include "vendors/nvidia/nvidia_backend.h"

#ifdef TF_HAVE_CUDA_HEADERS

#include <map>

#include "runner/gpu_backend.h"
#include "vendors/nvidia/compare_kernels.h"
#include "vendors/nvidia/cuda_driver.h"
#include "vendors/nvidia/nvidia_sensors.h"

namespace tf::nvidia {
namespace {

// Dynamic shared memory a kernel may use without opting in.
constexpr int64_t kDefaultDynamicSharedLimit = 48 << 10;

CUdeviceptr Cuda(runner::DevicePointer pointer) { return static_cast<CUdeviceptr>(pointer); }

// The driver API on the primary context of one GPU.
class CudaRuntime : public runner::GpuRuntime {
 public:
  CudaRuntime(const CudaDriver& cuda, CUdevice device, CUcontext context,
              std::unique_ptr<NvidiaSensors> sensors)
      : cuda_(cuda), device_(device), context_(context), sensors_(std::move(sensors)) {}

  ~CudaRuntime() override {
    if (start_ != nullptr) cuda_.cuEventDestroy(start_);
    if (stop_ != nullptr) cuda_.cuEventDestroy(stop_);
    cuda_.cuDevicePrimaryCtxRelease(device_);
  }

  Status Init() {
    TF_RETURN_IF_ERROR(Check(cuda_.cuCtxSetCurrent(context_), "cuCtxSetCurrent"));
    TF_RETURN_IF_ERROR(Check(cuda_.cuEventCreate(&start_, CU_EVENT_DEFAULT), "cuEventCreate"));
    return Check(cuda_.cuEventCreate(&stop_, CU_EVENT_DEFAULT), "cuEventCreate");
  }

  Result<runner::DevicePointer> Allocate(size_t bytes) override {
    CUdeviceptr pointer = 0;
    TF_RETURN_IF_ERROR(Check(cuda_.cuMemAlloc(&pointer, bytes),
                             "cuMemAlloc of " + std::to_string(bytes) + " bytes"));
    return pointer;
  }
  void Free(runner::DevicePointer pointer) override { cuda_.cuMemFree(Cuda(pointer)); }
  Status CopyToDevice(runner::DevicePointer to, const void* from, size_t bytes) override {
    return Check(cuda_.cuMemcpyHtoD(Cuda(to), from, bytes), "cuMemcpyHtoD");
  }
  Status CopyToHost(void* to, runner::DevicePointer from, size_t bytes) override {
    return Check(cuda_.cuMemcpyDtoH(to, Cuda(from), bytes), "cuMemcpyDtoH");
  }
  Status CopyOnDevice(runner::DevicePointer to, runner::DevicePointer from, size_t bytes) override {
    return Check(cuda_.cuMemcpyDtoD(Cuda(to), Cuda(from), bytes), "cuMemcpyDtoD");
  }
  Status Fill(runner::DevicePointer to, unsigned char value, size_t bytes, bool wait) override {
    return wait ? Check(cuda_.cuMemsetD8(Cuda(to), value, bytes), "cuMemsetD8")
                : Check(cuda_.cuMemsetD8Async(Cuda(to), value, bytes, nullptr), "cuMemsetD8Async");
  }

  Result<void*> LoadModule(const void* image) override {
    CUmodule module = nullptr;
    TF_RETURN_IF_ERROR(Check(cuda_.cuModuleLoadData(&module, image), "cuModuleLoadData"));
    return module;
  }
  void UnloadModule(void* module) override { cuda_.cuModuleUnload(static_cast<CUmodule>(module)); }
  Result<void*> FindKernel(void* module, const std::string& name) override {
    CUfunction function = nullptr;
    TF_RETURN_IF_ERROR(Check(
        cuda_.cuModuleGetFunction(&function, static_cast<CUmodule>(module), name.c_str()), name));
    return function;
  }

  Status Enqueue(const runner::Launchable& kernel, void** arguments,
                 const std::string& what) override {
    auto function = static_cast<CUfunction>(kernel.function);
    if (kernel.shared_mem_bytes > kDefaultDynamicSharedLimit) {
      TF_RETURN_IF_ERROR(
          Check(cuda_.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                         static_cast<int>(kernel.shared_mem_bytes)),
                "raising the dynamic shared memory limit to " +
                    std::to_string(kernel.shared_mem_bytes) + " bytes"));
    }
    auto u = [](int64_t n) { return static_cast<unsigned>(n); };
    return Check(
        cuda_.cuLaunchKernel(function, u(kernel.grid[0]), u(kernel.grid[1]), u(kernel.grid[2]),
                             u(kernel.block[0]), u(kernel.block[1]), u(kernel.block[2]),
                             u(kernel.shared_mem_bytes), nullptr, arguments, nullptr),
        "cuLaunchKernel" + what);
  }
  Status Synchronize() override { return Check(cuda_.cuCtxSynchronize(), "kernel execution"); }
  Result<double> DeviceTime(const std::function<Status()>& enqueue) override {
    TF_RETURN_IF_ERROR(Check(cuda_.cuEventRecord(start_, nullptr), "cuEventRecord"));
    TF_RETURN_IF_ERROR(enqueue());
    TF_RETURN_IF_ERROR(Check(cuda_.cuEventRecord(stop_, nullptr), "cuEventRecord"));
    TF_RETURN_IF_ERROR(Check(cuda_.cuEventSynchronize(stop_), "kernel execution"));
    float ms = 0;
    TF_RETURN_IF_ERROR(Check(cuda_.cuEventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime"));
    return ms * 1e6;
  }
  bool lost() const override { return lost_; }

  Result<Global> FindGlobal(void* module, const std::string& name) override {
    CUdeviceptr address = 0;
    size_t bytes = 0;
    const CUresult found =
        cuda_.cuModuleGetGlobal(&address, &bytes, static_cast<CUmodule>(module), name.c_str());
    if (found == CUDA_ERROR_NOT_FOUND) return Status::NotFound("no global " + name);
    TF_RETURN_IF_ERROR(Check(found, "cuModuleGetGlobal of " + name));
    return Global{address, bytes};
  }

  // The tensor maps, encoded against the working copies.
  Result<std::shared_ptr<void>> ExtraArguments(const runner::Launchable& kernel,
                                               const runner::GpuBuffers& buffers,
                                               std::vector<void*>& addresses) override {
    auto maps = std::make_shared<std::vector<CUtensorMap>>(kernel.tensor_maps.size());
    for (size_t k = 0; k < kernel.tensor_maps.size(); ++k) {
      Status encoded = EncodeTensorMap(kernel.tensor_maps[k], buffers, &(*maps)[k]);
      if (!encoded.ok()) {
        return Status(encoded.code(),
                      "tensor_maps[" + std::to_string(k) + "]: " + encoded.message());
      }
      addresses.push_back(&(*maps)[k]);
    }
    return std::shared_ptr<void>(maps);
  }

  void ReadSensors(v1::TimingStats& stats) override {
    if (sensors_ == nullptr) return;
    NvidiaSensors::Reading reading = sensors_->Read();
    stats.set_core_clock_mhz(reading.sm_clock_mhz);
    stats.set_temperature_c(reading.temperature_c);
  }

 private:
  // A failed call marks the context lost when it no longer synchronizes:
  // sticky errors (illegal address, ...) fail every later call, while
  // launch errors such as too many resources requested leave it usable.
  Status Check(CUresult result, const std::string& what) {
    if (result == CUDA_SUCCESS) return Status::Ok();
    if (cuda_.cuCtxSynchronize() != CUDA_SUCCESS) lost_ = true;
    return cuda_.Check(result, what);
  }

  Status EncodeTensorMap(const runner::TensorMapLayout& layout, const runner::GpuBuffers& buffers,
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
    return Check(
        cuda_.cuTensorMapEncodeTiled(
            map, type->second, static_cast<cuuint32_t>(rank),
            reinterpret_cast<void*>(Cuda(buffers.work[layout.buffer])), dims.data(), strides.data(),
            box.data(), element_strides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle->second,
            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        "cuTensorMapEncodeTiled over buffer " + std::to_string(layout.buffer) + " with dims (" +
            Join(layout.dims) + ") and box (" + Join(layout.box) + ")");
  }

  template <typename T>
  static std::string Join(const std::vector<T>& values) {
    std::string text;
    for (T value : values) text += (text.empty() ? "" : ",") + std::to_string(value);
    return text;
  }

  const CudaDriver& cuda_;
  const CUdevice device_;
  const CUcontext context_;
  const std::unique_ptr<NvidiaSensors> sensors_;  // null: no clock and temperature
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
  auto runtime =
      std::make_unique<CudaRuntime>(*cuda, handle, context, NvidiaSensors::Open(pci_bus_id));
  TF_RETURN_IF_ERROR(runtime->Init());
  const auto& props = device.properties();
  const int64_t l2_bytes = props.contains("l2_bytes") ? props.at("l2_bytes") : 0;
  return runner::MakeGpuBackend(std::move(runtime), l2_bytes, kCompareKernelsPtx,
                                "the runner's output-compare kernels (PTX)");
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
