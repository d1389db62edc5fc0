// FlashAttention forward for Hopper (sm_90a), FlashAttention-2/3 style:
//   O[b][h][i] = sum_j softmax_j(Q[b][h][i] . K[b][h][j] / sqrt(D)) V[b][h][j],
// fp16 or bf16 in, fp32 softmax and accumulation, O in the input type. Q, K, V and O are
// [B][H][S][D] row-major (PyTorch's contiguous (batch, heads, sequence, head dim)); queries and
// keys have one length S. CAUSAL != 0 masks key j > query i.
//
// A tile is BM = 64 * CONSUMERS queries of one (batch, head); tiles are numbered head by head,
// heaviest causal query block first, and block b of G computes tiles b, 2G - 1 - b, 2G + b,
// 4G - 1 - b, ... (a snake, so that causal tiles, heavy to light, even out over the blocks):
// one tile per block with a grid of ceil(S / BM) * B * H blocks, or, with a grid of one block
// per SM, a persistent loop over tiles. Per block:
//   - a producer warpgroup (setmaxnreg hands its registers to the consumers) loads each
//     consumer's 64 rows of the Q tile, and K and V tiles of BN keys into a STAGES-deep ring,
//     by TMA (128-byte swizzle), K and V of a stage completing on their own "full" mbarriers, so
//     that S = Q K^T can start before V has landed. K and V also have their own "empty"
//     mbarriers: consumers free a K tile once their S has completed, a V tile once their P V
//     has, and each consumer its Q rows once its last S of the tile has completed (so that its
//     next tile's rows load while it finishes this tile); the producer loads K of block j + 1
//     before V of block j, which is needed a product later (FlashAttention-3's order);
//   - CONSUMERS warpgroups each own 64 queries: S = Q K^T by wgmma.m64nBNk16 (both operands in
//     shared memory), the online softmax in fp32 registers (exp2 with the scale folded in, the
//     row sum kept per thread and reduced once at the end; mask arithmetic only in the causal
//     diagonal's blocks), then O += P V by wgmma.m64nDk16
//     with P from registers: an m64nN accumulator's 16-column slice is laid out as a k16 A
//     fragment, so P is S converted in place, never stored;
//   - OVERLAP == 1 (FlashAttention-3's intra-warpgroup pipelining): the S of key block g + 1 is
//     issued before the O += P V of block g, and its softmax runs while that product is still
//     in flight, across tile boundaries too (the last P V of a tile and the next tile's first
//     S go out in one turn, and O is stored while that S runs); OVERLAP == 0 runs
//     the two products and the softmax in sequence, tile by tile; OVERLAP == 2
//     adds FlashAttention-3's inter-warpgroup "ping-pong": the consumers issue their products
//     in turn (named barriers), so that one warpgroup's softmax overlaps another's products.
//
// Shared memory: Q as D/64 sub-tiles of BM rows x 128 bytes, then per stage K and V as D/64
// sub-tiles of BN rows x 128 bytes each, then the barriers. Launch with
// (BM + 2 * STAGES * BN) * D * 2 + 2048 bytes of dynamic shared memory (the slack aligns the
// tiles to 1024 bytes and holds the barriers), a one-dimensional grid of at most
// ceil(S / BM) * B * H blocks, (CONSUMERS + 1) * 128 threads. Requires D == HEAD_DIM. When BM
// does not divide S, the last query block reads the next head's first queries (or the zeros past
// the tensor) into rows it does not store; when BN does not divide S, the last key block's rows
// past S (the next head's, or zeros) are masked, so their P is 0.
//
// Kernel arguments: Q, K, V, O, B, H, S, D, CAUSAL, then TMA descriptors of Q, K and V over the
// [B * H * S][D] matrix (dims {D, B * H * S}, 128-byte swizzle; boxes {64, 64}, {64, BN},
// {64, BN}: Q loads in one box per consumer).

#include <cmath>

#include "hopper_sm90.cuh"

namespace attention_detail {

using namespace hopper;

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// Registers a thread keeps for its 2 of the warpgroup's 64 query rows: row warp * 16 + lane / 4
// (h = 0) and 8 below (h = 1).
template <int HEAD_DIM>
struct RowState {
  float o[HEAD_DIM / 2];  // m64nD accumulator: o[4j + 2h + e] is column 8j + 2 (lane % 4) + e
  float max[2];           // exponent base: the row's maximum score times scale_log2 (or less)
  float sum[2];           // this thread's part of the row's sum of exponentials
};

// 2^x by the special-function unit (flushing denormal results to 0, as softmax can afford).
__device__ __forceinline__ float Exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// Masks, exponentiates and sums one key block's scores s (an m64nBN accumulator) in place and
// returns in `correction` what the row's earlier O and sum must be multiplied by, and whether
// any is not 1. `key_minus_last` is the key index of the thread's column 0 minus the last key
// its row 0 may see: the query when causal (row 1, 8 queries below, sees 8 keys more), else
// S - 1 (a sequence's partial last key block reaches past it). MASK is a template argument so
// that the unmasked blocks (all but the causal diagonal and a partial last block) carry no
// mask arithmetic at all.
//
// The exponent base (the row maximum in log2 units) moves only when the block's maximum
// exceeds it by more than kRescaleLog2 (FlashAttention-4's conditional rescaling): once a
// row's maximum has settled, O is not rescaled, and P stays under 2^kRescaleLog2, which fp16
// and bf16 hold at full relative precision; the final division by the sum, taken against the
// same base, cancels it. Maxima and sums use four partial accumulators per row, since the
// softmax of a warp runs with few other warps to hide its latencies.
constexpr float kRescaleLog2 = 8.f;

template <int BN, bool MASK, int HEAD_DIM>
__device__ __forceinline__ bool Softmax(float (&s)[BN / 2], RowState<HEAD_DIM>& st,
                                        float scale_log2, int key_minus_last, bool causal,
                                        float (&correction)[2]) {
  float part[2][4];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
#pragma unroll
    for (int a = 0; a < 4; ++a) part[h][a] = -INFINITY;
  }
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {  // i = 2h + e
      float& v = s[4 * j + i];
      // Key column 8j + 2 (lane % 4) + e of row 8h.
      if (MASK && key_minus_last + 8 * j + i % 2 - (causal ? 8 * (i / 2) : 0) > 0) {
        v = -INFINITY;
      }
      part[i / 2][j % 2 * 2 + i % 2] = fmaxf(part[i / 2][j % 2 * 2 + i % 2], v);
    }
  }
  bool rescale = false;
  float base[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float row_max = fmaxf(fmaxf(part[h][0], part[h][1]), fmaxf(part[h][2], part[h][3]));
    // The four threads of a row are adjacent lanes.
    row_max = fmaxf(row_max, __shfl_xor_sync(0xffffffff, row_max, 1));
    row_max = fmaxf(row_max, __shfl_xor_sync(0xffffffff, row_max, 2));
    const float m = row_max * scale_log2;
    correction[h] = 1.f;
    if (m > st.max[h] + kRescaleLog2) {  // false while the row's keys are all masked
      correction[h] = Exp2(st.max[h] - m);
      st.max[h] = m;
      rescale = true;
    }
    // A row whose keys so far are all masked keeps max -inf: subtract 0 instead (its
    // exponentials are 0 either way).
    base[h] = st.max[h] == -INFINITY ? 0.f : st.max[h];
  }
  // The scale is folded into one FFMA per score: 2^(v * scale_log2 - base).
#pragma unroll
  for (int h = 0; h < 2; ++h) {
#pragma unroll
    for (int a = 0; a < 4; ++a) part[h][a] = 0.f;
  }
#pragma unroll
  for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float& v = s[4 * j + i];
      v = Exp2(fmaf(v, scale_log2, -base[i / 2]));
      part[i / 2][j % 2 * 2 + i % 2] += v;
    }
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    st.sum[h] = st.sum[h] * correction[h] + ((part[h][0] + part[h][1]) + (part[h][2] + part[h][3]));
  }
  return rescale;
}

template <int HEAD_DIM>
__device__ __forceinline__ void Rescale(RowState<HEAD_DIM>& st, const float (&correction)[2]) {
#pragma unroll
  for (int j = 0; j < HEAD_DIM / 8; ++j) {
#pragma unroll
    for (int i = 0; i < 4; ++i) st.o[4 * j + i] *= correction[i / 2];
  }
}

// P as k16 A fragments: slice k holds columns 16k ... 16k + 15 of the scores.
template <typename T, int BN>
__device__ __forceinline__ void ToOperand(const float (&s)[BN / 2], uint32_t (&p)[BN / 16][4]) {
#pragma unroll
  for (int k = 0; k < BN / 16; ++k) {
#pragma unroll
    for (int i = 0; i < 4; ++i) p[k][i] = PackPair(s[8 * k + 2 * i], s[8 * k + 2 * i + 1], T());
  }
}

// Keeps the compiler from reusing P's registers while a wgmma still reads them.
template <int N>
__device__ __forceinline__ void FenceOperand(uint32_t (&p)[N][4]) {
#pragma unroll
  for (int k = 0; k < N; ++k) {
#pragma unroll
    for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(p[k][i])::"memory");
  }
}

template <typename T, int HEAD_DIM, int BM, int BN, int STAGES, int CONSUMERS, int OVERLAP>
__device__ __forceinline__ void HopperAttention(T* O, long long heads, long long S,
                                                long long causal, const TmaDescriptor& map_q,
                                                const TmaDescriptor& map_k,
                                                const TmaDescriptor& map_v,
                                                unsigned char* smem_raw) {
  constexpr uint32_t kQBytes = BM * HEAD_DIM * 2;
  constexpr uint32_t kKvBytes = BN * HEAD_DIM * 2;  // one K or one V tile
  const uint32_t smem =
      (static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw)) + 1023) & ~uint32_t{1023};
  const uint32_t q_tile = smem;          // consumer c's 64 rows at c * 64 * 128 per sub-tile
  const uint32_t ring = smem + kQBytes;  // stage s: K at ring + 2s kKvBytes, V after it
  // Q has a "full" and an "empty" barrier per consumer (its own 64 rows, freed once its own
  // last S of a tile has completed); K and V one of each per stage.
  const uint32_t q_full = ring + STAGES * 2 * kKvBytes;
  const uint32_t k_full = q_full + 8 * CONSUMERS, v_full = k_full + 8 * STAGES;
  const uint32_t k_empty = v_full + 8 * STAGES, v_empty = k_empty + 8 * STAGES;
  const uint32_t q_empty = v_empty + 8 * STAGES;

  // Tiles (one query block of one (batch, head)) are numbered head by head, each head's
  // heaviest causal query block first; block b's n-th tile is tile_of(n) (one each when the grid
  // has a block per tile, a persistent loop over them when the grid is smaller). The blocks
  // running at once thus share one or two heads' K and V in L2: numbered heaviest block of
  // every head first, 132 blocks streamed up to 64 heads' K and V from DRAM, and S = 16k ran
  // 27% slower (H200, 2026-12-04). The snake order gives a block a heavy causal tile where it
  // had a light one before: with round robin (tiles b, b + G, ...) at S = 1024, BM = 128 and
  // G = 132, block 0 drew tiles of 8 and 4 key blocks in turn, block 7 of 1 and 5.
  const int q_blocks = static_cast<int>((S + BM - 1) / BM);
  const int tiles = q_blocks * static_cast<int>(heads);
  struct Tile {
    int q_block, blocks, head_row;  // head_row: row of (b, h, 0) in the [B H S][D] view
  };
  auto tile_of = [&](int n) {
    const int g = static_cast<int>(gridDim.x), b = static_cast<int>(blockIdx.x);
    return n * g + (n % 2 ? g - 1 - b : b);
  };
  auto tile_at = [&](int t) {
    Tile tile;
    tile.q_block = q_blocks - 1 - t % q_blocks;
    const int key_rows =
        causal ? min(static_cast<int>(S), (tile.q_block + 1) * BM) : static_cast<int>(S);
    tile.blocks = (key_rows + BN - 1) / BN;
    tile.head_row = static_cast<int>(t / q_blocks * S);
    return tile;
  };

  if (threadIdx.x == 0) {
    for (int c = 0; c < CONSUMERS; ++c) {
      BarrierInit(q_full + 8 * c, 1);
      BarrierInit(q_empty + 8 * c, 1);
    }
    for (int s = 0; s < STAGES; ++s) {
      BarrierInit(k_full + 8 * s, 1);
      BarrierInit(v_full + 8 * s, 1);
      BarrierInit(k_empty + 8 * s, CONSUMERS);
      BarrierInit(v_empty + 8 * s, CONSUMERS);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  // Registers per thread: 64K over (CONSUMERS + 1) warpgroups, the producer keeping 24.
  constexpr int kConsumerRegs = CONSUMERS == 1 ? 0 : CONSUMERS == 2 ? 240 : 160;
  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {
    if constexpr (kConsumerRegs > 0) ReleaseRegisters<24>();
    if (threadIdx.x == 0) {
      // Tile n's Q, each consumer's 64 rows once that consumer has freed its rows of tile n - 1.
      auto load_q = [&](int n, const Tile& tile) {
        for (int c = 0; c < CONSUMERS; ++c) {
          if (n > 0) BarrierWait(q_empty + 8 * c, (n - 1) & 1);
          BarrierExpectBytes(q_full + 8 * c, kQBytes / CONSUMERS);
#pragma unroll
          for (int d = 0; d < HEAD_DIM / 64; ++d) {
            TmaLoad(q_tile + d * BM * 128 + c * 64 * 128, map_q, d * 64,
                    tile.head_row + tile.q_block * BM + c * 64, q_full + 8 * c);
          }
        }
      };
      // The g-th key block of this CTA (counted over its tiles: the ring position), whose first
      // key is row `row`: K (v == 0) or V (v == 1) into its stage's half, once freed.
      auto load = [&](int g, int row, int v) {
        const int s = g % STAGES;
        BarrierWait((v ? v_empty : k_empty) + 8 * s, ((g / STAGES) & 1) ^ 1);
        const uint32_t dst = ring + (2 * s + v) * kKvBytes, full = (v ? v_full : k_full) + 8 * s;
        BarrierExpectBytes(full, kKvBytes);
#pragma unroll
        for (int d = 0; d < HEAD_DIM / 64; ++d) {
          TmaLoad(dst + d * BN * 128, v ? map_v : map_k, d * 64, row, full);
        }
      };
      // Tile by tile. (One stream over the tiles, the next tile's first K loaded before this
      // tile's last V and the next Q, ran 1-7% slower at most shapes: NOTES.md version 5.)
      int g = 0;
      for (int n = 0, t = tile_of(0); t < tiles; t = tile_of(++n)) {
        const Tile tile = tile_at(t);
        load_q(n, tile);
        load(g, tile.head_row, 0);
        for (int j = 0; j < tile.blocks; ++j) {
          if (j + 1 < tile.blocks) load(g + j + 1, tile.head_row + (j + 1) * BN, 0);
          load(g + j, tile.head_row + j * BN, 1);
        }
        g += tile.blocks;
      }
    }
    return;
  }
  if constexpr (kConsumerRegs > 0) ClaimRegisters<kConsumerRegs>();

  const int consumer = warpgroup - 1;
  const bool leader = threadIdx.x % 128 == 0;
  const int lane = threadIdx.x % 32, warp = threadIdx.x % 128 / 32;
  const float scale_log2 = 1.4426950408889634f / sqrtf(static_cast<float>(HEAD_DIM));

  RowState<HEAD_DIM> st;

  // S = Q K_g^T for the CTA's g-th key block, issued and committed (not waited for).
  auto issue_scores = [&](float(&s)[BN / 2], int g) {
    const int stage = g % STAGES;
    BarrierWait(k_full + 8 * stage, (g / STAGES) & 1);
    const uint32_t k_tile = ring + 2 * stage * kKvBytes;
    FenceRegisters(s);
    WgmmaFence();
#pragma unroll
    for (int k = 0; k < HEAD_DIM / 16; ++k) {
      // K-major operands advance 32 bytes per k16 step inside a 128-byte swizzled row.
      const uint32_t q = q_tile + k / 4 * BM * 128 + consumer * 64 * 128 + k % 4 * 32;
      const uint32_t kk = k_tile + k / 4 * BN * 128 + k % 4 * 32;
      Wgmma<T, 0>(s, SmemDescriptor(q, 16, 1024), SmemDescriptor(kk, 16, 1024), k > 0);
    }
    WgmmaCommit();
    FenceRegisters(s);
  };
  // O += P V_g, issued and committed. V is MN-major: 64-column blocks BN * 128 bytes apart.
  // g == -1: the first tile's discarded product (below), on a V tile it does not wait for.
  auto issue_values = [&](uint32_t(&p)[BN / 16][4], int g) {
    const int stage = (g + STAGES) % STAGES;
    if (g >= 0) BarrierWait(v_full + 8 * stage, (g / STAGES) & 1);
    const uint32_t v_tile = ring + (2 * stage + 1) * kKvBytes;
    FenceRegisters(st.o);
    WgmmaFence();
#pragma unroll
    for (int k = 0; k < BN / 16; ++k) {
      Wgmma<T, 1>(st.o, p[k], SmemDescriptor(v_tile + k * 16 * 128, BN * 128, 1024), 1);
    }
    WgmmaCommit();
    FenceRegisters(st.o);
  };
  // Frees key block g's K (v == 0) or V (v == 1) tile for the producer.
  auto release = [&](int g, int v) {
    if (leader) BarrierArrive((v ? v_empty : k_empty) + 8 * (g % STAGES));
  };
  auto wait_q = [&](int n) { BarrierWait(q_full + 8 * consumer, n & 1); };
  // Every S of the tile has completed: the producer may load this consumer's next Q rows, while
  // this consumer finishes the tile. (Freed after the tile's last P V instead, the next tile's
  // first S waited for them: 2-7% at S = 1k-4k, NOTES.md version 6.)
  auto q_done = [&] {
    if (leader) BarrierArrive(q_empty + 8 * consumer);
  };

  // OVERLAP == 2: the consumers take turns issuing their products (consumer c waits on named
  // barrier 1 + c, then lets consumer c + 1 go), so that one's softmax runs while another's
  // products keep the tensor cores busy. Every consumer takes the same number of turns. The
  // last consumer opens the first turn and skips the final hand-over, which nobody would wait
  // for.
  auto take_turn = [&] {
    if constexpr (OVERLAP == 2) NamedBarrierSync(1 + consumer, 256);
  };
  auto pass_turn = [&](bool last) {
    if constexpr (OVERLAP == 2) {
      if (!(last && consumer == CONSUMERS - 1)) {
        NamedBarrierArrive(1 + (consumer + 1) % CONSUMERS, 256);
      }
    }
  };
  if (OVERLAP == 2 && consumer == CONSUMERS - 1) NamedBarrierArrive(1, 256);

  float s[BN / 2];
  uint32_t p[BN / 16][4];
  float correction[2];
  auto reset = [&] {
#pragma unroll
    for (int i = 0; i < HEAD_DIM / 2; ++i) st.o[i] = 0.f;
    st.max[0] = st.max[1] = -INFINITY;
    st.sum[0] = st.sum[1] = 0.f;
  };
  // Block j of `tile`'s softmax. Only blocks reaching past the last key that the warpgroup's
  // row 0 may see can hold masked keys (rows past S, never stored, see keys past S when
  // causal). Returns whether O must be rescaled: skipped when no row of the warp moved its base.
  auto softmax = [&](const Tile& tile, int j) {
    const int first_query = tile.q_block * BM + consumer * 64;  // this warpgroup's row 0
    const int query = first_query + warp * 16 + lane / 4;       // this thread's row 0
    const int last_key = causal ? query : static_cast<int>(S) - 1;
    const int mask_from = causal ? first_query : static_cast<int>(S) - 1;
    const int key_minus_last = j * BN + 2 * (lane % 4) - last_key;
    const bool rescale =
        (j + 1) * BN - 1 > mask_from
            ? Softmax<BN, true>(s, st, scale_log2, key_minus_last, causal, correction)
            : Softmax<BN, false>(s, st, scale_log2, key_minus_last, causal, correction);
    return __any_sync(0xffffffff, rescale);
  };
  // Epilogue: the row sums over the row's four threads, then O / sum from registers. Rows past
  // S (the last query block of a sequence that BM does not divide) are not stored.
  auto store = [&](const Tile& tile, const float(&row_sum)[2]) {
    const int query = tile.q_block * BM + consumer * 64 + warp * 16 + lane / 4;
    const long long row = tile.head_row + query;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      if (query + 8 * h >= S) continue;
      float sum = row_sum[h];
      sum += __shfl_xor_sync(0xffffffff, sum, 1);
      sum += __shfl_xor_sync(0xffffffff, sum, 2);
      const float inv = 1.f / sum;
#pragma unroll
      for (int j = 0; j < HEAD_DIM / 8; ++j) {
        StorePair(O, HEAD_DIM, row + 8 * h, 8 * j + lane % 4 * 2, st.o[4 * j + 2 * h] * inv,
                  st.o[4 * j + 2 * h + 1] * inv);
      }
    }
  };

  if constexpr (OVERLAP == 0) {
    int g = 0;  // key blocks consumed so far, over all of this block's tiles
    for (int n = 0, t = tile_of(0); t < tiles; t = tile_of(++n)) {
      const Tile tile = tile_at(t);
      reset();
      wait_q(n);
      for (int j = 0; j < tile.blocks; ++j, ++g) {
        issue_scores(s, g);
        WgmmaWait<0>();
        FenceRegisters(s);
        release(g, 0);
        if (j == tile.blocks - 1) q_done();
        if (softmax(tile, j)) Rescale(st, correction);
        ToOperand<T, BN>(s, p);
        issue_values(p, g);
        WgmmaWait<0>();
        FenceRegisters(st.o);
        FenceOperand(p);
        release(g, 1);
      }
      store(tile, st.sum);
    }
  } else {
    // Every turn issues two products, across a tile boundary too: within a tile S of key block
    // g and P V of block g - 1; at a tile's start the last tile's last P V and this tile's first
    // S, the last tile's O stored while that S runs. So a boundary costs no half-empty turns
    // (a last P V alone, then a first S alone with its softmax under nothing of its own). The
    // WGMMAs are issued at unconditional points: one issued under a condition makes ptxas wait
    // after every WGMMA of the kernel (C7518, 30-40% slower; NOTES.md version 3). (One loop over
    // all of a block's key blocks, the boundary's work under a condition inside it, ran 5-10%
    // slower at every shape, one tile per block included: NOTES.md version 5.)
    int g = 0;  // key block over the tiles whose S is issued next
    int n = 0;  // tiles begun
#pragma unroll
    for (int k = 0; k < BN / 16; ++k) {
#pragma unroll
      for (int i = 0; i < 4; ++i) p[k][i] = 0;
    }
    for (int t = tile_of(0); t < tiles; t = tile_of(++n)) {
      // A tile's first turn. The first tile has no P V before it: its first turn multiplies
      // P = 0 by stage STAGES - 1's V, whatever it holds, into an O that is reset right after,
      // so that one copy of this code, and of the WGMMAs' issue points, serves every tile. (A
      // first turn of its own, with a second copy of the loop below, spilled more at BN = 192;
      // so did S first and the store after the softmax, as within a tile.)
      const Tile tile = tile_at(t);
      wait_q(n);
      take_turn();
      issue_values(p, g - 1);
      issue_scores(s, g);
      pass_turn(false);
      WgmmaWait<1>();  // P V has completed; the scores may still run
      FenceRegisters(st.o);
      FenceOperand(p);
      if (n > 0) {
        release(g - 1, 1);
        store(tile_at(tile_of(n - 1)), st.sum);
      }
      reset();
      WgmmaWait<0>();
      FenceRegisters(s);
      release(g++, 0);
      if (tile.blocks == 1) q_done();
      softmax(tile, 0);
      ToOperand<T, BN>(s, p);  // O is 0: nothing to rescale
      for (int j = 1; j < tile.blocks; ++j, ++g) {
        take_turn();
        issue_scores(s, g);
        issue_values(p, g - 1);
        pass_turn(false);
        WgmmaWait<1>();  // the scores have landed; P V_{g-1} may still run
        FenceRegisters(s);
        release(g, 0);
        if (j == tile.blocks - 1) q_done();
        const bool rescale = softmax(tile, j);
        WgmmaWait<0>();
        FenceRegisters(st.o);
        FenceOperand(p);
        release(g - 1, 1);
        if (rescale) Rescale(st, correction);
        ToOperand<T, BN>(s, p);
      }
    }
    take_turn();
    issue_values(p, g - 1);
    pass_turn(true);
    WgmmaWait<0>();
    FenceRegisters(st.o);
    FenceOperand(p);
    release(g - 1, 1);
    store(tile_at(tile_of(n - 1)), st.sum);
  }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace attention_detail

// The tuned kernel (sm_90a only; on other targets it compiles to an empty body and the spec
// offers no configuration there).
template <typename T, int HEAD_DIM, int BM, int BN, int STAGES, int CONSUMERS, int OVERLAP>
__global__ void __launch_bounds__((CONSUMERS + 1) * 128, 1)
    attention(const T* Q, const T* K, const T* V, T* O, long long B, long long H, long long S,
              long long D, long long CAUSAL, const __grid_constant__ TmaDescriptor map_q,
              const __grid_constant__ TmaDescriptor map_k,
              const __grid_constant__ TmaDescriptor map_v) {
  static_assert(HEAD_DIM == 64 || HEAD_DIM == 128, "wgmma n64 or n128 for O += P V");
  static_assert(BN == 64 || BN == 128 || BN == 176 || BN == 192,
                "wgmma n64, n128, n176 or n192 for S = Q K^T");
  static_assert(BM == 64 * CONSUMERS && CONSUMERS >= 1 && CONSUMERS <= 3,
                "each of 1-3 consumer warpgroups owns 64 queries");
  static_assert(STAGES >= 2, "a ring of 2+ stages");
  static_assert(OVERLAP >= 0 && OVERLAP <= 2 && (OVERLAP < 2 || CONSUMERS >= 2),
                "OVERLAP 2 alternates between 2+ consumers");
  extern __shared__ __align__(1024) unsigned char smem[];
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  attention_detail::HopperAttention<T, HEAD_DIM, BM, BN, STAGES, CONSUMERS, OVERLAP>(
      O, B * H, S, CAUSAL, map_q, map_k, map_v, smem);
#endif
}

// Reference: fp32 attention with CUDA cores, one thread per query (32 queries of one
// (batch, head) per block, grid (ceil(S / 32), B * H)), a two-pass softmax (the row maximum,
// then the exponentials and O) over K and V staged through shared memory 16 keys at a time.
template <typename T, int HEAD_DIM>
__global__ void attention_reference(const T* Q, const T* K, const T* V, T* O, long long B,
                                    long long H, long long S, long long D, long long CAUSAL) {
  constexpr int kQueries = 32, kKeys = 16;
  __shared__ float q[kQueries][HEAD_DIM + 1];
  __shared__ float k_tile[kKeys][HEAD_DIM], v_tile[kKeys][HEAD_DIM];
  const long long base = static_cast<long long>(blockIdx.y) * S * HEAD_DIM;
  const long long query = static_cast<long long>(blockIdx.x) * kQueries + threadIdx.x;
  for (int i = threadIdx.x; i < kQueries * HEAD_DIM; i += kQueries) {
    const long long r = static_cast<long long>(blockIdx.x) * kQueries + i / HEAD_DIM;
    q[i / HEAD_DIM][i % HEAD_DIM] =
        r < S ? static_cast<float>(Q[base + r * HEAD_DIM + i % HEAD_DIM]) : 0.f;
  }
  const float scale = 1.f / sqrtf(static_cast<float>(HEAD_DIM));
  const long long last_key = CAUSAL ? min(S, (blockIdx.x + 1LL) * kQueries) : S;
  float row_max = -INFINITY, sum = 0.f, o[HEAD_DIM];
#pragma unroll
  for (int d = 0; d < HEAD_DIM; ++d) o[d] = 0.f;
  for (int pass = 0; pass < 2; ++pass) {
    for (long long k0 = 0; k0 < last_key; k0 += kKeys) {
      __syncthreads();
      for (int i = threadIdx.x; i < kKeys * HEAD_DIM; i += kQueries) {
        const long long r = k0 + i / HEAD_DIM;
        k_tile[i / HEAD_DIM][i % HEAD_DIM] =
            r < S ? static_cast<float>(K[base + r * HEAD_DIM + i % HEAD_DIM]) : 0.f;
        v_tile[i / HEAD_DIM][i % HEAD_DIM] =
            r < S ? static_cast<float>(V[base + r * HEAD_DIM + i % HEAD_DIM]) : 0.f;
      }
      __syncthreads();
      for (int j = 0; j < kKeys; ++j) {
        const long long key = k0 + j;
        if (key >= S || (CAUSAL && key > query)) continue;
        float dot = 0.f;
        for (int d = 0; d < HEAD_DIM; ++d) dot += q[threadIdx.x][d] * k_tile[j][d];
        dot *= scale;
        if (pass == 0) {
          row_max = fmaxf(row_max, dot);
        } else {
          const float p = expf(dot - row_max);
          sum += p;
#pragma unroll
          for (int d = 0; d < HEAD_DIM; ++d) o[d] += p * v_tile[j][d];
        }
      }
    }
  }
  if (query < S) {
#pragma unroll
    for (int d = 0; d < HEAD_DIM; ++d) O[base + query * HEAD_DIM + d] = T(o[d] / sum);
  }
}
