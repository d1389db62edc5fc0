// Out-of-place fp32 matrix transpose on AMD GPUs: `in` is rows x cols, `out`
// is cols x rows, both row-major. Memory-bound: the best variant moves
// 2 * rows * cols * 4 bytes at close to copy bandwidth.

#include <hip/hip_runtime.h>

#include <cstdint>

// One workgroup moves a TILE x TILE tile through LDS so that both the global
// read (along a row of `in`) and the global write (along a row of `out`) are
// coalesced. The workgroup is TILE x ROWS threads; each thread moves
// TILE / ROWS elements, keeping several loads in flight. PAD = 1 adds one
// word per LDS row, so that the column-wise reads of the tile fall into
// different LDS banks.
template <int TILE, int ROWS, int PAD>
__global__ void __launch_bounds__(TILE* ROWS)
    transpose(const float* in, float* out, int64_t rows, int64_t cols) {
  static_assert(TILE % ROWS == 0, "each thread moves a whole number of elements");
  __shared__ float tile[TILE][TILE + PAD];

  const int64_t tile_col = static_cast<int64_t>(blockIdx.x) * TILE;
  const int64_t tile_row = static_cast<int64_t>(blockIdx.y) * TILE;

  const int64_t c = tile_col + threadIdx.x;
#pragma unroll
  for (int r = threadIdx.y; r < TILE; r += ROWS) {
    if (tile_row + r < rows && c < cols) tile[r][threadIdx.x] = in[(tile_row + r) * cols + c];
  }
  __syncthreads();

  // The transposed tile: out's rows are in's columns.
  const int64_t out_col = tile_row + threadIdx.x;
#pragma unroll
  for (int r = threadIdx.y; r < TILE; r += ROWS) {
    if (tile_col + r < cols && out_col < rows)
      out[(tile_col + r) * rows + out_col] = tile[threadIdx.x][r];
  }
}

// One thread per element; its writes are strided, so it is slow but plainly right.
__global__ void transpose_reference(const float* in, float* out, int64_t rows, int64_t cols) {
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t r = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];
}
