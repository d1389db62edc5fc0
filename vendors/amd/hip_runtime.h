// The HIP runtime, loaded at run time from libamdhip64 so that one worker
// binary runs on hosts with and without AMD GPUs; nothing links against it.
// Types come from ROCm's hip_runtime_api.h at build time
// (TF_HAVE_HIP_HEADERS); without it the AMD device side is compiled out.
// The ABI is ROCm 5's (libamdhip64.so.5, which Debian 12 ships): ROCm 6
// renumbered hipDeviceAttribute_t and changed hipDeviceProp_t, so a ROCm 6
// host needs a worker built against ROCm 6's header and library name.
#pragma once

#ifdef TF_HAVE_HIP_HEADERS

#include <hip/hip_runtime_api.h>

#include <string_view>

#include "common/status.h"

namespace tf::amd {

#define TF_HIP_FUNCTION(name) decltype(&::name) name = nullptr

struct HipRuntime {
  // Loads the library once per process; later calls return the same
  // runtime or the same error.
  static Result<const HipRuntime*> Get();

  // Ok for hipSuccess, else Internal with "what: hipErrorName: description".
  Status Check(hipError_t result, std::string_view what) const;

  TF_HIP_FUNCTION(hipGetErrorName);
  TF_HIP_FUNCTION(hipGetErrorString);
  TF_HIP_FUNCTION(hipGetDeviceCount);
  TF_HIP_FUNCTION(hipGetDeviceProperties);
  TF_HIP_FUNCTION(hipDeviceGetPCIBusId);
  TF_HIP_FUNCTION(hipSetDevice);
  TF_HIP_FUNCTION(hipDeviceSynchronize);
  TF_HIP_FUNCTION(hipModuleLoadData);
  TF_HIP_FUNCTION(hipModuleUnload);
  TF_HIP_FUNCTION(hipModuleGetFunction);
  TF_HIP_FUNCTION(hipModuleGetGlobal);
  TF_HIP_FUNCTION(hipModuleLaunchKernel);
  // Plain pointer: the header overloads hipMalloc with a template.
  hipError_t (*hipMalloc)(void** pointer, size_t bytes) = nullptr;
  TF_HIP_FUNCTION(hipFree);
  TF_HIP_FUNCTION(hipMemcpyHtoD);
  TF_HIP_FUNCTION(hipMemcpyDtoH);
  TF_HIP_FUNCTION(hipMemcpyDtoD);
  TF_HIP_FUNCTION(hipMemsetD8);
  TF_HIP_FUNCTION(hipMemsetD8Async);
  TF_HIP_FUNCTION(hipEventCreate);
  TF_HIP_FUNCTION(hipEventDestroy);
  TF_HIP_FUNCTION(hipEventRecord);
  TF_HIP_FUNCTION(hipEventSynchronize);
  TF_HIP_FUNCTION(hipEventElapsedTime);
};

#undef TF_HIP_FUNCTION

}  // namespace tf::amd

#endif  // TF_HAVE_HIP_HEADERS
