// Output checking on the GPU: a candidate's output against the reference
// output, element by element, with exactly the rule of runner::Compare
// (host_buffers.cc), so that a large output is checked where it lies instead
// of being copied to the host. The CUDA backend's compare_kernels.cu in HIP:
// wavefronts are warpSize wide (64 on gfx9, 32 on gfx10/11) and HIP's
// shuffles take no mask. Built for every gfx target by clang-19 at build
// time (compare_kernels_main.cc) and embedded in the runner; one kernel per
// dtype, named tf_compare_<dtype>.
#include <hip/hip_bfloat16.h>
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>

#include <cstdint>

// What the kernels accumulate; the host zeroes counts and max_abs_error_bits
// and sets first_mismatch to all ones before the launch.
struct CompareTotals {
  unsigned long long mismatches;
  unsigned long long first_mismatch;      // element index; all ones: none
  unsigned long long max_abs_error_bits;  // a double >= 0: its bits order as its values
};

__device__ double ToDouble(float v) { return v; }
__device__ double ToDouble(double v) { return v; }
__device__ double ToDouble(__half v) { return __half2float(v); }
__device__ double ToDouble(hip_bfloat16 v) { return static_cast<float>(v); }
__device__ double ToDouble(int8_t v) { return v; }
__device__ double ToDouble(int32_t v) { return v; }
__device__ double ToDouble(int64_t v) { return static_cast<double>(v); }
__device__ double ToDouble(uint8_t v) { return v; }
__device__ double ToDouble(uint32_t v) { return v; }

template <typename T>
__device__ void CompareElements(const T* out, const T* ref, long long count, double rtol,
                                double atol, CompareTotals* totals) {
  unsigned long long mismatches = 0, first = ~0ull;
  double max_abs_error = 0;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const double got = ToDouble(out[i]), expected = ToDouble(ref[i]);
    if (got == expected || (isnan(got) && isnan(expected))) continue;
    const double diff = fabs(got - expected);
    max_abs_error = fmax(max_abs_error, isnan(diff) ? INFINITY : diff);
    if (diff <= atol + rtol * fabs(expected)) continue;
    if (mismatches++ == 0) first = i;  // a thread's indices rise
  }
  // One atomic of each kind per wavefront.
  for (int offset = warpSize / 2; offset > 0; offset /= 2) {
    mismatches += __shfl_down(mismatches, offset);
    const unsigned long long other = __shfl_down(first, offset);
    first = other < first ? other : first;
    max_abs_error = fmax(max_abs_error, __shfl_down(max_abs_error, offset));
  }
  if (threadIdx.x % warpSize != 0) return;
  if (mismatches != 0) {
    atomicAdd(&totals->mismatches, mismatches);
    atomicMin(&totals->first_mismatch, first);
  }
  if (max_abs_error > 0) {
    atomicMax(&totals->max_abs_error_bits,
              static_cast<unsigned long long>(__double_as_longlong(max_abs_error)));
  }
}

#define TF_COMPARE_KERNEL(dtype, type)                                                             \
  extern "C" __global__ void tf_compare_##dtype(const type* out, const type* ref, long long count, \
                                                double rtol, double atol, CompareTotals* totals) { \
    CompareElements(out, ref, count, rtol, atol, totals);                                          \
  }

TF_COMPARE_KERNEL(f32, float)
TF_COMPARE_KERNEL(f64, double)
TF_COMPARE_KERNEL(f16, __half)
TF_COMPARE_KERNEL(bf16, hip_bfloat16)
TF_COMPARE_KERNEL(i8, int8_t)
TF_COMPARE_KERNEL(i32, int32_t)
TF_COMPARE_KERNEL(i64, int64_t)
TF_COMPARE_KERNEL(u8, uint8_t)
TF_COMPARE_KERNEL(u32, uint32_t)
