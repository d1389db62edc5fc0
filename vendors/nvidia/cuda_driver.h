// The CUDA driver API, loaded at run time from libcuda.so.1 so that one
// worker binary runs on hosts with and without NVIDIA GPUs; nothing links
// against libcuda. Types come from the toolkit's cuda.h at build time
// (TF_HAVE_CUDA_HEADERS); without it the NVIDIA backend is compiled out.
#pragma once

#ifdef TF_HAVE_CUDA_HEADERS

#include <cuda.h>

#include <string_view>

#include "common/status.h"

namespace tf::nvidia {

// Members are named by the header's macros, so that cuMemAlloc is the
// versioned entry point (cuMemAlloc_v2) the macro maps it to.
#define TF_CUDA_FUNCTION(name) decltype(&::name) name = nullptr

struct CudaDriver {
  // Loads the library and calls cuInit once per process; later calls return
  // the same driver or the same error (library missing, no driver, ...).
  static Result<const CudaDriver*> Get();

  // Ok for CUDA_SUCCESS, else Internal with "what: CUDA_ERROR_NAME: description".
  Status Check(CUresult result, std::string_view what) const;

  TF_CUDA_FUNCTION(cuInit);
  TF_CUDA_FUNCTION(cuGetErrorName);
  TF_CUDA_FUNCTION(cuGetErrorString);
  TF_CUDA_FUNCTION(cuDeviceGetCount);
  TF_CUDA_FUNCTION(cuDeviceGet);
  TF_CUDA_FUNCTION(cuDeviceGetName);
  TF_CUDA_FUNCTION(cuDeviceGetAttribute);
  TF_CUDA_FUNCTION(cuDeviceTotalMem);
  TF_CUDA_FUNCTION(cuDeviceGetPCIBusId);
  TF_CUDA_FUNCTION(cuDeviceGetUuid);
  TF_CUDA_FUNCTION(cuDevicePrimaryCtxRetain);
  TF_CUDA_FUNCTION(cuDevicePrimaryCtxRelease);
  TF_CUDA_FUNCTION(cuCtxSetCurrent);
  TF_CUDA_FUNCTION(cuCtxSynchronize);
  TF_CUDA_FUNCTION(cuModuleLoadData);
  TF_CUDA_FUNCTION(cuModuleUnload);
  TF_CUDA_FUNCTION(cuModuleGetFunction);
  TF_CUDA_FUNCTION(cuModuleGetGlobal);
  TF_CUDA_FUNCTION(cuFuncSetAttribute);
  TF_CUDA_FUNCTION(cuLaunchKernel);
  TF_CUDA_FUNCTION(cuMemAlloc);
  TF_CUDA_FUNCTION(cuMemFree);
  TF_CUDA_FUNCTION(cuMemcpyHtoD);
  TF_CUDA_FUNCTION(cuMemcpyDtoH);
  TF_CUDA_FUNCTION(cuMemcpyDtoD);
  TF_CUDA_FUNCTION(cuMemsetD8);
  TF_CUDA_FUNCTION(cuMemsetD8Async);
  TF_CUDA_FUNCTION(cuEventCreate);
  TF_CUDA_FUNCTION(cuEventDestroy);
  TF_CUDA_FUNCTION(cuEventRecord);
  TF_CUDA_FUNCTION(cuEventSynchronize);
  TF_CUDA_FUNCTION(cuEventElapsedTime);
  TF_CUDA_FUNCTION(cuTensorMapEncodeTiled);  // null before CUDA 12
};

#undef TF_CUDA_FUNCTION

}  // namespace tf::nvidia

#endif  // TF_HAVE_CUDA_HEADERS
