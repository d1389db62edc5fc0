// Issue 19: TuneFleet ranks 128x256 clusters of 1 above clusters of 2 at 3000x5000x2000, the
// harness (gemm_vs_cublas) the other way round. This program times those two configurations
// (f16 TN, 4 stages, 2 consumers, TMA store, GROUP_M 16) under every combination of the ways
// the service and the harness differ, one factor at a time switched between the two:
//
//   flush   svc: 2 x L2 bytes memset before each sample (nvidia_backend.cc Time)
//           har: 512 MiB
//   data    svc: the runner's inputs (runner/host_buffers.cc Fill: splitmix64, uniform [-1, 1],
//                seeded by buffer name and problem key), pristine + working copies
//           har: gemm_vs_cublas's FillRandom, one allocation per buffer
//   code    svc: NVRTC cubin (tunefleet-nvrtc, as the service compiles), cuLaunchKernel with the
//                shared-memory attribute set before every launch, legacy default stream
//           drv: nvcc's kernel launched as the service launches
//           har: nvcc's kernel, <<<>>> on a created stream
//   timing  single: the runner's Time: warm-up for 10 ms, then flushed samples until 40 ms
//                   have passed, median; one configuration, then the other
//           alt:    the finalists' re-timing: 20 rounds, the two alternating, each sample one
//                   warm-up run and 10 ms of flushed runs; median of the samples' medians
//           paired: the harness's PairedMs against cublasGemmEx, 30 samples; the
//                   configuration's figure is cuBLAS time / its time
//
// Tensor maps, grid (132), block, shared memory and scalars are the same in both by reading
// the code (same cuTensorMapEncodeTiled arguments), so they are not a factor here. Each line
// gives the two figures and c2_gain = time(clusters of 1) / time(clusters of 2) (above 1:
// clusters of 2 faster), with the mean SM clock and board power NVML read while each ran.
// "steady" lines: 100 launches back to back without a flush, 20 rounds alternating.
//
//   timing_conditions CUBIN NAMES [--repeats 3]
//   timing_conditions CUBIN NAMES --rest-study   # the runner's timing with benchmark.rest 0 to 4
//
// CUBIN and NAMES: the two kernels as the service builds them, from a TU of `#include <cstdint>`,
// `#include <cuda_fp16.h>`, `#include "hopper_gemm.cu"` (the spec's generated batch):
//   tunefleet-nvrtc --arch sm_90a --tu batch.cu --cubin batch.cubin --names batch.names \
//     --name '&hopper_gemm<__half,0,128,256,64,4,2,1,16,1,1,1,0>' \
//     --name '&hopper_gemm<__half,0,128,256,64,4,2,1,16,2,1,1,0>'
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a timing_conditions.cu \
//     -o timing_conditions -lcublas -lcuda -L/usr/local/cuda/lib64/stubs
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "../../examples/cuda/check/cuda_check.h"
#include "../../examples/cuda/hopper_gemm/hopper_gemm.cu"

#define CHECK_CU(call)                                                            \
  do {                                                                            \
    CUresult cu_result_ = (call);                                                 \
    if (cu_result_ != CUDA_SUCCESS) {                                             \
      std::fprintf(stderr, "%s:%d: %s: CUresult %d\n", __FILE__, __LINE__, #call, \
                   int(cu_result_));                                              \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)

namespace {

constexpr long long kM = 3000, kN = 5000, kK = 2000;
constexpr int kThreads = 384, kSmem = 4 * (128 + 256) * 64 * 2 + 128 * 256 + 2048;
using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// NVML, sampled every 2 ms on a thread while a measurement runs.
struct Sensors {
  int (*init)() = nullptr;
  int (*handle)(unsigned, void**) = nullptr;
  int (*clock)(void*, int, unsigned*) = nullptr;
  int (*power)(void*, unsigned*) = nullptr;
  void* device = nullptr;
  std::atomic<bool> on{false};
  std::thread thread;
  double mhz_sum = 0, mw_sum = 0;
  int count = 0;

  bool Open() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!lib) return false;
    init = reinterpret_cast<decltype(init)>(dlsym(lib, "nvmlInit_v2"));
    handle = reinterpret_cast<decltype(handle)>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
    clock = reinterpret_cast<decltype(clock)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    power = reinterpret_cast<decltype(power)>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
    return init && handle && clock && power && init() == 0 && handle(0, &device) == 0;
  }
  void Start() {
    mhz_sum = mw_sum = 0;
    count = 0;
    if (!device) return;
    on = true;
    thread = std::thread([this] {
      while (on) {
        unsigned mhz = 0, mw = 0;
        if (clock(device, 1, &mhz) == 0 && power(device, &mw) == 0) {
          mhz_sum += mhz, mw_sum += mw, ++count;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    });
  }
  std::pair<double, double> Stop() {  // mean MHz, mean W
    if (!device) return {0, 0};
    on = false;
    thread.join();
    return {count ? mhz_sum / count : 0, count ? mw_sum / count / 1000 : 0};
  }
};

// runner/host_buffers.cc and kernelspec's problem key, for the service's inputs.
uint64_t InputSeed(const std::string& name, const std::string& key) {
  uint64_t hash = 0xCBF29CE484222325ull;
  auto mix = [&hash](const std::string& text) {
    for (unsigned char c : text) hash = (hash ^ c) * 0x100000001B3ull;
  };
  mix(name);
  mix(std::string("\0", 1));
  mix(key);
  return hash;
}
uint64_t NextRandom(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
std::vector<__half> RunnerFill(const std::string& name, long long count) {
  std::vector<__half> out(count);
  uint64_t state = InputSeed(name, "K=2000,M=3000,N=5000");
  for (long long i = 0; i < count; ++i) {
    const double unit = (NextRandom(state) >> 11) * 0x1.0p-53;
    out[i] = __float2half_rn(static_cast<float>(-1 + 2 * unit));
  }
  return out;
}

// gemm_vs_cublas's inputs.
__global__ void FillRandom(__half* out, long long count, unsigned long long seed) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < count; i += 256ll * gridDim.x) {
    unsigned long long z = seed + 0x9E3779B97F4A7C15ull * (i + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    out[i] = __half(static_cast<float>(z >> 40) / static_cast<float>(1 << 23) - 1.f);
  }
}

struct Buffers {
  CUdeviceptr a, b, c, w;
  CUtensorMap map_a, map_b[2], map_c;  // map_b by cluster size 1, 2
};

CUtensorMap MakeMap(CUdeviceptr base, unsigned long long inner, unsigned long long outer,
                    unsigned box_inner, unsigned box_outer) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {inner, outer}, strides[1] = {inner * 2};
  const cuuint32_t box[2] = {box_inner, box_outer}, element_strides[2] = {1, 1};
  CHECK_CU(cuTensorMapEncodeTiled(
      &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, reinterpret_cast<void*>(base), dims, strides, box,
      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

void Maps(Buffers& d) {
  d.map_a = MakeMap(d.a, kK, kM, 64, 128);
  d.map_b[0] = MakeMap(d.b, kK, kN, 64, 256);
  d.map_b[1] = MakeMap(d.b, kK, kN, 64, 128);
  d.map_c = MakeMap(d.c, kN, kM, 64, 64);
}

constexpr long long kWCount =
    (kM + 512) * (kN + 256) + 2 * ((kM + 63) / 64 + 1) * ((kN + 63) / 64) + 4;

CUdeviceptr Alloc(size_t bytes) {
  CUdeviceptr p;
  CHECK_CU(cuMemAlloc(&p, bytes));
  return p;
}

// The runner's Upload: a pristine and a working copy per buffer, in spec order; kernels run on
// the working copies (Reset copies pristine into them).
Buffers ServiceBuffers() {
  Buffers d;
  auto pair = [](const void* host, size_t bytes) {
    CUdeviceptr pristine = Alloc(bytes), work = Alloc(bytes);
    if (host) {
      CHECK_CU(cuMemcpyHtoD(pristine, host, bytes));
    } else {
      CHECK_CU(cuMemsetD8(pristine, 0, bytes));
    }
    CHECK_CU(cuMemcpyDtoD(work, pristine, bytes));
    return work;
  };
  const std::vector<__half> a = RunnerFill("A", kM * kK), b = RunnerFill("B", kN * kK),
                            c = RunnerFill("C", kM * kN);
  d.a = pair(a.data(), a.size() * 2);
  d.b = pair(b.data(), b.size() * 2);
  d.c = pair(c.data(), c.size() * 2);
  CHECK_CU(cuMemsetD8(d.c, 0xFF, kM * kN * 2));  // poisoned for the check
  d.w = pair(nullptr, kWCount * 4);
  Maps(d);
  return d;
}

Buffers HarnessBuffers() {
  Buffers d;
  d.a = Alloc(kM * kK * 2), d.b = Alloc(kN * kK * 2), d.c = Alloc(kM * kN * 2);
  d.w = Alloc(kWCount * 4);
  CHECK_CU(cuMemsetD8(d.w, 0, kWCount * 4));
  const unsigned long long seed = kM * 131 + kN * 17 + kK;
  FillRandom<<<1024, 256>>>(reinterpret_cast<__half*>(d.a), kM * kK, seed);
  FillRandom<<<1024, 256>>>(reinterpret_cast<__half*>(d.b), kN * kK, ~seed);
  CHECK_CUDA(cudaDeviceSynchronize());
  Maps(d);
  return d;
}

enum Code { kNvrtc, kNvccDriver, kNvccRuntime };
const char* kCodeNames[] = {"svc", "drv", "har"};

struct Launcher {
  Code code;
  CUfunction function[2];  // by cluster size 1, 2
  cudaStream_t stream;     // nullptr: the legacy default stream, as the service

  void operator()(int ci, Buffers& d) const {
    long long m = kM, n = kN, k = kK;
    if (code == kNvccRuntime) {
      if (ci == 0) {
        hopper_gemm<__half, 0, 128, 256, 64, 4, 2, 1, 16, 1, 1, 1, 0>
            <<<132, kThreads, kSmem, stream>>>(
                reinterpret_cast<const __half*>(d.a), reinterpret_cast<const __half*>(d.b),
                reinterpret_cast<__half*>(d.c), reinterpret_cast<float*>(d.w), m, n, k,
                reinterpret_cast<const TmaDescriptor&>(d.map_a),
                reinterpret_cast<const TmaDescriptor&>(d.map_b[0]),
                reinterpret_cast<const TmaDescriptor&>(d.map_c));
      } else {
        hopper_gemm<__half, 0, 128, 256, 64, 4, 2, 1, 16, 2, 1, 1, 0>
            <<<132, kThreads, kSmem, stream>>>(
                reinterpret_cast<const __half*>(d.a), reinterpret_cast<const __half*>(d.b),
                reinterpret_cast<__half*>(d.c), reinterpret_cast<float*>(d.w), m, n, k,
                reinterpret_cast<const TmaDescriptor&>(d.map_a),
                reinterpret_cast<const TmaDescriptor&>(d.map_b[1]),
                reinterpret_cast<const TmaDescriptor&>(d.map_c));
      }
      return;
    }
    // As NvidiaBackend::Launch: the attribute before every launch, then cuLaunchKernel.
    CHECK_CU(
        cuFuncSetAttribute(function[ci], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, kSmem));
    CUdeviceptr pointers[4] = {d.a, d.b, d.c, d.w};
    long long scalars[3] = {m, n, k};
    CUtensorMap maps[3] = {d.map_a, d.map_b[ci], d.map_c};
    void* args[10] = {&pointers[0], &pointers[1], &pointers[2], &pointers[3], &scalars[0],
                      &scalars[1],  &scalars[2],  &maps[0],     &maps[1],     &maps[2]};
    CHECK_CU(cuLaunchKernel(function[ci], 132, 1, 1, kThreads, 1, 1, kSmem,
                            reinterpret_cast<CUstream>(stream), args, nullptr));
  }
};

double RunnerMedian(std::vector<double> v) {  // runner's Percentile(0.5): interpolated
  std::sort(v.begin(), v.end());
  const double pos = 0.5 * (v.size() - 1);
  const size_t lo = static_cast<size_t>(pos), hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

struct Env {
  CUdeviceptr flush;
  size_t flush_bytes;
  cudaStream_t stream;
  cudaEvent_t start, stop;
  unsigned char flush_value = 0;
};

// The runner's RepeatRuns around NvidiaBackend::Time's lambdas.
// With `rest`, as benchmark.rest: the host sleeps that many times each run's time after it;
// `enqueue_us` (when set) gets the median host time from the flush's enqueue to the launch's.
double ServiceTime(Env& e, const Launcher& launch, int ci, Buffers& d, double warmup_ms,
                   double min_time_ms, double rest = 0, double* enqueue_us = nullptr) {
  auto sleep = [rest](double run_ns) {
    if (rest > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(int64_t(rest * run_ns)));
  };
  const auto warm = Clock::now();
  do {
    const auto run = Clock::now();
    launch(ci, d);
    CHECK_CUDA(cudaStreamSynchronize(e.stream));
    sleep(MsSince(run) * 1e6);
  } while (MsSince(warm) < warmup_ms);
  std::vector<double> ns, enqueue;
  const auto begin = Clock::now();
  while (ns.size() < 1000 && (ns.size() < 1 || MsSince(begin) < min_time_ms)) {
    const auto enqueue_start = Clock::now();
    CHECK_CU(cuMemsetD8Async(e.flush, ++e.flush_value, e.flush_bytes,
                             reinterpret_cast<CUstream>(e.stream)));
    CHECK_CUDA(cudaEventRecord(e.start, e.stream));
    launch(ci, d);
    enqueue.push_back(MsSince(enqueue_start) * 1e3);
    CHECK_CUDA(cudaEventRecord(e.stop, e.stream));
    CHECK_CUDA(cudaEventSynchronize(e.stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, e.start, e.stop));
    ns.push_back(ms * 1e6);
    sleep(ms * 1e6);
  }
  if (enqueue_us) *enqueue_us = RunnerMedian(enqueue);
  return RunnerMedian(ns);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s CUBIN NAMES [--repeats N]\n", argv[0]);
    return 2;
  }
  const int repeats = argc >= 5 ? std::atoi(argv[4]) : 3;
  CHECK_CUDA(cudaFree(nullptr));
  CHECK_CU(cuInit(0));
  CUdevice device;
  CHECK_CU(cuDeviceGet(&device, 0));
  int l2 = 0, sms = 0;
  CHECK_CU(cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device));
  CHECK_CU(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device));
  std::printf("# L2 %d bytes, %d SMs\n", l2, sms);

  // The service's cubin: symbols from tunefleet-nvrtc's names file, in --name order.
  CUmodule module;
  CHECK_CU(cuModuleLoad(&module, argv[1]));
  std::vector<std::string> symbols;
  {
    std::ifstream names(argv[2]);
    for (std::string line; std::getline(names, line);)
      symbols.push_back(line.substr(line.find('\t') + 1));
  }
  Launcher launchers[3];
  launchers[kNvrtc].code = kNvrtc;
  for (int ci = 0; ci < 2; ++ci)
    CHECK_CU(cuModuleGetFunction(&launchers[kNvrtc].function[ci], module, symbols[ci].c_str()));
  launchers[kNvccDriver].code = kNvccDriver;
  CHECK_CUDA(
      cudaGetFuncBySymbol(reinterpret_cast<cudaFunction_t*>(&launchers[kNvccDriver].function[0]),
                          reinterpret_cast<const void*>(
                              hopper_gemm<__half, 0, 128, 256, 64, 4, 2, 1, 16, 1, 1, 1, 0>)));
  CHECK_CUDA(
      cudaGetFuncBySymbol(reinterpret_cast<cudaFunction_t*>(&launchers[kNvccDriver].function[1]),
                          reinterpret_cast<const void*>(
                              hopper_gemm<__half, 0, 128, 256, 64, 4, 2, 1, 16, 2, 1, 1, 0>)));
  launchers[kNvccRuntime].code = kNvccRuntime;
  CHECK_CUDA(cudaFuncSetAttribute(hopper_gemm<__half, 0, 128, 256, 64, 4, 2, 1, 16, 1, 1, 1, 0>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  CHECK_CUDA(cudaFuncSetAttribute(hopper_gemm<__half, 0, 128, 256, 64, 4, 2, 1, 16, 2, 1, 1, 0>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  cudaStream_t created;
  CHECK_CUDA(cudaStreamCreate(&created));
  launchers[kNvrtc].stream = launchers[kNvccDriver].stream = nullptr;
  launchers[kNvccRuntime].stream = created;

  Buffers data[2] = {ServiceBuffers(), HarnessBuffers()};
  const char* kDataNames[] = {"svc", "har"};
  const size_t flush_bytes[2] = {2 * static_cast<size_t>(l2), size_t{512} << 20};
  const char* kFlushNames[] = {"svc", "har"};
  CUdeviceptr flush = Alloc(flush_bytes[1]);
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  Sensors sensors;
  std::printf("# NVML %s\n", sensors.Open() ? "sampled every 2 ms" : "not available");

  // Every code path against the reference, on both inputs (max |difference|, f16).
  {
    std::vector<__half> ref(kM * kN), got(kM * kN);
    for (int di = 0; di < 2; ++di) {
      Buffers& d = data[di];
      hopper_gemm_reference<__half, 0><<<dim3((kN + 15) / 16, (kM + 15) / 16), dim3(16, 16)>>>(
          reinterpret_cast<const __half*>(d.a), reinterpret_cast<const __half*>(d.b),
          reinterpret_cast<__half*>(d.c), reinterpret_cast<float*>(d.w), kM, kN, kK);
      CHECK_CUDA(cudaDeviceSynchronize());
      CHECK_CU(cuMemcpyDtoH(ref.data(), d.c, kM * kN * 2));
      for (int code = 0; code < 3; ++code) {
        for (int ci = 0; ci < 2; ++ci) {
          CHECK_CU(cuMemsetD8(d.c, 0xFF, kM * kN * 2));
          launchers[code](ci, d);
          CHECK_CUDA(cudaDeviceSynchronize());
          CHECK_CU(cuMemcpyDtoH(got.data(), d.c, kM * kN * 2));
          double worst = 0;
          for (long long i = 0; i < kM * kN; ++i) {
            const double diff = std::fabs(__half2float(got[i]) - __half2float(ref[i]));
            worst = std::isnan(diff) ? INFINITY : std::max(worst, diff);
          }
          std::printf("# check data %s code %s cluster %d: max |C - ref| %.4g\n", kDataNames[di],
                      kCodeNames[code], ci + 1, worst);
        }
      }
    }
  }

  // Host time of one launch call (enqueue only): a gap between the start event and the
  // kernel shows in a sample when the flush before it ends sooner than the launch is enqueued.
  for (int code = 0; code < 3; ++code) {
    for (int ci = 0; ci < 2; ++ci) {
      CHECK_CUDA(cudaDeviceSynchronize());
      const auto begin = Clock::now();
      for (int i = 0; i < 100; ++i) launchers[code](ci, data[0]);
      const double us = MsSince(begin) * 10;
      CHECK_CUDA(cudaDeviceSynchronize());
      std::printf("# launch call on the host, code %s cluster %d: %.2f us\n", kCodeNames[code],
                  ci + 1, us);
    }
  }

  if (argc >= 4 && std::string(argv[3]) == "--rest-study") {
    // The runner's single timing (service code and inputs) with benchmark.rest R, both
    // flushes; then the harness's PairedMs for reference, all in one process.
    std::printf("%-3s %-5s %-5s %10s %10s %8s %6s %6s %5s %5s %8s %8s\n", "rep", "rest", "flush",
                "c1", "c2", "c2_gain", "MHz1", "MHz2", "W1", "W2", "enq1_us", "enq2_us");
    for (int rep = 0; rep < 3; ++rep) {
      for (int fi = 0; fi < 2; ++fi) {
        for (double rest : {0.0, 0.5, 1.0, 2.0, 4.0}) {
          Env e{flush, flush_bytes[fi], nullptr};
          CHECK_CUDA(cudaEventCreate(&e.start));
          CHECK_CUDA(cudaEventCreate(&e.stop));
          double t[2], mhz[2], watts[2], enq[2];
          for (int k = 0; k < 2; ++k) {
            const int ci = (rep + k) % 2;
            sensors.Start();
            t[ci] = ServiceTime(e, launchers[kNvrtc], ci, data[0], 10, 40, rest, &enq[ci]) / 1e3;
            std::tie(mhz[ci], watts[ci]) = sensors.Stop();
          }
          std::printf("%-3d %-5.1f %-5s %10.4f %10.4f %8.4f %6.0f %6.0f %5.0f %5.0f %8.1f %8.1f\n",
                      rep, rest, kFlushNames[fi], t[0], t[1], t[0] / t[1], mhz[0], mhz[1], watts[0],
                      watts[1], enq[0], enq[1]);
          std::fflush(stdout);
          CHECK_CUDA(cudaEventDestroy(e.start));
          CHECK_CUDA(cudaEventDestroy(e.stop));
        }
      }
    }
    return 0;
  }

  std::printf("%-3s %-6s %-5s %-4s %-4s %10s %10s %8s %6s %6s %5s %5s\n", "rep", "timing", "flush",
              "data", "code", "c1", "c2", "c2_gain", "MHz1", "MHz2", "W1", "W2");
  const char* kTimings[] = {"single", "alt", "paired"};
  for (int rep = 0; rep < repeats; ++rep) {
    for (int cell = 0; cell < 36; ++cell) {
      // A different order every repeat, so that drift over the run charges no cell alike.
      const int index = (cell * 7 + rep * 11) % 36;
      const int timing = index / 12, fi = index / 6 % 2, di = index / 3 % 2, code = index % 3;
      Buffers& d = data[di];
      const Launcher& launch = launchers[code];
      Env e{flush, flush_bytes[fi], launch.stream};
      CHECK_CUDA(cudaEventCreate(&e.start));
      CHECK_CUDA(cudaEventCreate(&e.stop));
      double figure[2], mhz[2], watts[2];
      if (timing == 0) {
        for (int ci = 0; ci < 2; ++ci) {
          const int which = rep % 2 ? 1 - ci : ci;
          sensors.Start();
          figure[which] = ServiceTime(e, launch, which, d, 10, 40) / 1e3;
          std::tie(mhz[which], watts[which]) = sensors.Stop();
        }
      } else if (timing == 1) {
        std::vector<double> medians[2];
        double mhz_sum[2] = {}, w_sum[2] = {};
        for (int round = 0; round < 20; ++round) {
          for (int k = 0; k < 2; ++k) {
            const int which = (round + k) % 2;
            sensors.Start();
            medians[which].push_back(ServiceTime(e, launch, which, d, 0, 10) / 1e3);
            auto [m, w] = sensors.Stop();
            mhz_sum[which] += m, w_sum[which] += w;
          }
        }
        for (int ci = 0; ci < 2; ++ci) {
          figure[ci] = RunnerMedian(medians[ci]);
          mhz[ci] = mhz_sum[ci] / 20, watts[ci] = w_sum[ci] / 20;
        }
      } else {
        CHECK_CUBLAS(cublasSetStream(handle, launch.stream));
        TimingOptions options{30, 1, launch.stream, reinterpret_cast<void*>(flush),
                              flush_bytes[fi]};
        const float alpha = 1, beta = 0;
        auto cublas = [&] {
          CHECK_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, kN, kM, kK, &alpha,
                                    reinterpret_cast<void*>(d.b), CUDA_R_16F, kK,
                                    reinterpret_cast<void*>(d.a), CUDA_R_16F, kK, &beta,
                                    reinterpret_cast<void*>(d.c), CUDA_R_16F, kN,
                                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        };
        for (int ci = 0; ci < 2; ++ci) {
          const int which = rep % 2 ? 1 - ci : ci;
          sensors.Start();
          // Our time in units of cuBLAS's (1 / the harness's ratio), so c2_gain is figure1 /
          // figure2.
          figure[which] = 1 / PairedMs(options, cublas, [&] { launch(which, d); }).ratio;
          std::tie(mhz[which], watts[which]) = sensors.Stop();
        }
      }
      CHECK_CUDA(cudaEventDestroy(e.start));
      CHECK_CUDA(cudaEventDestroy(e.stop));
      std::printf("%-3d %-6s %-5s %-4s %-4s %10.4f %10.4f %8.4f %6.0f %6.0f %5.0f %5.0f\n", rep,
                  kTimings[timing], kFlushNames[fi], kDataNames[di], kCodeNames[code], figure[0],
                  figure[1], figure[0] / figure[1], mhz[0], mhz[1], watts[0], watts[1]);
      std::fflush(stdout);
    }
  }

  // Back to back without a flush (an application running the GEMM in a loop).
  for (int di = 0; di < 2; ++di) {
    const Launcher& launch = launchers[kNvrtc];
    std::vector<double> per_launch[2];
    cudaEvent_t start, stop;
    CHECK_CUDA(cudaEventCreate(&start));
    CHECK_CUDA(cudaEventCreate(&stop));
    double mhz_sum[2] = {}, w_sum[2] = {};
    for (int round = 0; round < 20; ++round) {
      for (int k = 0; k < 2; ++k) {
        const int which = (round + k) % 2;
        sensors.Start();
        launch(which, data[di]);
        CHECK_CUDA(cudaEventRecord(start, launch.stream));
        for (int i = 0; i < 100; ++i) launch(which, data[di]);
        CHECK_CUDA(cudaEventRecord(stop, launch.stream));
        CHECK_CUDA(cudaEventSynchronize(stop));
        float ms = 0;
        CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
        per_launch[which].push_back(ms * 10);  // us per launch
        auto [m, w] = sensors.Stop();
        mhz_sum[which] += m, w_sum[which] += w;
      }
    }
    const double t1 = RunnerMedian(per_launch[0]), t2 = RunnerMedian(per_launch[1]);
    std::printf("%-3s %-6s %-5s %-4s %-4s %10.4f %10.4f %8.4f %6.0f %6.0f %5.0f %5.0f\n", "-",
                "steady", "none", kDataNames[di], "svc", t1, t2, t1 / t2, mhz_sum[0] / 20,
                mhz_sum[1] / 20, w_sum[0] / 20, w_sum[1] / 20);
  }
  CHECK_CUBLAS(cublasDestroy(handle));
  return 0;
}
