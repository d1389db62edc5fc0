// Matrix-core GEMM on AMD GPUs, fp16 inputs with fp32 accumulation and fp32
// output:
//   C[m][n] = sum_k A[m][k] * B[n][k]
// A is M x K row-major; B is N x K row-major (the K x N operand stored
// column-major, the "TN" layout), so both operands are contiguous along K.
// C is M x N row-major. Requires M % BM == 0, N % BN == 0, K % BK == 0 (the
// spec's constraints say so).
//
// A workgroup of WAVES_M x WAVES_N wavefronts computes a BM x BN tile; each
// wavefront a (BM / WAVES_M) x (BN / WAVES_N) part of it as 16 x 16
// fragments, on the matrix cores of the target:
//   gfx90a, gfx940, gfx942  v_mfma_f32_16x16x16f16 (MFMA, wave64)
//   gfx1100                 v_wmma_f32_16x16x16_f16 (WMMA, wave32)
//   others (gfx1030)        the same fragments with plain FMAs
// K advances BK at a time through STAGES LDS buffers: tiles STAGES - 1
// steps ahead are loaded while the current one is multiplied.
//
// Compiled and checked for resources in CI; not yet run on an AMD GPU.

#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>

#include <cstdint>

namespace gemm_detail {

#ifdef __AMDGCN_WAVEFRONT_SIZE
constexpr int kWave = __AMDGCN_WAVEFRONT_SIZE;
#else
constexpr int kWave = 64;
#endif

#if defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
#define GEMM_MFMA 1
#elif defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__)
#define GEMM_WMMA 1
#endif

typedef _Float16 half4 __attribute__((ext_vector_type(4)));
typedef _Float16 half16 __attribute__((ext_vector_type(16)));
typedef float float4v __attribute__((ext_vector_type(4)));
typedef float float8v __attribute__((ext_vector_type(8)));

// Halves of padding per LDS row: rows stay 16-byte aligned and successive
// rows start in different banks.
constexpr int kPad = 8;

// The accumulator fragment of one 16 x 16 output block: kElems values per
// lane, element i of lane l at row FragmentRow(i, l), column l % 16.
constexpr int kElems = 256 / kWave;
#if GEMM_MFMA
typedef float4v Fragment;
__device__ __forceinline__ int FragmentRow(int i, int lane) { return (lane / 16) * 4 + i; }
#elif GEMM_WMMA
typedef float8v Fragment;
__device__ __forceinline__ int FragmentRow(int i, int lane) { return 2 * i + lane / 16; }
#else
typedef float Fragment __attribute__((ext_vector_type(kElems)));
__device__ __forceinline__ int FragmentRow(int i, int lane) { return i * (kWave / 16) + lane / 16; }
#endif

// Copies a ROWS x BK tile at `src` (row stride `ld` halves) into LDS rows of
// BK + kPad halves, 16 bytes per thread and step.
template <int ROWS, int BK, int THREADS>
__device__ __forceinline__ void LoadTile(_Float16* dst, const _Float16* src, int64_t ld) {
  constexpr int kChunksPerRow = BK / 8;
  for (int i = threadIdx.x; i < ROWS * kChunksPerRow; i += THREADS) {
    const int row = i / kChunksPerRow, col = (i % kChunksPerRow) * 8;
    *reinterpret_cast<uint4*>(dst + row * (BK + kPad) + col) =
        *reinterpret_cast<const uint4*>(src + row * ld + col);
  }
}

// acc += A[a_row0.., k0..k0+16) x B[b_row0.., k0..k0+16)^T for one fragment.
template <int BK>
__device__ __forceinline__ void MultiplyFragment(Fragment& acc, const _Float16* a,
                                                 const _Float16* b, int k0, int lane) {
#if GEMM_MFMA
  const half4 fa =
      *reinterpret_cast<const half4*>(a + (lane % 16) * (BK + kPad) + k0 + (lane / 16) * 4);
  const half4 fb =
      *reinterpret_cast<const half4*>(b + (lane % 16) * (BK + kPad) + k0 + (lane / 16) * 4);
  acc = __builtin_amdgcn_mfma_f32_16x16x16f16(fa, fb, acc, 0, 0, 0);
#elif GEMM_WMMA
  const half16 fa = *reinterpret_cast<const half16*>(a + (lane % 16) * (BK + kPad) + k0);
  const half16 fb = *reinterpret_cast<const half16*>(b + (lane % 16) * (BK + kPad) + k0);
  acc = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(fa, fb, acc);
#else
  const _Float16* brow = b + (lane % 16) * (BK + kPad) + k0;
#pragma unroll
  for (int i = 0; i < kElems; ++i) {
    const _Float16* arow = a + FragmentRow(i, lane) * (BK + kPad) + k0;
    float sum = acc[i];
#pragma unroll
    for (int k = 0; k < 16; ++k) sum += float(arow[k]) * float(brow[k]);
    acc[i] = sum;
  }
#endif
}

}  // namespace gemm_detail

template <int BM, int BN, int BK, int STAGES, int WAVES_M, int WAVES_N>
__global__ void __launch_bounds__(WAVES_M* WAVES_N* gemm_detail::kWave)
    gemm(const __half* A_, const __half* B_, float* C, int64_t M, int64_t N, int64_t K) {
  using namespace gemm_detail;
  constexpr int kThreads = WAVES_M * WAVES_N * kWave;
  constexpr int WM = BM / WAVES_M, WN = BN / WAVES_N;  // one wavefront's part
  constexpr int FM = WM / 16, FN = WN / 16;
  static_assert(WM % 16 == 0 && WN % 16 == 0, "whole 16 x 16 fragments per wavefront");
  static_assert(BK % 16 == 0, "whole k steps of 16");
  static_assert(STAGES >= 1, "at least one LDS buffer");
  (void)M;

  extern __shared__ _Float16 lds[];  // STAGES x (A tile, B tile)
  constexpr int kStageHalves = (BM + BN) * (BK + kPad);
  const auto* A = reinterpret_cast<const _Float16*>(A_);
  const auto* B = reinterpret_cast<const _Float16*>(B_);
  const int64_t m0 = static_cast<int64_t>(blockIdx.y) * BM;
  const int64_t n0 = static_cast<int64_t>(blockIdx.x) * BN;
  const int lane = threadIdx.x % kWave, wave = threadIdx.x / kWave;
  const int wm = wave / WAVES_N, wn = wave % WAVES_N;

  auto load = [&](int kt) {
    _Float16* stage = lds + (kt % STAGES) * kStageHalves;
    LoadTile<BM, BK, kThreads>(stage, A + m0 * K + int64_t{kt} * BK, K);
    LoadTile<BN, BK, kThreads>(stage + BM * (BK + kPad), B + n0 * K + int64_t{kt} * BK, K);
  };

  Fragment acc[FM][FN];
#pragma unroll
  for (int fm = 0; fm < FM; ++fm)
#pragma unroll
    for (int fn = 0; fn < FN; ++fn) acc[fm][fn] = Fragment{};

  const int tiles = static_cast<int>(K / BK);
  for (int kt = 0; kt < STAGES - 1 && kt < tiles; ++kt) load(kt);
  if (STAGES > 1) __syncthreads();
  for (int kt = 0; kt < tiles; ++kt) {
    // The buffer this writes was last read in step kt - 1, which every
    // wavefront has left at the barrier closing that step.
    if (kt + STAGES - 1 < tiles) load(kt + STAGES - 1);
    if (STAGES == 1) __syncthreads();
    const _Float16* a = lds + (kt % STAGES) * kStageHalves + wm * WM * (BK + kPad);
    const _Float16* b = lds + (kt % STAGES) * kStageHalves + (BM + wn * WN) * (BK + kPad);
#pragma unroll
    for (int k0 = 0; k0 < BK; k0 += 16)
#pragma unroll
      for (int fm = 0; fm < FM; ++fm)
#pragma unroll
        for (int fn = 0; fn < FN; ++fn)
          MultiplyFragment<BK>(acc[fm][fn], a + fm * 16 * (BK + kPad), b + fn * 16 * (BK + kPad),
                               k0, lane);
    __syncthreads();
  }

#pragma unroll
  for (int fm = 0; fm < FM; ++fm)
#pragma unroll
    for (int fn = 0; fn < FN; ++fn)
#pragma unroll
      for (int i = 0; i < kElems; ++i) {
        const int64_t row = m0 + wm * WM + fm * 16 + FragmentRow(i, lane);
        const int64_t col = n0 + wn * WN + fn * 16 + lane % 16;
        C[row * N + col] = acc[fm][fn][i];
      }
}

// One thread per element of C, fp32 sums in K order: slow, plainly right.
__global__ void gemm_reference(const __half* A, const __half* B, float* C, int64_t M, int64_t N,
                               int64_t K) {
  const int64_t n = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t m = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (m >= M || n >= N) return;
  float sum = 0;
  for (int64_t k = 0; k < K; ++k) sum += __half2float(A[m * K + k]) * __half2float(B[n * K + k]);
  C[m * N + n] = sum;
}
