#include "vendors/amd/amd_backend.h"

#ifdef TF_HAVE_HIP_HEADERS

#include "runner/gpu_backend.h"
#include "vendors/amd/amd_sensors.h"
#include "vendors/amd/compare_kernels.h"
#include "vendors/amd/gfx_targets.h"
#include "vendors/amd/hip_runtime.h"

namespace tf::amd {
namespace {

void* Hip(runner::DevicePointer pointer) { return reinterpret_cast<void*>(pointer); }

// The HIP runtime on one GPU, made current in this process.
class HipDevice : public runner::GpuRuntime {
 public:
  HipDevice(const HipRuntime& hip, std::unique_ptr<AmdSensors> sensors)
      : hip_(hip), sensors_(std::move(sensors)) {}

  ~HipDevice() override {
    if (start_ != nullptr) (void)hip_.hipEventDestroy(start_);
    if (stop_ != nullptr) (void)hip_.hipEventDestroy(stop_);
  }

  Status Init(int ordinal) {
    TF_RETURN_IF_ERROR(Check(hip_.hipSetDevice(ordinal), "hipSetDevice"));
    TF_RETURN_IF_ERROR(Check(hip_.hipEventCreate(&start_), "hipEventCreate"));
    return Check(hip_.hipEventCreate(&stop_), "hipEventCreate");
  }

  Result<runner::DevicePointer> Allocate(size_t bytes) override {
    void* pointer = nullptr;
    TF_RETURN_IF_ERROR(
        Check(hip_.hipMalloc(&pointer, bytes), "hipMalloc of " + std::to_string(bytes) + " bytes"));
    return reinterpret_cast<runner::DevicePointer>(pointer);
  }
  void Free(runner::DevicePointer pointer) override { (void)hip_.hipFree(Hip(pointer)); }
  Status CopyToDevice(runner::DevicePointer to, const void* from, size_t bytes) override {
    return Check(hip_.hipMemcpyHtoD(Hip(to), const_cast<void*>(from), bytes), "hipMemcpyHtoD");
  }
  Status CopyToHost(void* to, runner::DevicePointer from, size_t bytes) override {
    return Check(hip_.hipMemcpyDtoH(to, Hip(from), bytes), "hipMemcpyDtoH");
  }
  Status CopyOnDevice(runner::DevicePointer to, runner::DevicePointer from, size_t bytes) override {
    return Check(hip_.hipMemcpyDtoD(Hip(to), Hip(from), bytes), "hipMemcpyDtoD");
  }
  Status Fill(runner::DevicePointer to, unsigned char value, size_t bytes, bool wait) override {
    return wait ? Check(hip_.hipMemsetD8(Hip(to), value, bytes), "hipMemsetD8")
                : Check(hip_.hipMemsetD8Async(Hip(to), value, bytes, nullptr), "hipMemsetD8Async");
  }

  Result<void*> LoadModule(const void* image) override {
    hipModule_t module = nullptr;
    TF_RETURN_IF_ERROR(Check(hip_.hipModuleLoadData(&module, image), "hipModuleLoadData"));
    return module;
  }
  void UnloadModule(void* module) override {
    (void)hip_.hipModuleUnload(static_cast<hipModule_t>(module));
  }
  Result<void*> FindKernel(void* module, const std::string& name) override {
    hipFunction_t function = nullptr;
    TF_RETURN_IF_ERROR(
        Check(hip_.hipModuleGetFunction(&function, static_cast<hipModule_t>(module), name.c_str()),
              name));
    return function;
  }

  Result<Global> FindGlobal(void* module, const std::string& name) override {
    hipDeviceptr_t address = nullptr;
    size_t bytes = 0;
    const hipError_t found =
        hip_.hipModuleGetGlobal(&address, &bytes, static_cast<hipModule_t>(module), name.c_str());
    if (found == hipErrorNotFound) return Status::NotFound("no global " + name);
    TF_RETURN_IF_ERROR(Check(found, "hipModuleGetGlobal of " + name));
    return Global{reinterpret_cast<runner::DevicePointer>(address), bytes};
  }

  Status Enqueue(const runner::Launchable& kernel, void** arguments,
                 const std::string& what) override {
    auto u = [](int64_t n) { return static_cast<unsigned>(n); };
    return Check(hip_.hipModuleLaunchKernel(
                     static_cast<hipFunction_t>(kernel.function), u(kernel.grid[0]),
                     u(kernel.grid[1]), u(kernel.grid[2]), u(kernel.block[0]), u(kernel.block[1]),
                     u(kernel.block[2]), u(kernel.shared_mem_bytes), nullptr, arguments, nullptr),
                 "hipModuleLaunchKernel" + what);
  }
  Status Synchronize() override { return Check(hip_.hipDeviceSynchronize(), "kernel execution"); }
  Result<double> DeviceTime(const std::function<Status()>& enqueue) override {
    TF_RETURN_IF_ERROR(Check(hip_.hipEventRecord(start_, nullptr), "hipEventRecord"));
    TF_RETURN_IF_ERROR(enqueue());
    TF_RETURN_IF_ERROR(Check(hip_.hipEventRecord(stop_, nullptr), "hipEventRecord"));
    TF_RETURN_IF_ERROR(Check(hip_.hipEventSynchronize(stop_), "kernel execution"));
    float ms = 0;
    TF_RETURN_IF_ERROR(Check(hip_.hipEventElapsedTime(&ms, start_, stop_), "hipEventElapsedTime"));
    return ms * 1e6;
  }
  bool lost() const override { return lost_; }

  void ReadSensors(v1::TimingStats& stats) override {
    if (sensors_ == nullptr) return;
    AmdSensors::Reading reading = sensors_->Read();
    stats.set_core_clock_mhz(reading.core_clock_mhz);
    stats.set_temperature_c(reading.temperature_c);
  }

 private:
  // A failed call marks the device lost when it no longer synchronizes:
  // sticky errors (hipErrorIllegalAddress, hipErrorLaunchFailure) fail every
  // later call, while launch errors such as out of resources leave it usable.
  Status Check(hipError_t result, const std::string& what) {
    if (result == hipSuccess) return Status::Ok();
    if (hip_.hipDeviceSynchronize() != hipSuccess) lost_ = true;
    return hip_.Check(result, what);
  }

  const HipRuntime& hip_;
  const std::unique_ptr<AmdSensors> sensors_;  // null: no clock and temperature
  hipEvent_t start_ = nullptr, stop_ = nullptr;
  bool lost_ = false;
};

// The code object for the gfx target `arch` names, target features ignored.
const CompareCodeObject* FindCompareCodeObject(const std::string& arch) {
  const GfxTarget* target = FindGfxTarget(arch);
  for (const CompareCodeObject& code : CompareCodeObjects()) {
    if (target != nullptr && std::string_view(code.arch) == target->name) return &code;
  }
  return nullptr;
}

}  // namespace

Result<std::unique_ptr<runner::Backend>> MakeAmdBackend(const v1::DeviceInfo& device, int ordinal) {
  TF_ASSIGN_OR_RETURN(const HipRuntime* hip, HipRuntime::Get());
  char pci_bus_id[32] = {};
  TF_RETURN_IF_ERROR(hip->Check(hip->hipDeviceGetPCIBusId(pci_bus_id, sizeof pci_bus_id, ordinal),
                                "hipDeviceGetPCIBusId of AMD GPU " + std::to_string(ordinal)));
  // The arch picks the compare kernels' code object.
  const CompareCodeObject* compare = FindCompareCodeObject(device.arch());
  if (compare == nullptr) {
    return Status::FailedPrecondition("this runner has no output-compare kernels for " +
                                      device.arch() + " (it has them for " + GfxTargetNames() +
                                      ")");
  }
  auto runtime = std::make_unique<HipDevice>(*hip, AmdSensors::Open(pci_bus_id));
  TF_RETURN_IF_ERROR(runtime->Init(ordinal));
  const auto& props = device.properties();
  const int64_t l2_bytes = props.contains("l2_bytes") ? props.at("l2_bytes") : 0;
  return runner::MakeGpuBackend(std::move(runtime), l2_bytes, compare->data,
                                "the runner's output-compare kernels for " + device.arch());
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
