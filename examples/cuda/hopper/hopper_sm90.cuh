// Hopper (sm_90a) building blocks shared by the Hopper kernels (hopper_gemm, attention):
// mbarriers, TMA bulk tensor copies, WGMMA with its shared-memory descriptors, setmaxnreg,
// and the fp16/bf16 packing both epilogues use. Everything is a thin, inline wrapper of one
// PTX instruction (or a wait loop on one); the kernels own the protocols built from them.
//
// Each spec folder holds a link to this file and names it under `includes:`, since a spec
// sends only files inside its own folder.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

// A CUtensorMap, passed by value; the kernel only hands its address to the TMA unit.
struct alignas(64) TmaDescriptor {
  unsigned long long opaque[16];
};

namespace hopper {

template <typename T>
constexpr bool kIsBf16 = false;
template <>
constexpr bool kIsBf16<__nv_bfloat16> = true;

__device__ __forceinline__ uint32_t PackPair(float lo, float hi, __half) {
  __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}
__device__ __forceinline__ uint32_t PackPair(float lo, float hi, __nv_bfloat16) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

// Stores two adjacent outputs C[row][col], C[row][col + 1].
template <typename T>
__device__ __forceinline__ void StorePair(T* C, long long N, long long row, long long col, float lo,
                                          float hi) {
  *reinterpret_cast<uint32_t*>(C + row * N + col) = PackPair(lo, hi, T());
}

// Byte offset of 16-byte chunk `chunk` (0-7) of row `row` in a 128-byte-swizzled sub-tile.
__device__ __forceinline__ uint32_t SwizzledOffset(int row, int chunk) {
  return row * 128 + ((chunk ^ (row & 7)) << 4);
}
// The same for 64-byte rows with the 64-byte swizzle (chunks 0-3 XOR-permuted by row / 2 % 4:
// the TMA XORs address bits 4-5 with bits 7-8), in a sub-tile aligned to 512 bytes.
__device__ __forceinline__ uint32_t Swizzled64Offset(int row, int chunk) {
  return row * 64 + ((chunk ^ (row / 2 & 3)) << 4);
}

// ---------------------------------------------------------------------------------------------
// sm_90a only: mbarriers, TMA, WGMMA, setmaxnreg.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ __forceinline__ void BarrierInit(uint32_t bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}
__device__ __forceinline__ void BarrierExpectBytes(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void BarrierArrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Arrives on the barrier at the same shared offset in cluster CTA `rank` (itself included).
// kRelease: with cluster-scope release semantics, for data handed to other blocks; the ring's
// arrives go without (a cluster-scope release on every stage cost 40%, bench NOTES.md v2).
template <bool kRelease = false>
__device__ __forceinline__ void BarrierArriveCluster(uint32_t bar, uint32_t rank) {
  // The instruction text differs between the two only in the semantics.
#define TF_MBARRIER_ARRIVE_CLUSTER(SEM)                                          \
  asm volatile(                                                                  \
      "{\n.reg .b32 remote;\n"                                                   \
      "mapa.shared::cluster.u32 remote, %0, %1;\n"                               \
      "mbarrier.arrive" SEM ".shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar), \
      "r"(rank)                                                                  \
      : "memory")
  if constexpr (kRelease) {
    TF_MBARRIER_ARRIVE_CLUSTER(".release.cluster");
  } else {
    TF_MBARRIER_ARRIVE_CLUSTER("");
  }
#undef TF_MBARRIER_ARRIVE_CLUSTER
}
// Waits for the phase of parity `parity` to complete. kAcquireCluster: also acquires what the
// arriving threads of other cluster CTAs released.
template <bool kAcquireCluster = false>
__device__ __forceinline__ void BarrierWait(uint32_t bar, uint32_t parity) {
  // The instruction text differs between the two only in the semantics.
#define TF_MBARRIER_WAIT(SEM)              \
  asm volatile(                            \
      "{\n.reg .pred done;\n"              \
      "WAIT:\n"                            \
      "mbarrier.try_wait.parity" SEM       \
      ".shared::cta.b64 done, [%0], %1;\n" \
      "@!done bra WAIT;\n}\n" ::"r"(bar),  \
      "r"(parity)                          \
      : "memory")
  if constexpr (kAcquireCluster) {
    TF_MBARRIER_WAIT(".acquire.cluster");
  } else {
    TF_MBARRIER_WAIT("");
  }
#undef TF_MBARRIER_WAIT
}

// The four floats at shared offset `addr` of cluster CTA `rank`.
__device__ __forceinline__ float4 LoadClusterShared(uint32_t addr, uint32_t rank) {
  float4 v;
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %4, %5;\n"
      "ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [remote];\n}\n"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "r"(addr), "r"(rank)
      : "memory");
  return v;
}

// 2-D bulk tensor load of the box at (x, y) (x innermost) into shared `dst`, completing on `bar`.
__device__ __forceinline__ void TmaLoad(uint32_t dst, const TmaDescriptor& map, int x, int y,
                                        uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(&map)), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

// Brings the tensor map into the TMA unit's descriptor cache ahead of its first use.
__device__ __forceinline__ void PrefetchTensorMap(const TmaDescriptor& map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map)) : "memory");
}

// As TmaLoad, but the box lands at `dst` and completes on `bar` in every CTA of `cta_mask`.
__device__ __forceinline__ void TmaLoadMulticast(uint32_t dst, const TmaDescriptor& map, int x,
                                                 int y, uint32_t bar, uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(&map)), "r"(x), "r"(y), "r"(bar), "h"(cta_mask)
      : "memory");
}

// 2-D bulk tensor store of the box at shared `src` to (x, y) of the tensor `map` describes.
__device__ __forceinline__ void TmaStore(const TmaDescriptor& map, int x, int y, uint32_t src) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
          reinterpret_cast<uint64_t>(&map)),
      "r"(x), "r"(y), "r"(src)
      : "memory");
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
// Waits until at most N bulk store groups still read shared memory.
template <int N>
__device__ __forceinline__ void TmaStoreWaitRead() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
// Makes this thread's ordinary shared-memory writes visible to the TMA unit.
__device__ __forceinline__ void FenceAsyncShared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Orders this thread's earlier memory accesses (remote shared loads included) before its later
// ones as the whole cluster sees them: with a barrier after it, one thread's release arrive then
// speaks for the barrier's threads.
__device__ __forceinline__ void FenceCluster() {
  asm volatile("fence.acq_rel.cluster;\n" ::: "memory");
}
// GPU-scope flags in global memory, for blocks that hand data to each other through it: a
// writer makes its data visible (FenceGpu, then a barrier of the writing threads) before one
// thread's StoreRelease; a reader spins on LoadAcquire, then a barrier lets the other threads
// read the data (from L2: ld.global.cg, since L1 is not coherent).
__device__ __forceinline__ void FenceGpu() { asm volatile("fence.acq_rel.gpu;\n" ::: "memory"); }
__device__ __forceinline__ void StoreRelease(unsigned* flag, unsigned value) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(flag), "r"(value) : "memory");
}
__device__ __forceinline__ unsigned LoadAcquire(const unsigned* flag) {
  unsigned value;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(value) : "l"(flag) : "memory");
  return value;
}
// Named barrier `id` (1-15; 0 is __syncthreads) for `threads` threads: Sync waits for the
// count, Arrive counts this warp without waiting.
__device__ __forceinline__ void NamedBarrierSync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void NamedBarrierArrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void WarpgroupSync(int id) { NamedBarrierSync(id, 128); }

__device__ __forceinline__ void ClusterSync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::
                   : "memory");
}
// CUTLASS's start of a cluster kernel: the mbarrier inits are released by their own fence, so
// the arrive is relaxed (ClusterSync's release arrive made the start 950 cycles longer, bench
// hopper_gemm/NOTES.md v14).
__device__ __forceinline__ void ClusterArriveRelaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void ClusterWait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// WGMMA shared-memory descriptor for a 128-byte-swizzled operand. K-major: `stride` is the
// distance between 8-row groups (1024 bytes), `leading` unused. MN-major: `leading` is the
// distance between 64-element column blocks, `stride` between groups of 8 k rows.
__device__ __forceinline__ uint64_t SmemDescriptor(uint32_t addr, uint32_t leading,
                                                   uint32_t stride) {
  return uint64_t{(addr & 0x3FFFF) >> 4} | uint64_t{leading >> 4} << 16 |
         uint64_t{stride >> 4} << 32 | uint64_t{1} << 62;
}
// The descriptor of the operand `bytes` (a multiple of 16) further on in shared memory. The start
// address field is the low 14 bits (address / 16, and shared addresses stay below 256 KiB), so
// the sum never carries out of it and only the low word changes: with a compile-time `bytes`
// one add, where SmemDescriptor rebuilds the fields from an address (bench NOTES.md v11).
__device__ __forceinline__ uint64_t AdvanceDescriptor(uint64_t desc, uint32_t bytes) {
  return (desc & ~uint64_t{0xFFFFFFFF}) | (static_cast<uint32_t>(desc) + (bytes >> 4));
}

__device__ __forceinline__ void WgmmaFence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void WgmmaCommit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void WgmmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accumulator accesses across the asynchronous WGMMAs.
template <int N>
__device__ __forceinline__ void FenceRegisters(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

template <int kRegs>
__device__ __forceinline__ void ReleaseRegisters() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void ClaimRegisters() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// wgmma.mma_async.m64nNk16 with fp32 accumulators d (N / 2 per thread). A is K-major, from
// shared memory (a descriptor) or from registers; B comes from shared memory, K-major
// (kTransB == 0) or MN-major (kTransB == 1). scale_d == 0 overwrites d, 1 accumulates.
// The instruction text differs between the two types only in their name.

// m64n64k16, A and B from shared memory (descriptors).
template <typename T, int kTransB>
__device__ __forceinline__ void Wgmma(float (&d)[32], uint64_t desc_a, uint64_t desc_b,
                                      int scale_d) {
#define TF_WGMMA_SS(TYPE)                                                                          \
  asm volatile(                                                                                    \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                                 \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE                                  \
      " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "    \
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, "   \
      "%35;\n}\n"                                                                                  \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),        \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),    \
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])                                         \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransB))
  if constexpr (!kIsBf16<T>) {
    TF_WGMMA_SS("f16");
  } else {
    TF_WGMMA_SS("bf16");
  }
#undef TF_WGMMA_SS
}

// m64n128k16, A and B from shared memory (descriptors).
template <typename T, int kTransB>
__device__ __forceinline__ void Wgmma(float (&d)[64], uint64_t desc_a, uint64_t desc_b,
                                      int scale_d) {
#define TF_WGMMA_SS(TYPE)                                                                          \
  asm volatile(                                                                                    \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                                 \
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE                                 \
      " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "    \
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, " \
      "%37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, " \
      "%55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, %67;\n}\n"              \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),        \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),    \
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), \
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), \
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), \
        "+f"(d[63])                                                                                \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransB))
  if constexpr (!kIsBf16<T>) {
    TF_WGMMA_SS("f16");
  } else {
    TF_WGMMA_SS("bf16");
  }
#undef TF_WGMMA_SS
}

// m64n152k16, A and B from shared memory (descriptors).
template <typename T, int kTransB>
__device__ __forceinline__ void Wgmma(float (&d)[76], uint64_t desc_a, uint64_t desc_b,
                                      int scale_d) {
#define TF_WGMMA_SS(TYPE)                                                                          \
  asm volatile(                                                                                    \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %78, 0;\n"                                                 \
      "wgmma.mma_async.sync.aligned.m64n152k16.f32." TYPE "." TYPE                                 \
      " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "    \
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "      \
      "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "      \
      "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, "      \
      "%70, %71, %72, %73, %74, %75}, %76, %77, p, 1, 1, 0, %79;\n}\n"                             \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),        \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),    \
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), \
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), \
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), \
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), \
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75])               \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransB))
  if constexpr (!kIsBf16<T>) {
    TF_WGMMA_SS("f16");
  } else {
    TF_WGMMA_SS("bf16");
  }
#undef TF_WGMMA_SS
}

// m64n176k16, A and B from shared memory (descriptors).
template <typename T, int kTransB>
__device__ __forceinline__ void Wgmma(float (&d)[88], uint64_t desc_a, uint64_t desc_b,
                                      int scale_d) {
#define TF_WGMMA_SS(TYPE)                                                                          \
  asm volatile(                                                                                    \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %90, 0;\n"                                                 \
      "wgmma.mma_async.sync.aligned.m64n176k16.f32." TYPE "." TYPE                                 \
      " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "    \
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "      \
      "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "      \
      "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, "      \
      "%70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, "      \
      "%87}, %88, %89, p, 1, 1, 0, %91;\n}\n"                                                      \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),        \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),    \
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), \
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), \
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), \
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), \
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), \
        "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), \
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87])                                         \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransB))
  if constexpr (!kIsBf16<T>) {
    TF_WGMMA_SS("f16");
  } else {
    TF_WGMMA_SS("bf16");
  }
#undef TF_WGMMA_SS
}

// m64n192k16, A and B from shared memory (descriptors).
template <typename T, int kTransB>
__device__ __forceinline__ void Wgmma(float (&d)[96], uint64_t desc_a, uint64_t desc_b,
                                      int scale_d) {
#define TF_WGMMA_SS(TYPE)                                                                          \
  asm volatile(                                                                                    \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"                                                 \
      "wgmma.mma_async.sync.aligned.m64n192k16.f32." TYPE "." TYPE                                 \
      " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "    \
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, "      \
      "%36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, "      \
      "%53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, "      \
      "%70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, "      \
      "%87, %88, %89, %90, %91, %92, %93, %94, %95}, %96, %97, p, 1, 1, 0, %99;\n}\n"              \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),        \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),    \
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), \
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), \
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), \
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), \
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), \
        "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), \
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), \
        "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])                            \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransB))
  if constexpr (!kIsBf16<T>) {
    TF_WGMMA_SS("f16");
  } else {
    TF_WGMMA_SS("bf16");
  }
#undef TF_WGMMA_SS
}

// m64n256k16, A and B from shared memory (descriptors).
template <typename T, int kTransB>
__device__ __forceinline__ void Wgmma(float (&d)[128], uint64_t desc_a, uint64_t desc_b,
                                      int scale_d) {
#define TF_WGMMA_SS(TYPE)                                                                          \
  asm volatile(                                                                                    \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                                \
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE                                 \
      " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "    \
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, " \
      "%37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, " \
      "%55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, " \
      "%73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, " \
      "%91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, "    \
      "%107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, " \
      "%122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1, 0, %131;\n}\n"                    \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),        \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),    \
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), \
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), \
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), \
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), \
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), \
        "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), \
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), \
        "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), \
        "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),          \
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),        \
        "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),        \
        "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),        \
        "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])         \
      : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kTransB))
  if constexpr (!kIsBf16<T>) {
    TF_WGMMA_SS("f16");
  } else {
    TF_WGMMA_SS("bf16");
  }
#undef TF_WGMMA_SS
}

// m64n64k16, A from registers, B from shared memory.
template <typename T, int kTransB>
__device__ __forceinline__ void Wgmma(float (&d)[32], const uint32_t (&a)[4], uint64_t desc_b,
                                      int scale_d) {
#define TF_WGMMA_RS(TYPE)                                                                          \
  asm volatile(                                                                                    \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"                                                 \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE                                  \
      " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "    \
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, "   \
      "%36, p, 1, 1, %38;\n}\n"                                                                    \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),        \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),    \
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])                                         \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(kTransB))
  if constexpr (!kIsBf16<T>) {
    TF_WGMMA_RS("f16");
  } else {
    TF_WGMMA_RS("bf16");
  }
#undef TF_WGMMA_RS
}

// m64n128k16, A from registers, B from shared memory.
template <typename T, int kTransB>
__device__ __forceinline__ void Wgmma(float (&d)[64], const uint32_t (&a)[4], uint64_t desc_b,
                                      int scale_d) {
#define TF_WGMMA_RS(TYPE)                                                                          \
  asm volatile(                                                                                    \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"                                                 \
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE                                 \
      " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "    \
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, " \
      "%37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, " \
      "%55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, "         \
      "%70;\n}\n"                                                                                  \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),        \
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),    \
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), \
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), \
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), \
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), \
        "+f"(d[63])                                                                                \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(kTransB))
  if constexpr (!kIsBf16<T>) {
    TF_WGMMA_RS("f16");
  } else {
    TF_WGMMA_RS("bf16");
  }
#undef TF_WGMMA_RS
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace hopper
