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

// One timed sample of `launch` (options.batch launches, their mean), after
// overwriting the flush buffer when there is one.
template <class Launch>
double SampleMs(const TimingOptions& options, cudaEvent_t start, cudaEvent_t stop, int sample,
                Launch&& launch) {
  if (options.flush) {
    CHECK_CUDA(cudaMemsetAsync(options.flush, sample, options.flush_bytes, options.stream));
  }
  CHECK_CUDA(cudaEventRecord(start, options.stream));
  for (int i = 0; i < options.batch; ++i) launch();
  CHECK_CUDA(cudaEventRecord(stop, options.stream));
  CHECK_CUDA(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  return ms / options.batch;
}

inline double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Runs `body(start, stop)` between 3 untimed warm-up rounds of `warm_up` and the
// checks and clean-up that every timing needs.
template <class WarmUp, class Body>
auto Timed(const TimingOptions& options, WarmUp&& warm_up, Body&& body) {
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  for (int i = 0; i < 3; ++i) warm_up();
  CHECK_CUDA(cudaStreamSynchronize(options.stream));
  CHECK_CUDA(cudaGetLastError());
  auto result = body(start, stop);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  return result;
}

// Milliseconds of one launch: the median over `options.samples` samples,
// after 3 untimed warm-up launches.
template <class Launch>
double MedianMs(const TimingOptions& options, Launch&& launch) {
  return Timed(options, launch, [&](cudaEvent_t start, cudaEvent_t stop) {
    std::vector<double> samples;
    for (int s = 0; s < options.samples; ++s) {
      samples.push_back(SampleMs(options, start, stop, s, launch));
    }
    return Median(samples);
  });
}

struct PairedTiming {
  double baseline_ms;   // median of the baseline's samples
  double candidate_ms;  // median of the candidate's samples
  double ratio;  // median over pairs of baseline / candidate: above 1, the candidate is faster
};

// Times two launches in alternation, sample by sample (which goes first
// alternates too), so that clock and temperature drift over the run charge both
// alike; a ratio of medians timed one after the other does not cancel it.
template <class Baseline, class Candidate>
PairedTiming PairedMs(const TimingOptions& options, Baseline&& baseline, Candidate&& candidate) {
  auto warm_up = [&] {
    baseline();
    candidate();
  };
  return Timed(options, warm_up, [&](cudaEvent_t start, cudaEvent_t stop) {
    std::vector<double> base, cand, ratios;
    for (int s = 0; s < options.samples; ++s) {
      double b, c;
      if (s % 2 == 0) {
        b = SampleMs(options, start, stop, 2 * s, baseline);
        c = SampleMs(options, start, stop, 2 * s + 1, candidate);
      } else {
        c = SampleMs(options, start, stop, 2 * s, candidate);
        b = SampleMs(options, start, stop, 2 * s + 1, baseline);
      }
      base.push_back(b);
      cand.push_back(c);
      ratios.push_back(b / c);
    }
    return PairedTiming{Median(base), Median(cand), Median(ratios)};
  });
}
