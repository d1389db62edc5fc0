// Launch cost of an empty kernel of 128 blocks with ~200 KB of shared memory: clusters of 1 vs 2.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>
__global__ void __cluster_dims__(2, 1, 1) empty2() {
  extern __shared__ char s[];
  if (threadIdx.x == 999) s[0] = 0;
}
__global__ void empty1() {
  extern __shared__ char s[];
  if (threadIdx.x == 999) s[0] = 0;
}
template <typename F>
float Median(F launch) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  std::vector<float> v;
  for (int i = 0; i < 200; ++i) {
    cudaEventRecord(a);
    launch();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    v.push_back(ms * 1000);
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
int main() {
  for (int smem : {0, 200 * 1024}) {
    cudaFuncSetAttribute(empty1, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    cudaFuncSetAttribute(empty2, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    for (int r = 0; r < 3; ++r)
      std::printf("smem %6d  cluster1 %.2f us  cluster2 %.2f us\n", smem,
                  Median([&] { empty1<<<128, 256, smem>>>(); }),
                  Median([&] { empty2<<<128, 256, smem>>>(); }));
  }
  std::printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
