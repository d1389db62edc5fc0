#ifdef TF_HAVE_CUDA_HEADERS

#include "vendors/nvidia/cuda_driver.h"

#include <dlfcn.h>

#include <string>

namespace tf::nvidia {
namespace {

// The macro's expansion, so that versioned names are looked up.
#define TF_NAME_OF(name) TF_NAME_OF_EXPANDED(name)
#define TF_NAME_OF_EXPANDED(name) #name

Result<const CudaDriver*> Load() {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    return Status::Unavailable(std::string("cannot load the CUDA driver (libcuda.so.1): ") +
                               dlerror());
  }
  auto* driver = new CudaDriver;  // lives as long as the process
  std::string missing;
#define TF_RESOLVE(name)                                                                     \
  driver->name = reinterpret_cast<decltype(driver->name)>(dlsym(library, TF_NAME_OF(name))); \
  if (driver->name == nullptr) missing += std::string(" ") + TF_NAME_OF(name);
  TF_RESOLVE(cuInit);
  TF_RESOLVE(cuGetErrorName);
  TF_RESOLVE(cuGetErrorString);
  TF_RESOLVE(cuDeviceGetCount);
  TF_RESOLVE(cuDeviceGet);
  TF_RESOLVE(cuDeviceGetName);
  TF_RESOLVE(cuDeviceGetAttribute);
  TF_RESOLVE(cuDeviceTotalMem);
  TF_RESOLVE(cuDeviceGetPCIBusId);
  TF_RESOLVE(cuDevicePrimaryCtxRetain);
  TF_RESOLVE(cuDevicePrimaryCtxRelease);
  TF_RESOLVE(cuCtxSetCurrent);
  TF_RESOLVE(cuCtxSynchronize);
  TF_RESOLVE(cuModuleLoadData);
  TF_RESOLVE(cuModuleUnload);
  TF_RESOLVE(cuModuleGetFunction);
  TF_RESOLVE(cuModuleGetGlobal);
  TF_RESOLVE(cuFuncSetAttribute);
  TF_RESOLVE(cuLaunchKernel);
  TF_RESOLVE(cuMemAlloc);
  TF_RESOLVE(cuMemFree);
  TF_RESOLVE(cuMemcpyHtoD);
  TF_RESOLVE(cuMemcpyDtoH);
  TF_RESOLVE(cuMemcpyDtoD);
  TF_RESOLVE(cuMemsetD8);
  TF_RESOLVE(cuMemsetD8Async);
  TF_RESOLVE(cuEventCreate);
  TF_RESOLVE(cuEventDestroy);
  TF_RESOLVE(cuEventRecord);
  TF_RESOLVE(cuEventSynchronize);
  TF_RESOLVE(cuEventElapsedTime);
#undef TF_RESOLVE
  // Optional: drivers before CUDA 12 lack it, and only tensor maps need it.
  driver->cuTensorMapEncodeTiled = reinterpret_cast<decltype(driver->cuTensorMapEncodeTiled)>(
      dlsym(library, "cuTensorMapEncodeTiled"));
  if (!missing.empty()) {
    return Status::Unavailable("the CUDA driver (libcuda.so.1) is too old: it lacks" + missing);
  }
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
