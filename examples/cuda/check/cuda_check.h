// Error checks and event timing for standalone CUDA harnesses: check_main.cu
// here, and bench/hopper_gemm/gemm_vs_cublas.cu, which includes it from here so
// that the examples need nothing outside examples/.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

// Each exits the program naming the call, file and line when `call` fails: a
// harness has nothing better to do with a failed CUDA or cuBLAS call.
#define CHECK_CUDA(call) ExitOnCudaError((call), #call, __FILE__, __LINE__)
#define CHECK_CUBLAS(call) ExitOnCublasError((call), #call, __FILE__, __LINE__)

inline void ExitOnCudaError(cudaError_t error, const char* call, const char* file, int line) {
  if (error == cudaSuccess) return;
  std::fprintf(stderr, "%s:%d: %s: %s\n", file, line, call, cudaGetErrorString(error));
  std::exit(1);
}

inline void ExitOnCublasError(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", file, line, call, int(status));
  std::exit(1);
}

struct TimingOptions {
  int samples = 15;
  int batch = 1;                  // back-to-back launches per sample; a sample is their mean
  cudaStream_t stream = nullptr;  // the stream `launch` enqueues on
  // When set, overwritten before every sample (untimed) so that no sample
  // finds its inputs in L2; it must be larger than the L2.
  void* flush = nullptr;
  size_t flush_bytes = 0;
};

// Milliseconds of one launch: the median over `options.samples` samples,
// after 3 untimed warm-up launches.
template <class Launch>
double MedianMs(const TimingOptions& options, Launch&& launch) {
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  for (int i = 0; i < 3; ++i) launch();
  CHECK_CUDA(cudaStreamSynchronize(options.stream));
  CHECK_CUDA(cudaGetLastError());
  std::vector<double> samples;
  for (int s = 0; s < options.samples; ++s) {
    if (options.flush) {
      CHECK_CUDA(cudaMemsetAsync(options.flush, s, options.flush_bytes, options.stream));
    }
    CHECK_CUDA(cudaEventRecord(start, options.stream));
    for (int i = 0; i < options.batch; ++i) launch();
    CHECK_CUDA(cudaEventRecord(stop, options.stream));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    samples.push_back(ms / options.batch);
  }
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}
