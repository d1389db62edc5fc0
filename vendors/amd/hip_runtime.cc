#ifdef TF_HAVE_HIP_HEADERS

#include "vendors/amd/hip_runtime.h"

#include <dlfcn.h>

#include <string>

namespace tf::amd {
namespace {

Result<const HipRuntime*> Load() {
  void* library = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    return Status::Unavailable(std::string("cannot load the HIP runtime (libamdhip64.so.5): ") +
                               dlerror());
  }
  auto* hip = new HipRuntime;  // lives as long as the process
  std::string missing;
#define TF_RESOLVE(name)                                                    \
  hip->name = reinterpret_cast<decltype(hip->name)>(dlsym(library, #name)); \
  if (hip->name == nullptr) missing += " " #name;
  TF_RESOLVE(hipGetErrorName);
  TF_RESOLVE(hipGetErrorString);
  TF_RESOLVE(hipGetDeviceCount);
  TF_RESOLVE(hipGetDeviceProperties);
  TF_RESOLVE(hipDeviceGetPCIBusId);
  TF_RESOLVE(hipSetDevice);
  TF_RESOLVE(hipDeviceSynchronize);
  TF_RESOLVE(hipModuleLoadData);
  TF_RESOLVE(hipModuleUnload);
  TF_RESOLVE(hipModuleGetFunction);
  TF_RESOLVE(hipModuleLaunchKernel);
  TF_RESOLVE(hipMalloc);
  TF_RESOLVE(hipFree);
  TF_RESOLVE(hipMemcpyHtoD);
  TF_RESOLVE(hipMemcpyDtoH);
  TF_RESOLVE(hipMemcpyDtoD);
  TF_RESOLVE(hipMemsetD8);
  TF_RESOLVE(hipMemsetD8Async);
  TF_RESOLVE(hipEventCreate);
  TF_RESOLVE(hipEventDestroy);
  TF_RESOLVE(hipEventRecord);
  TF_RESOLVE(hipEventSynchronize);
  TF_RESOLVE(hipEventElapsedTime);
#undef TF_RESOLVE
  if (!missing.empty()) {
    return Status::Unavailable("the HIP runtime (libamdhip64.so.5) lacks" + missing);
  }
  return hip;
}

}  // namespace

Result<const HipRuntime*> HipRuntime::Get() {
  static const Result<const HipRuntime*> runtime = Load();
  return runtime;
}

Status HipRuntime::Check(hipError_t result, std::string_view what) const {
  if (result == hipSuccess) return Status::Ok();
  std::string text = std::string(what) + ": " + hipGetErrorName(result);
  if (const char* description = hipGetErrorString(result)) text += std::string(": ") + description;
  return Status::Internal(text);
}

}  // namespace tf::amd

#endif  // TF_HAVE_HIP_HEADERS
