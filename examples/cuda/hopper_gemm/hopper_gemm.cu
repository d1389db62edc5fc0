// Production GEMM template for Hopper (sm_90a) with an Ampere (sm_80) fallback:
//   C[m][n] = sum_k A[m][k] * B(k, n),  fp16 or bf16 in, fp32 accumulate, C in the input type.
// A is M x K row-major. B is N x K row-major when B_ROW_MAJOR == 0 (column-major K x N, the
// "TN" layout) and K x N row-major when B_ROW_MAJOR == 1. C is M x N row-major.
//
// Hopper path (compiled when __CUDA_ARCH_FEAT_SM90_ALL is defined, i.e. for sm_90a):
//   - a persistent grid: block b computes tiles b, b + gridDim.x, ... in grouped order
//     (GROUP_M tile rows swept column by column, so concurrent tiles share A and B in L2);
//   - a STAGES-deep ring of shared-memory stages filled by TMA bulk tensor loads (128-byte
//     swizzle) that complete on a "full" mbarrier per stage; consumers release a stage on its
//     "empty" mbarrier once the WGMMAs reading it have retired;
//   - CONSUMERS warpgroups, each computing a (BM / CONSUMERS) x BN slice with
//     wgmma.m64nBNk16 (A and B from shared memory, fp32 accumulators in registers);
//   - WS == 1: one extra producer warpgroup issues the loads and gives registers to the
//     consumers through setmaxnreg; WS == 0: a consumer thread issues them STAGES - 1 ahead;
//   - CLUSTER_M == 2: clusters of two blocks on vertically adjacent tiles, each loading half of
//     their common B tile and multicasting it to both;
//   - the epilogue stores C from registers (TMA_STORE == 0) or through double-buffered shared
//     boxes and TMA bulk tensor stores (TMA_STORE == 1): boxes of 64 columns where BN is a
//     multiple of 64, else of 32 columns by 64 rows (less shared memory; BN == 152 only);
//   - BN == 152 (Hopper and B_ROW_MAJOR == 0 only; wgmma m64n152k16, up to 152 accumulators a
//     consumer thread): 256 x 152 tiles cover 3000 x 5000 in 396 tiles, three whole waves of
//     132 SMs, where 128 x 256 needs 480 (3.6 waves); cuBLAS's kernel there has this tile;
//   - SPLIT_K > 1: clusters of SPLIT_K blocks compute the same output tile over consecutive
//     ranges of k tiles; each writes its fp32 partial tile to its own shared memory, and each
//     sums 1 / SPLIT_K of the tile's columns over the cluster (distributed shared memory, in
//     rank order, so results do not depend on timing) and stores them from registers;
//   - STREAM_K == 1 (with WS == 1, SPLIT_K == 1), where the tiles are more than one wave and the
//     last wave is partial: the whole waves' tiles are computed whole, as above; the k
//     iterations of the partial wave's tiles are split evenly over the grid's clusters, so each
//     cluster computes a contiguous run of them that may begin and end inside a tile. A block
//     whose run begins inside a tile (its first piece only) writes its fp32 partial tile to the
//     workspace W and raises its flag there; the block that computed the tile's first k
//     iterations waits for those flags in block order, adds the partials in that order
//     (deterministic), resets the flags and stores the tile;
//   - edge tiles: the TMA fills out-of-bounds loads with zeros and clips its stores; register
//     stores are masked, so M is arbitrary and N, K only need the TMA's 16-byte row pitch.
// Ampere path (any other arch >= 8.0): the same tiles, stages and grid on cp.async + ldmatrix +
//   mma.sync.m16n8k16, every warp copying and the consumer warps computing; it ignores the
//   tensor maps, CLUSTER_M, TMA_STORE and SPLIT_K (the specs pin them to 1, 0 and 1 there);
//   edge tiles through zero-filling cp.async and masked stores. It traps for BN == 152.
//
// Shared memory (both paths), per stage: A as BK/64 sub-tiles of BM rows x 128 bytes, then B as
// BK/64 sub-tiles of BN rows x 128 bytes (B_ROW_MAJOR == 0) or BN/64 sub-tiles of BK rows x 128
// bytes (B_ROW_MAJOR == 1). Each 128-byte row holds its eight 16-byte chunks XOR-permuted by
// (row % 8): the TMA/WGMMA 128-byte swizzle. Then TMA_STORE * C_BOX_BYTES bytes of C boxes, then
// (SPLIT_K > 1) * BM * BN * 4 bytes of fp32 partial tile, where C_BOX_BYTES is BM * 256 when
// BN % 64 == 0 and CONSUMERS * 8192 otherwise. Launch with STAGES * (BM + BN) * BK * 2 +
// TMA_STORE * C_BOX_BYTES + (SPLIT_K > 1) * BM * BN * 4 + 2048 bytes of dynamic shared memory (the
// slack aligns the ring to 1024 bytes and holds the barriers). Requires N % 8 == 0 and
// K % 8 == 0 (the TMA's 16-byte row pitch; the Ampere path's 16-byte copies) and
// K >= SPLIT_K * BK; SPLIT_K > 1 needs CLUSTER_M == 1 and TMA_STORE == 0, and the Ampere path
// SPLIT_K == 1 and STREAM_K == 0.
//
// Workspace W (fp32, used only by STREAM_K == 1, whose grid must not exceed the tile count):
// gridDim.x * CONSUMERS flags (32-bit, zero at launch; the kernel leaves them zero), then, from
// the next multiple of 4 floats, BM * BN floats per block. With grid <= tiles that is at most
// (M + 2 * BM) * (N + BN) + 2 * grid + 4 floats.
//
// Kernel arguments: A, B, C, W, M, N, K, then TMA descriptors (128-byte swizzle) of A (dims {K, M},
// box {64, BM}), B (B_ROW_MAJOR == 0: dims {K, N}, box {64, BN / CLUSTER_M}; 1: dims {N, K},
// box {64, BK / CLUSTER_M}) and C (dims {N, M}, box {64, BM / CONSUMERS}), and one of C with
// 64-byte swizzle (dims {N, M}, box {32, 64}) for the tiles whose BN is no multiple of 64.
//
// The mbarrier, TMA and WGMMA wrappers live in ../hopper/hopper_sm90.cuh (linked here).

#include "hopper_sm90.cuh"

namespace hopper_gemm_detail {

using namespace hopper;

struct TileCoord {
  int m, n;
};

// A step's place in the STAGES-deep ring: its stage and the parity of the ring's pass, advanced
// step by step with a compare instead of a division and a modulo per step.
template <int STAGES>
struct RingPosition {
  int stage = 0;
  uint32_t phase = 0;
  __device__ __forceinline__ void Advance() {
    if (++stage == STAGES) {
      stage = 0;
      phase ^= 1;
    }
  }
};

// Grouped raster order: GROUP_M tile rows are swept column by column.
template <int GROUP_M>
__device__ __forceinline__ TileCoord TileOf(int tile, int tiles_m, int tiles_n) {
  const int per_group = GROUP_M * tiles_n;
  const int first_m = tile / per_group * GROUP_M;
  const int rows = min(tiles_m - first_m, GROUP_M);
  const int in_group = tile % per_group;
  return {first_m + in_group % rows, in_group / rows};
}

// ---------------------------------------------------------------------------------------------
// Hopper: TMA loads on mbarriers, WGMMA.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

template <typename T, int B_ROW_MAJOR, int BM, int BN, int BK, int STAGES, int CONSUMERS, int WS,
          int GROUP_M, int CLUSTER_M, int TMA_STORE, int SPLIT_K, int STREAM_K>
__device__ __forceinline__ void HopperGemm(T* C, float* W, long long M, long long N, long long K,
                                           const TmaDescriptor& map_a, const TmaDescriptor& map_b,
                                           const TmaDescriptor& map_c, const TmaDescriptor& map_c32,
                                           unsigned char* smem_raw) {
  constexpr int kConsumerRows = BM / CONSUMERS;
  constexpr int kMTiles = kConsumerRows / 64;  // m64 WGMMAs per k16 step
  constexpr uint32_t kABytes = BM * BK * 2;
  constexpr uint32_t kStageBytes = (BM + BN) * BK * 2;
  const uint32_t smem =
      (static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw)) + 1023) & ~uint32_t{1023};
  // TMA_STORE: two C boxes per consumer. Tiles of whole 64-column sub-tiles: kConsumerRows x 64
  // outputs, 128-byte swizzled (map_c). Others (BN = 152): 64 x 32 outputs, 64-byte swizzled
  // (map_c32), 8 KiB a consumer, which leaves 256 x 152 room for 4 stages (bench NOTES.md v8:
  // the narrow boxes cost the other tiles 1-3%, so they keep the wide ones).
  constexpr bool kWideBoxes = BN % 64 == 0;
  constexpr int kBoxCols = kWideBoxes ? 64 : 32, kBoxRows = kWideBoxes ? kConsumerRows : 64;
  constexpr uint32_t kCBoxBytes = kBoxRows * kBoxCols * 2;
  const uint32_t c_boxes = smem + STAGES * kStageBytes;
  // SPLIT_K > 1: this block's fp32 partial tile, per consumer kMTiles * BN / 8 float4 slots of
  // 128 threads each (the accumulators' own order, so every rank's layout is the same).
  const uint32_t partials = c_boxes + TMA_STORE * CONSUMERS * 2 * kCBoxBytes;
  const uint32_t full = partials + (SPLIT_K > 1 ? BM * BN * 4 : 0);  // one mbarrier per stage
  const uint32_t empty = full + STAGES * 8;
  // Per consumer: all ranks' partials written (ready), all ranks done reading them (read).
  const uint32_t partials_ready = empty + STAGES * 8;
  const uint32_t partials_read = partials_ready + CONSUMERS * 8;

  // The CLUSTER_M blocks of a cluster compute vertically adjacent tiles ("cluster tiles" of
  // CLUSTER_M * BM x BN): each loads its own A and 1 / CLUSTER_M of the shared B tile, which
  // the TMA multicasts to all of them. The SPLIT_K blocks of a cluster compute the same tile,
  // each over its own range of k tiles. One of CLUSTER_M and SPLIT_K is 1.
  constexpr int kCluster = CLUSTER_M * SPLIT_K;
  const int rank = static_cast<int>(blockIdx.x) % kCluster;
  const int m_rank = rank % CLUSTER_M, k_rank = rank / CLUSTER_M;
  const int cluster = static_cast<int>(blockIdx.x) / kCluster;
  const int clusters = static_cast<int>(gridDim.x) / kCluster;
  const int tiles_m = static_cast<int>((M + BM - 1) / BM);
  const int tiles_n = static_cast<int>((N + BN - 1) / BN);
  const int cluster_rows = (tiles_m + CLUSTER_M - 1) / CLUSTER_M;
  const int cluster_tiles = cluster_rows * tiles_n;
  const int all_k_tiles = static_cast<int>((K + BK - 1) / BK);
  const int k_begin = k_rank * all_k_tiles / SPLIT_K;
  const int k_tiles = (k_rank + 1) * all_k_tiles / SPLIT_K - k_begin;  // >= 1: K >= SPLIT_K * BK
  // This cluster's work is a list of units, each k tiles [k_lo, k_hi) of one cluster tile: first
  // whole tiles cluster, cluster + clusters, ... below dp_tiles; then (STREAM_K) its share
  // [sk_start(cluster), sk_start(cluster + 1)) of the k iterations of the partial wave's tiles
  // (from dp_tiles on), numbered tile * all_k_tiles + k, cut at tile boundaries.
  const int sk_tiles = STREAM_K ? cluster_tiles % clusters : 0;
  const int dp_tiles = cluster_tiles - sk_tiles;
  const int my_tiles = max(0, (dp_tiles - cluster + clusters - 1) / clusters);
  const long long sk_iters = static_cast<long long>(sk_tiles) * all_k_tiles;
  auto sk_start = [&](int c) {
    return static_cast<long long>(dp_tiles) * all_k_tiles + c * sk_iters / clusters;
  };
  const long long sk_begin = sk_start(cluster), sk_end = sk_start(cluster + 1);
  const int units =
      my_tiles + (sk_end > sk_begin
                      ? static_cast<int>((sk_end - 1) / all_k_tiles - sk_begin / all_k_tiles) + 1
                      : 0);
  struct Unit {
    int tile, k_lo, k_hi;
  };
  auto unit_of = [&](int u) -> Unit {
    if (u < my_tiles) return {cluster + u * clusters, k_begin, k_begin + k_tiles};
    const int first_tile = static_cast<int>(sk_begin / all_k_tiles),
              tile = first_tile + u - my_tiles;
    const long long begin = max(sk_begin, static_cast<long long>(tile) * all_k_tiles);
    const long long end = min(sk_end, static_cast<long long>(tile + 1) * all_k_tiles);
    return {tile, static_cast<int>(begin - static_cast<long long>(tile) * all_k_tiles),
            static_cast<int>(end - static_cast<long long>(tile) * all_k_tiles)};
  };
  auto tile_of = [&](int cluster_tile) {  // this block's output tile of a cluster tile
    const TileCoord t = TileOf<GROUP_M>(cluster_tile, cluster_rows, tiles_n);
    return TileCoord{t.m * CLUSTER_M + m_rank, t.n};
  };
  // STREAM_K: flag and partial tile of (block, consumer) in the workspace.
  unsigned* const flags = reinterpret_cast<unsigned*>(W);
  auto flag_of = [&](int block, int consumer) { return flags + block * CONSUMERS + consumer; };
  auto partial_of = [&](int block, int consumer) {
    return reinterpret_cast<float4*>(W + ((gridDim.x * CONSUMERS + 3) & ~3u)) +
           (block * CONSUMERS + consumer) * (kConsumerRows * BN / 4);
  };

  if (threadIdx.x == 0) {
    // The descriptors' first use would otherwise fetch them on the critical path of the first
    // load and store.
    PrefetchTensorMap(map_a);
    PrefetchTensorMap(map_b);
    if constexpr (TMA_STORE) PrefetchTensorMap(kWideBoxes ? map_c : map_c32);
    for (int s = 0; s < STAGES; ++s) {
      BarrierInit(full + 8 * s, 1);
      BarrierInit(empty + 8 * s, CONSUMERS * CLUSTER_M);
    }
    if constexpr (SPLIT_K > 1) {
      for (int c = 0; c < CONSUMERS; ++c) {
        BarrierInit(partials_ready + 8 * c, SPLIT_K);
        BarrierInit(partials_read + 8 * c, SPLIT_K);
      }
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  if constexpr (kCluster > 1) {
    // Peers' barriers are initialized before any multicast or remote arrive.
    ClusterArriveRelaxed();
    ClusterWait();
  } else {
    __syncthreads();
  }

  // Waits until ring position `at` is free in every block of the cluster, then loads k tile kt of
  // this block's output tile `tile` into it.
  auto load = [&](RingPosition<STAGES> at, TileCoord tile, int kt) {
    const int stage = at.stage;
    BarrierWait(empty + 8 * stage, at.phase ^ 1);
    const int k0 = kt * BK;
    const uint32_t a = smem + stage * kStageBytes, b = a + kABytes, bar = full + 8 * stage;
    BarrierExpectBytes(bar, kStageBytes);
#pragma unroll
    for (int kc = 0; kc < BK / 64; ++kc) {
      TmaLoad(a + kc * BM * 128, map_a, k0 + kc * 64, tile.m * BM, bar);
    }
    // This block's share of B: rows rank * BN / CLUSTER_M ... of each K-major sub-tile, or
    // k rows rank * BK / CLUSTER_M ... of each MN-major sub-tile (the tensor map's box).
    constexpr uint16_t kAll = (1 << CLUSTER_M) - 1;
    if constexpr (B_ROW_MAJOR) {
      constexpr int kRows = BK / CLUSTER_M;
#pragma unroll
      for (int nc = 0; nc < BN / 64; ++nc) {
        const uint32_t dst = b + nc * BK * 128 + m_rank * kRows * 128;
        const int x = tile.n * BN + nc * 64, y = k0 + m_rank * kRows;
        if constexpr (CLUSTER_M > 1) {
          TmaLoadMulticast(dst, map_b, x, y, bar, kAll);
        } else {
          TmaLoad(dst, map_b, x, y, bar);
        }
      }
    } else {
      constexpr int kRows = BN / CLUSTER_M;
#pragma unroll
      for (int kc = 0; kc < BK / 64; ++kc) {
        const uint32_t dst = b + kc * BN * 128 + m_rank * kRows * 128;
        const int x = k0 + kc * 64, y = tile.n * BN + m_rank * kRows;
        if constexpr (CLUSTER_M > 1) {
          TmaLoadMulticast(dst, map_b, x, y, bar, kAll);
        } else {
          TmaLoad(dst, map_b, x, y, bar);
        }
      }
    }
  };
  // CLUSTER_M > 1: the peers' consumers arrive on this block's empty barriers until their last k
  // tile, so the thread that issues the loads waits, after its last, until every stage has been
  // released before the block may exit (CUTLASS's producer tail; a cluster barrier at the exit
  // cost 1,600 cycles at 1024^3, bench NOTES.md v13 and v14). `at`: the position after the last
  // load.
  auto wait_for_releases = [&](RingPosition<STAGES> at) {
    if constexpr (CLUSTER_M > 1) {
      for (int s = 0; s < STAGES; ++s, at.Advance())
        BarrierWait(empty + 8 * at.stage, at.phase ^ 1);
    }
  };
  // WS == 0 (every unit a whole tile, STREAM_K == 0): step p is k tile p % k_tiles of unit
  // p / k_tiles.
  auto load_step = [&](int p) {
    const Unit w = unit_of(p / k_tiles);
    load({p % STAGES, static_cast<uint32_t>(p / STAGES) & 1}, tile_of(w.tile),
         w.k_lo + p % k_tiles);
  };
  // Frees a stage for the producers of every block of the cluster: the consumer's thread r
  // arrives in block r, so a warp does it in one instruction (CUTLASS's way).
  auto release = [&](int stage) {
    const int r = threadIdx.x % 128;
    if constexpr (CLUSTER_M > 1) {
      if (r < CLUSTER_M) BarrierArriveCluster(empty + 8 * stage, r);
    } else {
      if (r == 0) BarrierArrive(empty + 8 * stage);
    }
  };

  // Read from lane 0, the compiler knows the warpgroup is the same in every lane, so the
  // consumers' descriptors and barrier addresses are made in uniform registers, as HGMMA takes
  // them (CUTLASS's canonical_warp_group_idx).
  const int warpgroup = __shfl_sync(0xFFFFFFFF, static_cast<int>(threadIdx.x / 128), 0);
  if (WS && warpgroup == 0) {
    // Producer: one thread issues every load; the warpgroup hands its registers over.
    if constexpr (WS && CONSUMERS == 2) ReleaseRegisters<40>();
    if (threadIdx.x == 0) {
      RingPosition<STAGES> at;
      for (int u = 0; u < units; ++u) {
        const Unit w = unit_of(u);
        const TileCoord tile = tile_of(w.tile);
        for (int kt = w.k_lo; kt < w.k_hi; ++kt, at.Advance()) load(at, tile, kt);
      }
      wait_for_releases(at);
    }
  } else {
    if constexpr (WS && CONSUMERS == 2) ClaimRegisters<232>();
    const int consumer = warpgroup - WS;
    const bool leader = threadIdx.x % 128 == 0;
    const bool issues_loads = !WS && threadIdx.x == 0;
    const int steps = units * k_tiles;  // WS == 0 only: then units are whole tiles
    if (issues_loads) {
      for (int p = 0; p < min(STAGES - 1, steps); ++p) load_step(p);
    }
    float acc[kMTiles][BN / 2];
    // Stage 0's operand descriptors; a WGMMA's is these advanced by its stage and its place in
    // the stage (K-major operands advance 32 bytes per k16 step inside a 128-byte swizzled row).
    const uint64_t desc_a0 = SmemDescriptor(smem + consumer * kConsumerRows * 128, 16, 1024);
    const uint64_t desc_b0 = B_ROW_MAJOR ? SmemDescriptor(smem + kABytes, BK * 128, 1024)
                                         : SmemDescriptor(smem + kABytes, 16, 1024);
    RingPosition<STAGES> at;
    int step = 0, boxes = 0, last_stage = 0;
    for (int i = 0; i < units; ++i) {
      const Unit w = unit_of(i);
      for (int kt = w.k_lo; kt < w.k_hi; ++kt, ++step, at.Advance()) {
        BarrierWait(full + 8 * at.stage, at.phase);
        const uint64_t desc_a = AdvanceDescriptor(desc_a0, at.stage * kStageBytes);
        const uint64_t desc_b = AdvanceDescriptor(desc_b0, at.stage * kStageBytes);
#pragma unroll
        for (int mi = 0; mi < kMTiles; ++mi) FenceRegisters(acc[mi]);
        WgmmaFence();
#pragma unroll
        for (int k = 0; k < BK / 16; ++k) {
          const uint64_t desc_b_k =
              AdvanceDescriptor(desc_b, B_ROW_MAJOR ? k * 16 * 128 : k / 4 * BN * 128 + k % 4 * 32);
#pragma unroll
          for (int mi = 0; mi < kMTiles; ++mi) {
            Wgmma<T, B_ROW_MAJOR>(
                acc[mi], AdvanceDescriptor(desc_a, k / 4 * BM * 128 + k % 4 * 32 + mi * 64 * 128),
                desc_b_k, kt > w.k_lo || k > 0);
          }
        }
        WgmmaCommit();
#pragma unroll
        for (int mi = 0; mi < kMTiles; ++mi) FenceRegisters(acc[mi]);
        // The previous step's WGMMAs have retired: its stage may be refilled.
        WgmmaWait<1>();
        if (kt > w.k_lo) release(last_stage);
        last_stage = at.stage;
        if (issues_loads && step + STAGES - 1 < steps) load_step(step + STAGES - 1);
        __syncwarp();
      }
      WgmmaWait<0>();
      release(last_stage);

      // Accumulator layout of m64nN: warp w holds rows 16w + lane / 4 and 8 below, columns
      // 8j + 2 * (lane % 4) and the next one (acc[mi][4j ... 4j + 3]).
      constexpr int kGroups = BN / 8, kOwnGroups = kGroups / SPLIT_K;
      if constexpr (SPLIT_K > 1) {
        // Sum column groups [k_rank * kOwnGroups, + kOwnGroups) over the cluster's partials.
        const uint32_t mine = partials + consumer * kConsumerRows * BN * 4 + threadIdx.x % 128 * 16;
        const uint32_t ready = partials_ready + 8 * consumer, read = partials_read + 8 * consumer;
        if (i > 0) BarrierWait<true>(read, (i - 1) & 1);  // every rank read the previous tile
#pragma unroll
        for (int mi = 0; mi < kMTiles; ++mi) {
#pragma unroll
          for (int j = 0; j < kGroups; ++j) {
            const float* v = &acc[mi][4 * j];
            asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(
                             mine + (mi * kGroups + j) * 128 * 16),
                         "f"(v[0]), "f"(v[1]), "f"(v[2]), "f"(v[3])
                         : "memory");
          }
        }
        FenceCluster();
        WarpgroupSync(1 + consumer);
        if (leader) {
          for (int r = 0; r < SPLIT_K; ++r) BarrierArriveCluster<true>(ready, r);
        }
        BarrierWait<true>(ready, i & 1);
#pragma unroll
        for (int mi = 0; mi < kMTiles; ++mi) {
#pragma unroll
          for (int j = 0; j < kGroups; ++j) {
            if (j / kOwnGroups != k_rank) continue;
            float4 sum = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
            for (int r = 0; r < SPLIT_K; ++r) {
              const float4 p = r == k_rank
                                   ? make_float4(acc[mi][4 * j], acc[mi][4 * j + 1],
                                                 acc[mi][4 * j + 2], acc[mi][4 * j + 3])
                                   : LoadClusterShared(mine + (mi * kGroups + j) * 128 * 16, r);
              sum.x += p.x;
              sum.y += p.y;
              sum.z += p.z;
              sum.w += p.w;
            }
            acc[mi][4 * j] = sum.x;
            acc[mi][4 * j + 1] = sum.y;
            acc[mi][4 * j + 2] = sum.z;
            acc[mi][4 * j + 3] = sum.w;
          }
        }
        FenceCluster();
        WarpgroupSync(1 + consumer);
        if (leader) {
          for (int r = 0; r < SPLIT_K; ++r) BarrierArriveCluster<true>(read, r);
        }
      }

      if constexpr (STREAM_K) {
        // Accumulator order, one float4 per thread per slot: coalesced, the same in every block.
        const int slot = threadIdx.x % 128;
        const int block = static_cast<int>(blockIdx.x);
        if (w.k_lo > 0) {
          // Not the tile's first k iterations: hand the partial to the block that computed them.
          float4* mine = partial_of(block, consumer) + slot;
#pragma unroll
          for (int mi = 0; mi < kMTiles; ++mi) {
#pragma unroll
            for (int j = 0; j < kGroups; ++j) {
              const float* v = &acc[mi][4 * j];
              __stcg(mine + (mi * kGroups + j) * 128, make_float4(v[0], v[1], v[2], v[3]));
            }
          }
          FenceGpu();
          WarpgroupSync(1 + consumer);
          if (leader) StoreRelease(flag_of(block, consumer), 1);
          continue;
        }
        // The tile's first k iterations: add the later clusters' partials, in cluster order.
        // Cluster c's run begins inside this tile when it is not empty and starts before the
        // tile's end; its first unit is then its part of this tile.
        const long long tile_end = static_cast<long long>(w.tile + 1) * all_k_tiles;
        for (int c = cluster + 1; w.k_hi < all_k_tiles && c < clusters && sk_start(c) < tile_end;
             ++c) {
          if (sk_start(c + 1) == sk_start(c)) continue;
          const int peer = c * CLUSTER_M + m_rank;
          if (leader) {
            while (LoadAcquire(flag_of(peer, consumer)) == 0) {
            }
            *flag_of(peer, consumer) =
                0;  // for the next launch; nobody raises it again in this one
          }
          WarpgroupSync(1 + consumer);
          const float4* theirs = partial_of(peer, consumer) + slot;
#pragma unroll
          for (int mi = 0; mi < kMTiles; ++mi) {
#pragma unroll
            for (int j = 0; j < kGroups; ++j) {
              const float4 p = __ldcg(theirs + (mi * kGroups + j) * 128);
              acc[mi][4 * j] += p.x;
              acc[mi][4 * j + 1] += p.y;
              acc[mi][4 * j + 2] += p.z;
              acc[mi][4 * j + 3] += p.w;
            }
          }
        }
      }

      const TileCoord tile = tile_of(w.tile);
      const int lane = threadIdx.x % 32, warp = threadIdx.x % 128 / 32;
      if constexpr (TMA_STORE) {
        // kBoxCols columns of kBoxRows rows at a time through the consumer's two boxes: the TMA
        // stores one while the consumer fills the other (or goes on with the next tile). Where
        // BN is no multiple of kBoxCols (152 = 4 x 32 + 24), the last box is the tile's last
        // kBoxCols columns and rewrites part of the previous one with the same values (a box
        // past the tile would overwrite the next tile's columns; the TMA clips only at the
        // matrix's edge).
        const TmaDescriptor& map = kWideBoxes ? map_c : map_c32;
        const int row0 = tile.m * BM + consumer * kConsumerRows;
#pragma unroll
        for (int rb = 0; rb < kConsumerRows / kBoxRows; ++rb) {
#pragma unroll
          for (int j = 0; j < (BN + kBoxCols - 1) / kBoxCols; ++j) {
            const int col = min(j * kBoxCols, BN - kBoxCols);
            const uint32_t buf = c_boxes + (consumer * 2 + boxes++ % 2) * kCBoxBytes;
            if (leader) TmaStoreWaitRead<1>();  // the store that last read `buf` is done
            WarpgroupSync(1 + consumer);
#pragma unroll
            for (int mi = rb * kBoxRows / 64; mi < (rb + 1) * kBoxRows / 64; ++mi) {
#pragma unroll
              for (int half = 0; half < 2; ++half) {
                const int r = mi * 64 % kBoxRows + warp * 16 + half * 8 + lane / 4;  // in the box
#pragma unroll
                for (int c = 0; c < kBoxCols / 8; ++c) {
                  const float* v = &acc[mi][4 * (col / 8 + c) + 2 * half];
                  const uint32_t addr =
                      buf + (kWideBoxes ? SwizzledOffset(r, c) : Swizzled64Offset(r, c)) +
                      lane % 4 * 4;
                  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr),
                               "r"(PackPair(v[0], v[1], T())));
                }
              }
            }
            FenceAsyncShared();
            WarpgroupSync(1 + consumer);
            if (leader) TmaStore(map, tile.n * BN + col, row0 + rb * kBoxRows, buf);
          }
        }
      } else {
        // Masked: edge tiles reach past M and N (N is even, so a pair is in or out as a whole).
        const long long row =
            static_cast<long long>(tile.m) * BM + consumer * kConsumerRows + warp * 16 + lane / 4;
        const long long col = static_cast<long long>(tile.n) * BN + lane % 4 * 2;
#pragma unroll
        for (int mi = 0; mi < kMTiles; ++mi) {
#pragma unroll
          for (int j = 0; j < kGroups; ++j) {
            if (j / kOwnGroups != k_rank || col + j * 8 >= N) continue;
            const long long r = row + mi * 64;
            if (r < M) StorePair(C, N, r, col + j * 8, acc[mi][4 * j], acc[mi][4 * j + 1]);
            if (r + 8 < M) {
              StorePair(C, N, r + 8, col + j * 8, acc[mi][4 * j + 2], acc[mi][4 * j + 3]);
            }
          }
        }
      }
    }
    if (TMA_STORE && leader) TmaStoreWaitRead<0>();  // shared memory outlives the stores' reads
    if (issues_loads)
      wait_for_releases({steps % STAGES, static_cast<uint32_t>(steps / STAGES) & 1});
  }
  // No block may exit while a peer can still read its partials.
  if constexpr (SPLIT_K > 1) ClusterSync();
}

#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
// ---------------------------------------------------------------------------------------------
// Ampere: cp.async, ldmatrix, mma.sync.

// Copies 16 bytes from global `src` to shared `dst`, or writes 16 zero bytes there when `src`
// is past the matrix (edge tiles: the `fallback` address is given instead and not read).
__device__ __forceinline__ void CopyAsync16(uint32_t dst, const void* src, bool in_bounds,
                                            const void* fallback) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(in_bounds ? src : fallback), "r"(in_bounds ? 16 : 0));
}
__device__ __forceinline__ void CommitAsync() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void WaitAsync() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void LoadMatrixX4(uint32_t addr, uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void LoadMatrixX4Trans(uint32_t addr, uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

template <typename T>
__device__ __forceinline__ void Mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1) {
  if constexpr (!kIsBf16<T>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Same grid, tiles, stages and raster order as the Hopper path. Every warp copies; the first
// 4 * CONSUMERS warps compute, 2 x 2 warps per consumer slice of BM / CONSUMERS rows.
template <typename T, int B_ROW_MAJOR, int BM, int BN, int BK, int STAGES, int CONSUMERS, int WS,
          int GROUP_M>
__device__ __forceinline__ void AmpereGemm(const T* A, const T* B, T* C, long long M, long long N,
                                           long long K, unsigned char* smem_raw) {
  constexpr int kThreads = (CONSUMERS + WS) * 128;
  constexpr int kWarpM = BM / CONSUMERS / 2, kWarpN = BN / 2;
  constexpr int kMmaM = kWarpM / 16, kMmaN = kWarpN / 8;
  constexpr uint32_t kABytes = BM * BK * 2;
  constexpr uint32_t kStageBytes = (BM + BN) * BK * 2;
  const uint32_t smem =
      (static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw)) + 1023) & ~uint32_t{1023};
  const int tiles_m = static_cast<int>((M + BM - 1) / BM);
  const int tiles_n = static_cast<int>((N + BN - 1) / BN);
  const int k_tiles = static_cast<int>((K + BK - 1) / BK);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const bool computes = warp < 4 * CONSUMERS;
  const int warp_row = warp / 4 * (BM / CONSUMERS) + warp % 4 / 2 * kWarpM;
  const int warp_col = warp % 2 * kWarpN;

  for (int tile_id = blockIdx.x; tile_id < tiles_m * tiles_n; tile_id += gridDim.x) {
    const TileCoord tile = TileOf<GROUP_M>(tile_id, tiles_m, tiles_n);
    const long long m0 = static_cast<long long>(tile.m) * BM;
    const long long n0 = static_cast<long long>(tile.n) * BN;
    // Chunks of 8 elements are wholly inside or outside (N % 8 == 0, K % 8 == 0).
    auto load_stage = [&](int stage, int kt) {
      const uint32_t a = smem + stage * kStageBytes, b = a + kABytes;
      const long long k0 = static_cast<long long>(kt) * BK;
      for (int i = threadIdx.x; i < BM * BK / 8; i += kThreads) {
        const int sub = i / (BM * 8), row = i / 8 % BM, chunk = i % 8;
        const long long m = m0 + row, k = k0 + sub * 64 + chunk * 8;
        CopyAsync16(a + sub * BM * 128 + SwizzledOffset(row, chunk), A + m * K + k, m < M && k < K,
                    A);
      }
      for (int i = threadIdx.x; i < BN * BK / 8; i += kThreads) {
        if constexpr (B_ROW_MAJOR) {
          const int sub = i / (BK * 8), row = i / 8 % BK, chunk = i % 8;
          const long long k = k0 + row, n = n0 + sub * 64 + chunk * 8;
          CopyAsync16(b + sub * BK * 128 + SwizzledOffset(row, chunk), B + k * N + n,
                      k < K && n < N, B);
        } else {
          const int sub = i / (BN * 8), row = i / 8 % BN, chunk = i % 8;
          const long long n = n0 + row, k = k0 + sub * 64 + chunk * 8;
          CopyAsync16(b + sub * BN * 128 + SwizzledOffset(row, chunk), B + n * K + k,
                      n < N && k < K, B);
        }
      }
    };

    // Each k tile is its own commit group, empty ones included, so "at most STAGES - 2 groups
    // pending" always means "the tile about to be used has landed".
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < k_tiles) load_stage(s, s);
      CommitAsync();
    }
    float acc[kMmaM][kMmaN][4] = {};
    for (int kt = 0; kt < k_tiles; ++kt) {
      WaitAsync<STAGES - 2>();
      __syncthreads();  // also: every warp is done reading the stage refilled next
      if (kt + STAGES - 1 < k_tiles) load_stage((kt + STAGES - 1) % STAGES, kt + STAGES - 1);
      CommitAsync();
      if (!computes) continue;
      const uint32_t a = smem + kt % STAGES * kStageBytes, b = a + kABytes;
      const int quad = lane / 8, quad_row = lane % 8;  // ldmatrix: lane feeds matrix quad's row
#pragma unroll
      for (int kk = 0; kk < BK; kk += 16) {
        const int sub = kk / 64, chunk = kk % 64 / 8;
        uint32_t a_frag[kMmaM][4];
#pragma unroll
        for (int i = 0; i < kMmaM; ++i) {
          // Matrices: rows 0-7 / 8-15 of the m16 tile, k 0-7 then 8-15.
          const int row = warp_row + i * 16 + quad % 2 * 8 + quad_row;
          LoadMatrixX4(a + sub * BM * 128 + SwizzledOffset(row, chunk + quad / 2), a_frag[i]);
        }
        uint32_t b_frag[kMmaN][2];
#pragma unroll
        for (int j = 0; j < kMmaN; j += 2) {
          // Matrices: n tile j at k 0-7 and 8-15, then n tile j + 1.
          uint32_t r[4];
          if constexpr (B_ROW_MAJOR) {
            const int k = kk + quad % 2 * 8 + quad_row, n = warp_col + j * 8 + quad / 2 * 8;
            LoadMatrixX4Trans(b + n / 64 * BK * 128 + SwizzledOffset(k, n % 64 / 8), r);
          } else {
            const int n = warp_col + j * 8 + quad / 2 * 8 + quad_row;
            LoadMatrixX4(b + sub * BN * 128 + SwizzledOffset(n, chunk + quad % 2), r);
          }
          b_frag[j][0] = r[0];
          b_frag[j][1] = r[1];
          b_frag[j + 1][0] = r[2];
          b_frag[j + 1][1] = r[3];
        }
#pragma unroll
        for (int i = 0; i < kMmaM; ++i) {
#pragma unroll
          for (int j = 0; j < kMmaN; ++j)
            Mma16816<T>(acc[i][j], a_frag[i], b_frag[j][0], b_frag[j][1]);
        }
      }
    }
    WaitAsync<0>();
    __syncthreads();  // the next tile's prologue overwrites the stages
    if (!computes) continue;

    // Accumulator layout of m16n8: rows lane / 4 and 8 below, columns 2 * (lane % 4) and next.
    // Masked for edge tiles, as on Hopper.
    const long long row = m0 + warp_row + lane / 4, col = n0 + warp_col + lane % 4 * 2;
#pragma unroll
    for (int i = 0; i < kMmaM; ++i) {
#pragma unroll
      for (int j = 0; j < kMmaN; ++j) {
        if (col + j * 8 >= N) continue;
        const long long r = row + i * 16;
        if (r < M) StorePair(C, N, r, col + j * 8, acc[i][j][0], acc[i][j][1]);
        if (r + 8 < M) StorePair(C, N, r + 8, col + j * 8, acc[i][j][2], acc[i][j][3]);
      }
    }
  }
}

#endif

}  // namespace hopper_gemm_detail

// Compile-time cluster shape; clusters exist from sm_90 on.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define HOPPER_GEMM_CLUSTER(x) __cluster_dims__(x, 1, 1)
#else
#define HOPPER_GEMM_CLUSTER(x)
#endif

// The tuned kernel: a persistent grid of at most SPLIT_K blocks per tile, a multiple of the
// cluster size CLUSTER_M * SPLIT_K (e.g. min(tiles * SPLIT_K, device.sm_count rounded down)),
// (CONSUMERS + WS) * 128 threads.
template <typename T, int B_ROW_MAJOR, int BM, int BN, int BK, int STAGES, int CONSUMERS, int WS,
          int GROUP_M, int CLUSTER_M, int TMA_STORE, int SPLIT_K, int STREAM_K>
__global__ void HOPPER_GEMM_CLUSTER(CLUSTER_M* SPLIT_K) __launch_bounds__((CONSUMERS + WS) * 128, 1)
    hopper_gemm(const T* A, const T* B, T* C, float* W, long long M, long long N, long long K,
                const __grid_constant__ TmaDescriptor map_a,
                const __grid_constant__ TmaDescriptor map_b,
                const __grid_constant__ TmaDescriptor map_c,
                const __grid_constant__ TmaDescriptor map_c32) {
  static_assert(BM % CONSUMERS == 0 && (BM / CONSUMERS == 64 || BM / CONSUMERS == 128),
                "each consumer warpgroup owns 64 or 128 rows");
  static_assert(BN == 64 || BN == 128 || BN == 152 || BN == 256, "wgmma n64, n128, n152 or n256");
  static_assert(BK % 64 == 0, "k tiles are whole 128-byte swizzled rows");
  static_assert(BM / CONSUMERS * BN <= 128 * 152, "at most 152 accumulators a thread");
  static_assert(BN % 64 == 0 || B_ROW_MAJOR == 0, "row-major B comes in 64-column sub-tiles");
  static_assert(STAGES >= 2 && (WS == 0 || WS == 1), "a ring of 2+ stages; WS is a flag");
  static_assert(CLUSTER_M == 1 || CLUSTER_M == 2, "B multicast to 1 or 2 blocks");
  static_assert(TMA_STORE == 0 || TMA_STORE == 1, "TMA_STORE is a flag");
  static_assert(SPLIT_K == 1 || SPLIT_K == 2 || SPLIT_K == 4, "k split over 1, 2 or 4 blocks");
  static_assert(BN / 8 % SPLIT_K == 0, "split-K ranks sum whole 8-column groups");
  static_assert(SPLIT_K == 1 || (CLUSTER_M == 1 && TMA_STORE == 0),
                "split-K clusters hold one tile and store it from registers");
  static_assert(STREAM_K == 0 || STREAM_K == 1, "STREAM_K is a flag");
  static_assert(STREAM_K == 0 || (WS == 1 && SPLIT_K == 1),
                "stream-K runs of k iterations need the producer warpgroup and no k split");
  extern __shared__ __align__(1024) unsigned char smem[];
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  hopper_gemm_detail::HopperGemm<T, B_ROW_MAJOR, BM, BN, BK, STAGES, CONSUMERS, WS, GROUP_M,
                                 CLUSTER_M, TMA_STORE, SPLIT_K, STREAM_K>(
      C, W, M, N, K, map_a, map_b, map_c, map_c32, smem);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  (void)W;
  if constexpr (BN % 64 == 0) {
    hopper_gemm_detail::AmpereGemm<T, B_ROW_MAJOR, BM, BN, BK, STAGES, CONSUMERS, WS, GROUP_M>(
        A, B, C, M, N, K, smem);
  } else {
    __trap();  // a Hopper-only tile (the specs offer BN = 152 on sm_90 only)
  }
#endif
}

// Reference: 16 x 16 threads per block, one output each, fp32 accumulation in k order over
// 16 x 16 shared tiles; C rounded to T once. It takes the tuned kernel's buffers (W unused).
template <typename T, int B_ROW_MAJOR>
__global__ void hopper_gemm_reference(const T* A, const T* B, T* C, float* /*W*/, long long M,
                                      long long N, long long K) {
  __shared__ float a_tile[16][16], b_tile[16][17];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const long long m = static_cast<long long>(blockIdx.y) * 16 + ty;
  const long long n = static_cast<long long>(blockIdx.x) * 16 + tx;
  const long long n_of_ty = static_cast<long long>(blockIdx.x) * 16 + ty;
  float sum = 0;
  for (long long k0 = 0; k0 < K; k0 += 16) {
    a_tile[ty][tx] = m < M && k0 + tx < K ? static_cast<float>(A[m * K + k0 + tx]) : 0.f;
    // b_tile[k][n]; TN reads B[n][k] with k along threadIdx.x for coalescing.
    if (B_ROW_MAJOR) {
      b_tile[ty][tx] = n < N && k0 + ty < K ? static_cast<float>(B[(k0 + ty) * N + n]) : 0.f;
    } else {
      b_tile[tx][ty] =
          n_of_ty < N && k0 + tx < K ? static_cast<float>(B[n_of_ty * K + k0 + tx]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; ++k) sum += a_tile[ty][k] * b_tile[k][tx];
    __syncthreads();
  }
  if (m < M && n < N) C[m * N + n] = T(sum);
}
