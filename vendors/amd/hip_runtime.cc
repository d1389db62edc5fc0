#ifdef TF_HAVE_HIP_HEADERS

#include "vendors/amd/hip_runtime.h"

#include <string>

#include "common/shared_library.h"

namespace tf::amd {
namespace {

Result<const HipRuntime*> Load() {
  TF_ASSIGN_OR_RETURN(SharedLibrary library,
                      SharedLibrary::Open("libamdhip64.so.5", "the HIP runtime"));
  auto* hip = new HipRuntime;  // lives as long as the process
#define TF_BIND(name) library.Bind(hip->name, #name)
  TF_BIND(hipGetErrorName);
  TF_BIND(hipGetErrorString);
  TF_BIND(hipGetDeviceCount);
  TF_BIND(hipGetDeviceProperties);
  TF_BIND(hipDeviceGetPCIBusId);
  TF_BIND(hipSetDevice);
  TF_BIND(hipDeviceSynchronize);
  TF_BIND(hipModuleLoadData);
  TF_BIND(hipModuleUnload);
  TF_BIND(hipModuleGetFunction);
  TF_BIND(hipModuleGetGlobal);
  TF_BIND(hipModuleLaunchKernel);
  TF_BIND(hipMalloc);
  TF_BIND(hipFree);
  TF_BIND(hipMemcpyHtoD);
  TF_BIND(hipMemcpyDtoH);
  TF_BIND(hipMemcpyDtoD);
  TF_BIND(hipMemsetD8);
  TF_BIND(hipMemsetD8Async);
  TF_BIND(hipEventCreate);
  TF_BIND(hipEventDestroy);
  TF_BIND(hipEventRecord);
  TF_BIND(hipEventSynchronize);
  TF_BIND(hipEventElapsedTime);
#undef TF_BIND
  TF_RETURN_IF_ERROR(library.CheckBound());
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
