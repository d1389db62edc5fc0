# Builds trace copies of the Hopper GEMM kernel and harness: each block records clock64 at its
# phases into hg_trace (64 slots a block) when the harness's TRACE env is set.
import re, sys, pathlib
root = pathlib.Path(sys.argv[1]); out = pathlib.Path(sys.argv[2]); out.mkdir(parents=True, exist_ok=True)
k = (root / "examples/cuda/hopper_gemm/hopper_gemm.cu").read_text()
def sub(old, new, text, count=1):
    assert text.count(old) >= 1, old
    return text.replace(old, new, count)
k = sub('#include "hopper_sm90.cuh"', '#include "' + str(root / "examples/cuda/hopper_gemm/hopper_sm90.cuh") + '''"
__device__ unsigned long long* hg_trace;
__device__ __forceinline__ void Mark(int slot) {
  if (hg_trace) hg_trace[blockIdx.x * 64 + slot] = clock64();
}
__device__ __forceinline__ void MarkEntry() {
  if (hg_trace && threadIdx.x == 0) {
    unsigned long long t; unsigned sm;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    hg_trace[blockIdx.x * 64 + 0] = t; hg_trace[blockIdx.x * 64 + 1] = clock64();
    hg_trace[blockIdx.x * 64 + 2] = sm;
  }
}''', k)
k = sub('''  constexpr int kConsumerRows = BM / CONSUMERS;
  constexpr int kMTiles''', '''  MarkEntry();
  constexpr int kConsumerRows = BM / CONSUMERS;
  constexpr int kMTiles''', k)
k = sub('''    asm volatile("fence.mbarrier_init.release.cluster;\\n" ::: "memory");
  }''', '''    asm volatile("fence.mbarrier_init.release.cluster;\\n" ::: "memory");
    Mark(43);
  }''', k)
k = sub('''    __syncthreads();
  }

  // Waits until''', '''    __syncthreads();
  }
  if (threadIdx.x == 0) Mark(3);

  // Waits until''', k)
k = sub('''    if (threadIdx.x == 0) {
      RingPosition<STAGES> at;''', '''    if (threadIdx.x == 0) {
      Mark(44);
      RingPosition<STAGES> at;''', k)
k = sub('''    BarrierWait(empty + 8 * stage, at.phase ^ 1);
    const int k0 = kt * BK;''', '''    BarrierWait(empty + 8 * stage, at.phase ^ 1);
    if (kt < 16) Mark(26 + kt);
    const int k0 = kt * BK;''', k)
k = sub('''        BarrierWait(full + 8 * at.stage, at.phase);
        const uint64_t desc_a''', '''        BarrierWait(full + 8 * at.stage, at.phase);
        if (threadIdx.x % 128 == 0 && consumer == 0 && step < 16) Mark(8 + step);
        const uint64_t desc_a''', k)
k = sub('''      WgmmaWait<0>();
      release(last_stage);
''', '''      WgmmaWait<0>();
      if (threadIdx.x % 128 == 0 && consumer == 0) Mark(4);
      release(last_stage);
''', k)
k = sub('''            if (leader) TmaStore(map, tile.n * BN + col, row0 + rb * kBoxRows, buf);
          }
        }''', '''            if (leader) TmaStore(map, tile.n * BN + col, row0 + rb * kBoxRows, buf);
          }
        }
        if (leader && consumer == 0) Mark(5);''', k)
k = sub('''    if (TMA_STORE && leader) TmaStoreWaitRead<0>();  // shared memory outlives the stores' reads
''', '''    if (TMA_STORE && leader) TmaStoreWaitRead<0>();  // shared memory outlives the stores' reads
    if (leader && consumer == 0) Mark(6);
''', k)
k = sub('''  if constexpr (SPLIT_K > 1) ClusterSync();
}''', '''  if constexpr (SPLIT_K > 1) ClusterSync();
  if (threadIdx.x == 128) Mark(7);
  if (threadIdx.x == 0) Mark(42);
}''', k)
(out / "hopper_gemm_trace.cu").write_text(k)
h = (root / "bench/hopper_gemm/gemm_vs_cublas.cu").read_text()
h = sub('#include "../../examples/cuda/check/cuda_check.h"', '#include "' + str(root / "examples/cuda/check/cuda_check.h") + '"', h)
h = sub('#include "../../examples/cuda/hopper_gemm/hopper_gemm.cu"', '#include "hopper_gemm_trace.cu"', h)
h = sub('''          const bool repeatable = got == first;''', '''          const bool repeatable = got == first;
          if (std::getenv("TRACE")) {
            const int blocks = 132;
            unsigned long long* dtrace;
            CHECK_CUDA(cudaMalloc(&dtrace, blocks * 64 * 8));
            for (int rep = 0; rep < 5; ++rep) {
              CHECK_CUDA(cudaMemset(dtrace, 0, blocks * 64 * 8));
              CHECK_CUDA(cudaMemcpyToSymbol(hg_trace, &dtrace, sizeof dtrace));
              CHECK_CUDA(cudaMemsetAsync(timing.flush, rep, timing.flush_bytes, stream));
              cudaEvent_t e0, e1;
              CHECK_CUDA(cudaEventCreate(&e0)); CHECK_CUDA(cudaEventCreate(&e1));
              CHECK_CUDA(cudaEventRecord(e0, stream));
              run();
              CHECK_CUDA(cudaEventRecord(e1, stream));
              CHECK_CUDA(cudaStreamSynchronize(stream));
              float ms = 0; CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
              std::vector<unsigned long long> t(blocks * 64);
              CHECK_CUDA(cudaMemcpy(t.data(), dtrace, t.size() * 8, cudaMemcpyDeviceToHost));
              unsigned long long* none = nullptr;
              CHECK_CUDA(cudaMemcpyToSymbol(hg_trace, &none, sizeof none));
              for (int b = 0; b < blocks; ++b) {
                if (t[b * 64] == 0) continue;
                std::printf("TRACE %s %s %s %d event_us=%.3f block=%d", shape_text, dtype.c_str(),
                            v.config.Text().c_str(), rep, ms * 1000, b);
                for (int i = 0; i < 45; ++i) std::printf(" %llu", t[b * 64 + i]);
                std::printf("\\n");
              }
            }
            CHECK_CUDA(cudaFree(dtrace));
          }''', h)
(out / "gemm_trace.cu").write_text(h)
