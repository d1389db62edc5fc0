// Tensor-core GEMM, fp16 inputs with fp32 accumulation and fp32 output:
//   C[m][n] = sum_k A[m][k] * B[n][k]
// A is M x K row-major; B is N x K row-major (that is, the K x N operand stored
// column-major, the "TN" layout), so both operands are contiguous along K and
// load into mma fragments with plain ldmatrix. C is M x N row-major.
//
// Built on mma.sync.m16n8k16 (sm_80 and later, sm_90 included), ldmatrix, and
// a STAGES-deep cp.async pipeline in dynamic shared memory of
// (BM + BN) * BK * 2 * STAGES bytes. The kernel requires M % BM == 0,
// N % BN == 0 and K % BK == 0 (the spec's constraints say so).

#include <cuda_fp16.h>

#include <cstdint>

namespace gemm_detail {

// Shared tiles are stored as 16-byte chunks (8 halves). Chunk i of a tile lives
// at chunk i ^ ((i / 8) % 8): within each 128-byte line the chunks are permuted
// by the line number, so the 8 rows an ldmatrix phase reads, and the chunks a
// warp's cp.async writes, fall into 8 different bank groups for BK = 32 and 64.
__device__ __forceinline__ int Swizzle(int chunk) { return chunk ^ ((chunk >> 3) & 7); }

__device__ __forceinline__ void CopyAsync16(unsigned dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
__device__ __forceinline__ void CommitAsync() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void WaitAsync() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void LoadMatrixX4(unsigned addr, unsigned (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

__device__ __forceinline__ void Mma16816(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                         unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Copies a ROWS x BK tile starting at `src` (row stride `ld` halves) into the
// swizzled shared tile at shared address `dst`.
template <int ROWS, int BK, int THREADS>
__device__ __forceinline__ void LoadTile(unsigned dst, const __half* src, int64_t ld) {
  constexpr int kChunksPerRow = BK / 8;
  constexpr int kChunks = ROWS * kChunksPerRow;
  static_assert(kChunks % THREADS == 0, "every thread copies the same number of chunks");
#pragma unroll
  for (int k = 0; k < kChunks / THREADS; ++k) {
    const int i = k * THREADS + threadIdx.x;
    const int row = i / kChunksPerRow;
    const int col = (i % kChunksPerRow) * 8;
    CopyAsync16(dst + Swizzle(i) * 16, src + row * ld + col);
  }
}

}  // namespace gemm_detail

// A block computes a BM x BN tile of C with WARPS_M x WARPS_N warps; each warp
// owns a (BM / WARPS_M) x (BN / WARPS_N) sub-tile held in registers.
template <int BM, int BN, int BK, int STAGES, int WARPS_M, int WARPS_N>
__global__ void __launch_bounds__(WARPS_M* WARPS_N * 32)
    gemm(const __half* A, const __half* B, float* C, int64_t M, int64_t N, int64_t K) {
  using namespace gemm_detail;
  constexpr int kThreads = WARPS_M * WARPS_N * 32;
  constexpr int kWarpM = BM / WARPS_M;
  constexpr int kWarpN = BN / WARPS_N;
  constexpr int kMmaM = kWarpM / 16;  // m16 tiles per warp
  constexpr int kMmaN = kWarpN / 8;   // n8 tiles per warp
  constexpr int kStageBytes = (BM + BN) * BK * 2;
  static_assert(kWarpM % 16 == 0 && kWarpN % 16 == 0, "warp tile is a multiple of 16x16");
  static_assert(BK % 16 == 0 && STAGES >= 2, "k steps of 16, at least double buffering");

  extern __shared__ __align__(128) unsigned char smem[];
  const unsigned smem_base = static_cast<unsigned>(__cvta_generic_to_shared(smem));

  // Grouped block order: consecutive blocks sweep 8 block-rows of C column by
  // column, so the A and B tiles they share are still in L2.
  constexpr int kGroupRows = 8;
  const int grid_m = gridDim.y, grid_n = gridDim.x;
  const int block_id = blockIdx.y * grid_n + blockIdx.x;
  const int group = block_id / (kGroupRows * grid_n);
  const int first_row = group * kGroupRows;
  const int group_rows = min(grid_m - first_row, kGroupRows);
  const int block_m = first_row + (block_id % (kGroupRows * grid_n)) % group_rows;
  const int block_n = (block_id % (kGroupRows * grid_n)) / group_rows;

  const __half* a_tile = A + int64_t{block_m} * BM * K;
  const __half* b_tile = B + int64_t{block_n} * BN * K;
  const int k_tiles = static_cast<int>(K / BK);

  auto load_stage = [&](int stage, int k_tile) {
    const unsigned dst = smem_base + stage * kStageBytes;
    LoadTile<BM, BK, kThreads>(dst, a_tile + int64_t{k_tile} * BK, K);
    LoadTile<BN, BK, kThreads>(dst + BM * BK * 2, b_tile + int64_t{k_tile} * BK, K);
  };

  // Fill all stages but one; each k tile is its own commit group, empty ones
  // included, so "wait until at most STAGES - 2 groups are pending" always
  // means "the tile about to be used has landed".
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) load_stage(s, s);
    CommitAsync();
  }

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_row = (warp / WARPS_N) * kWarpM;
  const int warp_col = (warp % WARPS_N) * kWarpN;

  float acc[kMmaM][kMmaN][4] = {};

  for (int kt = 0; kt < k_tiles; ++kt) {
    WaitAsync<STAGES - 2>();
    // Also guarantees every warp is done reading the stage refilled below.
    __syncthreads();
    const int next = kt + STAGES - 1;
    if (next < k_tiles) load_stage(next % STAGES, next);
    CommitAsync();

    const unsigned a_smem = smem_base + (kt % STAGES) * kStageBytes;
    const unsigned b_smem = a_smem + BM * BK * 2;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      // ldmatrix.x4: lane l supplies the row address of 8x8 matrix l / 8.
      const int quad = lane / 8, row_in_quad = lane % 8;
      unsigned a_frag[kMmaM][4];
#pragma unroll
      for (int i = 0; i < kMmaM; ++i) {
        // Matrices: rows 0-7 / 8-15 of the m16 tile, k 0-7 then 8-15.
        const int row = warp_row + i * 16 + (quad % 2) * 8 + row_in_quad;
        const int chunk = row * (BK / 8) + kk / 8 + quad / 2;
        LoadMatrixX4(a_smem + Swizzle(chunk) * 16, a_frag[i]);
      }
      unsigned b_frag[kMmaN][2];
#pragma unroll
      for (int j = 0; j < kMmaN; j += 2) {
        // Matrices: n 0-7 at k 0-7 and 8-15, then n 8-15: two n8 tiles.
        const int row = warp_col + j * 8 + (quad / 2) * 8 + row_in_quad;
        const int chunk = row * (BK / 8) + kk / 8 + quad % 2;
        unsigned r[4];
        LoadMatrixX4(b_smem + Swizzle(chunk) * 16, r);
        b_frag[j][0] = r[0];
        b_frag[j][1] = r[1];
        b_frag[j + 1][0] = r[2];
        b_frag[j + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < kMmaM; ++i) {
#pragma unroll
        for (int j = 0; j < kMmaN; ++j) Mma16816(acc[i][j], a_frag[i], b_frag[j][0], b_frag[j][1]);
      }
    }
  }
  WaitAsync<0>();  // no copy may still target shared memory when the block exits

  // Accumulator layout of m16n8: lane holds rows lane/4 and lane/4 + 8, columns
  // 2 * (lane % 4) and the next one.
  const int64_t c_row = int64_t{block_m} * BM + warp_row + lane / 4;
  const int64_t c_col = int64_t{block_n} * BN + warp_col + (lane % 4) * 2;
#pragma unroll
  for (int i = 0; i < kMmaM; ++i) {
#pragma unroll
    for (int j = 0; j < kMmaN; ++j) {
      float* out = C + (c_row + i * 16) * N + c_col + j * 8;
      *reinterpret_cast<float2*>(out) = make_float2(acc[i][j][0], acc[i][j][1]);
      *reinterpret_cast<float2*>(out + 8 * N) = make_float2(acc[i][j][2], acc[i][j][3]);
    }
  }
}

// One thread per element of C, fp32 accumulation in k order.
__global__ void gemm_reference(const __half* A, const __half* B, float* C, int64_t M, int64_t N,
                               int64_t K) {
  const int64_t n = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const int64_t m = int64_t{blockIdx.y} * blockDim.y + threadIdx.y;
  if (m >= M || n >= N) return;
  float sum = 0;
  for (int64_t k = 0; k < K; ++k) sum += __half2float(A[m * K + k]) * __half2float(B[n * K + k]);
  C[m * N + n] = sum;
}
