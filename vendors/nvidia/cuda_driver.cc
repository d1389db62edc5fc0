#ifdef TF_HAVE_CUDA_HEADERS

#include "vendors/nvidia/cuda_driver.h"

#include <string>

#include "common/shared_library.h"

namespace tf::nvidia {
namespace {

// The macro's expansion, so that versioned names are looked up.
#define TF_NAME_OF(name) TF_NAME_OF_EXPANDED(name)
#define TF_NAME_OF_EXPANDED(name) #name

Result<const CudaDriver*> Load() {
  TF_ASSIGN_OR_RETURN(SharedLibrary library,
                      SharedLibrary::Open("libcuda.so.1", "the CUDA driver"));
  auto* driver = new CudaDriver;  // lives as long as the process
#define TF_BIND(name) library.Bind(driver->name, TF_NAME_OF(name))
  TF_BIND(cuInit);
  TF_BIND(cuGetErrorName);
  TF_BIND(cuGetErrorString);
  TF_BIND(cuDeviceGetCount);
  TF_BIND(cuDeviceGet);
  TF_BIND(cuDeviceGetName);
  TF_BIND(cuDeviceGetAttribute);
  TF_BIND(cuDeviceTotalMem);
  TF_BIND(cuDeviceGetPCIBusId);
  TF_BIND(cuDeviceGetUuid);
  TF_BIND(cuDevicePrimaryCtxRetain);
  TF_BIND(cuDevicePrimaryCtxRelease);
  TF_BIND(cuCtxSetCurrent);
  TF_BIND(cuCtxSynchronize);
  TF_BIND(cuModuleLoadData);
  TF_BIND(cuModuleUnload);
  TF_BIND(cuModuleGetFunction);
  TF_BIND(cuModuleGetGlobal);
  TF_BIND(cuFuncSetAttribute);
  TF_BIND(cuLaunchKernel);
  TF_BIND(cuMemAlloc);
  TF_BIND(cuMemFree);
  TF_BIND(cuMemcpyHtoD);
  TF_BIND(cuMemcpyDtoH);
  TF_BIND(cuMemcpyDtoD);
  TF_BIND(cuMemsetD8);
  TF_BIND(cuMemsetD8Async);
  TF_BIND(cuEventCreate);
  TF_BIND(cuEventDestroy);
  TF_BIND(cuEventRecord);
  TF_BIND(cuEventSynchronize);
  TF_BIND(cuEventElapsedTime);
#undef TF_BIND
  // Optional: drivers before CUDA 12 lack it, and only tensor maps need it.
  library.BindOptional(driver->cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled");
  TF_RETURN_IF_ERROR(library.CheckBound("is too old: it lacks"));
  TF_RETURN_IF_ERROR(driver->Check(driver->cuInit(0), "cuInit"));
  return driver;
}

}  // namespace

Result<const CudaDriver*> CudaDriver::Get() {
  static const Result<const CudaDriver*> driver = Load();
  return driver;
}

Status CudaDriver::Check(CUresult result, std::string_view what) const {
  if (result == CUDA_SUCCESS) return Status::Ok();
  const char* name = nullptr;
  const char* description = nullptr;
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
  if (cuGetErrorString(result, &description) != CUDA_SUCCESS) description = nullptr;
  std::string text = std::string(what) + ": ";
  text += name != nullptr ? name : "CUDA error " + std::to_string(static_cast<int>(result));
  if (description != nullptr) text += std::string(": ") + description;
  return Status::Internal(text);
}

}  // namespace tf::nvidia

#endif  // TF_HAVE_CUDA_HEADERS
