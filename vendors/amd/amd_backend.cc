#include "vendors/amd/amd_backend.h"

#ifdef TF_HAVE_HIP_HEADERS

#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <map>

#include "common/files.h"
#include "runner/benchmark.h"
#include "vendors/amd/amd_sensors.h"
#include "vendors/amd/compare_kernels.h"
#include "vendors/amd/gfx_targets.h"
#include "vendors/amd/hip_runtime.h"

namespace tf::amd {
namespace {

// Enough workgroups of the compare kernels to fill any GPU; they stride over the rest.
constexpr int64_t kCompareBlocks = 4096;
constexpr int kCompareThreads = 256;

// What the compare kernels accumulate (compare_kernels.hip's CompareTotals).
struct CompareTotals {
  uint64_t mismatches = 0;
  uint64_t first_mismatch = ~uint64_t{0};
  uint64_t max_abs_error_bits = 0;  // a double >= 0
};

// Pristine and working copies side by side in device memory: a reset is a
// device-to-device copy, far faster than an upload from the host.
struct AmdBuffers : runner::DeviceBuffers {
  explicit AmdBuffers(const HipRuntime& hip) : hip(hip) {}
  ~AmdBuffers() override {
    for (void* pointer : pristine) (void)hip.hipFree(pointer);
    for (void* pointer : work) (void)hip.hipFree(pointer);
    for (const auto& [index, pointer] : reference) (void)hip.hipFree(pointer);
  }

  int64_t bytes() const override {
    int64_t total = 0;
    for (size_t size : sizes) total += 2 * static_cast<int64_t>(size);
    for (const auto& [index, pointer] : reference) total += static_cast<int64_t>(sizes[index]);
    return total;
  }

  const HipRuntime& hip;
  std::vector<size_t> sizes;  // bytes per buffer, spec order
  std::vector<runner::Dtype> dtypes;
  std::vector<int64_t> counts;  // elements
  std::vector<void*> pristine;
  std::vector<void*> work;         // what the kernels see
  std::map<int, void*> reference;  // by buffer index: the reference outputs
};

AmdBuffers& Hip(runner::DeviceBuffers& buffers) { return static_cast<AmdBuffers&>(buffers); }

class AmdBackend : public runner::Backend {
 public:
  AmdBackend(const HipRuntime& hip, int64_t l2_bytes, std::unique_ptr<AmdSensors> sensors)
      : hip_(hip), l2_bytes_(l2_bytes), sensors_(std::move(sensors)) {}

  ~AmdBackend() override {
    if (flush_buffer_ != nullptr) (void)hip_.hipFree(flush_buffer_);
    if (totals_ != nullptr) (void)hip_.hipFree(totals_);
    Unload();
    if (compare_module_ != nullptr) (void)hip_.hipModuleUnload(compare_module_);
    if (start_ != nullptr) (void)hip_.hipEventDestroy(start_);
    if (stop_ != nullptr) (void)hip_.hipEventDestroy(stop_);
  }

  // `arch`: the device's gfx target, which picks the compare kernels' code object.
  Status Init(int ordinal, const std::string& arch) {
    TF_RETURN_IF_ERROR(Check(hip_.hipSetDevice(ordinal), "hipSetDevice"));
    TF_RETURN_IF_ERROR(Check(hip_.hipEventCreate(&start_), "hipEventCreate"));
    TF_RETURN_IF_ERROR(Check(hip_.hipEventCreate(&stop_), "hipEventCreate"));
    const CompareCodeObject* compare = FindCompareCodeObject(arch);
    if (compare == nullptr) {
      return Status::FailedPrecondition("this runner has no output-compare kernels for " + arch +
                                        " (it has them for " + GfxTargetNames() + ")");
    }
    TF_RETURN_IF_ERROR(Check(hip_.hipModuleLoadData(&compare_module_, compare->data),
                             "loading the runner's output-compare kernels for " + arch));
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
      hipModule_t module = nullptr;
      Status loaded = Check(hip_.hipModuleLoadData(&module, image->data()), "hipModuleLoadData");
      if (!loaded.ok()) {
        Unload();
        return Status::FailedPrecondition("cannot load artifact " + path + ": " + loaded.message());
      }
      modules_.push_back(module);
    }
    return Status::Ok();
  }

  Result<runner::Launchable> Find(size_t artifact, const std::string& symbol) override {
    hipFunction_t function = nullptr;
    if (artifact >= modules_.size() ||
        hip_.hipModuleGetFunction(&function, modules_[artifact], symbol.c_str()) != hipSuccess) {
      return Status::NotFound("symbol '" + symbol + "' is not in the artifact");
    }
    runner::Launchable kernel;
    kernel.function = function;
    kernel.artifact = modules_[artifact];
    return kernel;
  }

  Result<std::unique_ptr<runner::DeviceBuffers>> Upload(
      std::vector<runner::HostBuffer> initial) override {
    auto buffers = std::make_unique<AmdBuffers>(hip_);
    for (runner::HostBuffer& buffer : initial) {
      buffers->sizes.push_back(buffer.bytes());
      buffers->dtypes.push_back(buffer.dtype());
      buffers->counts.push_back(buffer.count());
      TF_ASSIGN_OR_RETURN(void* pristine, Allocate(buffer.bytes()));
      buffers->pristine.push_back(pristine);
      TF_ASSIGN_OR_RETURN(void* work, Allocate(buffer.bytes()));
      buffers->work.push_back(work);
      TF_RETURN_IF_ERROR(
          Check(hip_.hipMemcpyHtoD(pristine, buffer.data(), buffer.bytes()), "hipMemcpyHtoD"));
    }
    return std::unique_ptr<runner::DeviceBuffers>(std::move(buffers));
  }

  Status Reset(runner::DeviceBuffers& buffers, const std::vector<int>& outputs) override {
    AmdBuffers& device = Hip(buffers);
    for (size_t i = 0; i < device.work.size(); ++i) {
      TF_RETURN_IF_ERROR(
          Check(hip_.hipMemcpyDtoD(device.work[i], device.pristine[i], device.sizes[i]),
                "hipMemcpyDtoD"));
    }
    // All-ones bytes are NaN in every float dtype.
    for (int index : outputs) {
      TF_RETURN_IF_ERROR(
          Check(hip_.hipMemsetD8(device.work[index], 0xFF, device.sizes[index]), "hipMemsetD8"));
    }
    return Status::Ok();
  }

  Status Run(const runner::Launchable& kernel, runner::DeviceBuffers& buffers,
             const std::vector<int64_t>& scalars) override {
    KernelArguments arguments = Arguments(Hip(buffers), scalars);
    TF_RETURN_IF_ERROR(Launch(kernel, arguments));
    return Check(hip_.hipDeviceSynchronize(), "kernel execution");
  }

  Status KeepReference(runner::DeviceBuffers& buffers, const std::vector<int>& outputs) override {
    AmdBuffers& device = Hip(buffers);
    for (int index : outputs) {
      if (!device.reference.contains(index)) {
        TF_ASSIGN_OR_RETURN(device.reference[index], Allocate(device.sizes[index]));
      }
      TF_RETURN_IF_ERROR(Check(
          hip_.hipMemcpyDtoD(device.reference[index], device.work[index], device.sizes[index]),
          "hipMemcpyDtoD"));
    }
    return Status::Ok();
  }

  // On the device; only the totals, and the two elements of the first
  // mismatch, come back.
  Result<runner::Comparison> Compare(runner::DeviceBuffers& buffers, int index, double rtol,
                                     double atol) override {
    AmdBuffers& device = Hip(buffers);
    auto reference = device.reference.find(index);
    if (reference == device.reference.end()) {
      return Status::FailedPrecondition("buffer " + std::to_string(index) +
                                        " has no reference output");
    }
    TF_ASSIGN_OR_RETURN(hipFunction_t kernel, CompareKernel(device.dtypes[index]));
    CompareTotals totals;
    TF_RETURN_IF_ERROR(Check(hip_.hipMemcpyHtoD(totals_, &totals, sizeof totals), "hipMemcpyHtoD"));
    long long count = device.counts[index];
    void* arguments[] = {&device.work[index], &reference->second, &count, &rtol, &atol, &totals_};
    const int64_t blocks =
        std::clamp<int64_t>((count + kCompareThreads - 1) / kCompareThreads, 1, kCompareBlocks);
    TF_RETURN_IF_ERROR(
        Check(hip_.hipModuleLaunchKernel(kernel, static_cast<unsigned>(blocks), 1, 1,
                                         kCompareThreads, 1, 1, 0, nullptr, arguments, nullptr),
              "launching the output-compare kernel"));
    TF_RETURN_IF_ERROR(
        Check(hip_.hipMemcpyDtoH(&totals, totals_, sizeof totals), "output comparison"));
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
    if (settings.flush_l2() && flush_buffer_ == nullptr) {
      flush_bytes_ = static_cast<size_t>(runner::GpuFlushBytes(l2_bytes_));
      TF_ASSIGN_OR_RETURN(flush_buffer_, Allocate(flush_bytes_));
    }
    KernelArguments arguments = Arguments(Hip(buffers), scalars);
    runner::GpuTimingCalls calls;
    calls.launch = [&] { return Launch(kernel, arguments); };
    calls.synchronize = [&] { return Check(hip_.hipDeviceSynchronize(), "kernel execution"); };
    calls.flush_l2 = [&](unsigned char value) {
      return Check(hip_.hipMemsetD8Async(flush_buffer_, value, flush_bytes_, nullptr), "L2 flush");
    };
    calls.device_time = [&](const std::function<Status()>& enqueue) -> Result<double> {
      TF_RETURN_IF_ERROR(Check(hip_.hipEventRecord(start_, nullptr), "hipEventRecord"));
      TF_RETURN_IF_ERROR(enqueue());
      TF_RETURN_IF_ERROR(Check(hip_.hipEventRecord(stop_, nullptr), "hipEventRecord"));
      TF_RETURN_IF_ERROR(Check(hip_.hipEventSynchronize(stop_), "kernel execution"));
      float ms = 0;
      TF_RETURN_IF_ERROR(
          Check(hip_.hipEventElapsedTime(&ms, start_, stop_), "hipEventElapsedTime"));
      return ms * 1e6;
    };
    TF_ASSIGN_OR_RETURN(v1::TimingStats stats, runner::TimeOnGpu(calls, settings));
    if (sensors_ != nullptr) {
      AmdSensors::Reading reading = sensors_->Read();
      stats.set_core_clock_mhz(reading.core_clock_mhz);
      stats.set_temperature_c(reading.temperature_c);
    }
    return stats;
  }

  bool lost() const override { return lost_; }

 private:
  void Unload() {
    for (hipModule_t module : modules_) (void)hip_.hipModuleUnload(module);
    modules_.clear();
  }

  // A failed call marks the device lost when it no longer synchronizes:
  // sticky errors (hipErrorIllegalAddress, hipErrorLaunchFailure) fail every
  // later call, while launch errors such as out of resources leave it usable.
  Status Check(hipError_t result, const std::string& what) {
    if (result == hipSuccess) return Status::Ok();
    if (hip_.hipDeviceSynchronize() != hipSuccess) lost_ = true;
    return hip_.Check(result, what);
  }

  // The code object for the gfx target `arch` names, target features ignored.
  static const CompareCodeObject* FindCompareCodeObject(const std::string& arch) {
    const GfxTarget* target = FindGfxTarget(arch);
    for (const CompareCodeObject& code : CompareCodeObjects()) {
      if (target != nullptr && std::string_view(code.arch) == target->name) return &code;
    }
    return nullptr;
  }

  Result<hipFunction_t> CompareKernel(runner::Dtype dtype) {
    auto found = compare_kernels_.find(dtype);
    if (found != compare_kernels_.end()) return found->second;
    const std::string name = "tf_compare_" + std::string(runner::DtypeName(dtype));
    hipFunction_t function = nullptr;
    TF_RETURN_IF_ERROR(
        Check(hip_.hipModuleGetFunction(&function, compare_module_, name.c_str()), name));
    return compare_kernels_[dtype] = function;
  }

  // Element `i` of the device copy `pointer` of buffer `index`, as a double.
  Result<double> Element(const AmdBuffers& buffers, void* pointer, int index, int64_t i) {
    TF_ASSIGN_OR_RETURN(runner::HostBuffer element,
                        runner::HostBuffer::Allocate(runner::DtypeName(buffers.dtypes[index]), 1));
    TF_RETURN_IF_ERROR(
        Check(hip_.hipMemcpyDtoH(element.data(), static_cast<char*>(pointer) + i * element.bytes(),
                                 element.bytes()),
              "hipMemcpyDtoH"));
    return element.Get(0);
  }

  Result<void*> Allocate(size_t bytes) {
    void* pointer = nullptr;
    // An empty buffer still needs an address.
    TF_RETURN_IF_ERROR(Check(hip_.hipMalloc(&pointer, std::max<size_t>(bytes, 1)),
                             "hipMalloc of " + std::to_string(bytes) + " bytes"));
    return pointer;
  }

  // What hipModuleLaunchKernel points at: buffers, then scalars.
  struct KernelArguments {
    std::vector<void*> pointers;
    std::vector<int64_t> scalars;
    std::vector<void*> addresses;  // into the vectors above
  };

  static KernelArguments Arguments(const AmdBuffers& buffers, const std::vector<int64_t>& scalars) {
    KernelArguments arguments;
    arguments.pointers = buffers.work;
    arguments.scalars = scalars;
    for (void*& pointer : arguments.pointers) arguments.addresses.push_back(&pointer);
    for (int64_t& scalar : arguments.scalars) arguments.addresses.push_back(&scalar);
    return arguments;
  }

  Status Launch(const runner::Launchable& kernel, KernelArguments& arguments) {
    if (!kernel.tensor_maps.empty()) {
      return Status::InvalidArgument("AMD GPUs take no tensor maps");
    }
    for (int d = 0; d < 3; ++d) {
      if (kernel.grid[d] < 1 || kernel.grid[d] > INT_MAX || kernel.block[d] < 1 ||
          kernel.block[d] > INT_MAX) {
        return Status::InvalidArgument("launch geometry out of range: grid (" + Dims(kernel.grid) +
                                       "), block (" + Dims(kernel.block) + ")");
      }
    }
    auto u = [](int64_t n) { return static_cast<unsigned>(n); };
    return Check(hip_.hipModuleLaunchKernel(static_cast<hipFunction_t>(kernel.function),
                                            u(kernel.grid[0]), u(kernel.grid[1]), u(kernel.grid[2]),
                                            u(kernel.block[0]), u(kernel.block[1]),
                                            u(kernel.block[2]), u(kernel.shared_mem_bytes), nullptr,
                                            arguments.addresses.data(), nullptr),
                 "hipModuleLaunchKernel with grid (" + Dims(kernel.grid) + "), block (" +
                     Dims(kernel.block) + "), " + std::to_string(kernel.shared_mem_bytes) +
                     " bytes of dynamic LDS");
  }

  static std::string Dims(const std::array<int64_t, 3>& dims) {
    return std::to_string(dims[0]) + "," + std::to_string(dims[1]) + "," + std::to_string(dims[2]);
  }

  const HipRuntime& hip_;
  const int64_t l2_bytes_;
  const std::unique_ptr<AmdSensors> sensors_;  // null: no clock and temperature
  std::vector<hipModule_t> modules_;           // the loaded artifacts
  hipModule_t compare_module_ = nullptr;
  std::map<runner::Dtype, hipFunction_t> compare_kernels_;
  void* totals_ = nullptr;  // one CompareTotals
  void* flush_buffer_ = nullptr;
  size_t flush_bytes_ = 0;
  hipEvent_t start_ = nullptr, stop_ = nullptr;
  bool lost_ = false;
};

}  // namespace

Result<std::unique_ptr<runner::Backend>> MakeAmdBackend(const v1::DeviceInfo& device, int ordinal) {
  TF_ASSIGN_OR_RETURN(const HipRuntime* hip, HipRuntime::Get());
  char pci_bus_id[32] = {};
  TF_RETURN_IF_ERROR(hip->Check(hip->hipDeviceGetPCIBusId(pci_bus_id, sizeof pci_bus_id, ordinal),
                                "hipDeviceGetPCIBusId of AMD GPU " + std::to_string(ordinal)));
  const auto& props = device.properties();
  const int64_t l2_bytes = props.contains("l2_bytes") ? props.at("l2_bytes") : 0;
  auto backend = std::make_unique<AmdBackend>(*hip, l2_bytes, AmdSensors::Open(pci_bus_id));
  TF_RETURN_IF_ERROR(backend->Init(ordinal, device.arch()));
  return std::unique_ptr<runner::Backend>(std::move(backend));
}

}  // namespace tf::amd

#else  // !TF_HAVE_HIP_HEADERS

namespace tf::amd {

Result<std::unique_ptr<runner::Backend>> MakeAmdBackend(const v1::DeviceInfo&, int) {
  return Status::FailedPrecondition(
      "this runner was built without ROCm's HIP headers: it cannot run AMD kernels");
}

}  // namespace tf::amd

#endif  // TF_HAVE_HIP_HEADERS
