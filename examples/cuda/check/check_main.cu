// Standalone correctness and speed check of the CUDA examples on one GPU,
// outside TuneFleet: a handful of configurations of each kernel against its
// reference on random data, timed with CUDA events, the GEMM also against
// cuBLAS. Not part of the CMake build; see ../README.md for the command line.

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "../gemm/gemm.cu"
#include "../transpose/transpose.cu"
#include "cuda_check.h"

namespace {

constexpr int kSamples = 15;

std::mt19937 rng(12345);

std::vector<float> RandomFloats(size_t n) {
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

template <class T>
T* Upload(const std::vector<T>& host) {
  T* dev = nullptr;
  CHECK_CUDA(cudaMalloc(&dev, host.size() * sizeof(T)));
  CHECK_CUDA(cudaMemcpy(dev, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return dev;
}

template <class T>
std::vector<T> Download(const T* dev, size_t n) {
  std::vector<T> host(n);
  CHECK_CUDA(cudaMemcpy(host.data(), dev, n * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

// Fills with 0xFF bytes (NaN for floats): an element the kernel never wrote fails the check.
void Poison(void* dev, size_t bytes) { CHECK_CUDA(cudaMemset(dev, 0xFF, bytes)); }

// ---- transpose ----

struct TransposeCase {
  int64_t rows, cols;
  const float* in;
  float* out;
  std::vector<float> expected;
};

template <int TILE, int ROWS, int PAD>
void RunTranspose(const TransposeCase& c) {
  const dim3 grid((c.cols + TILE - 1) / TILE, (c.rows + TILE - 1) / TILE), block(TILE, ROWS);
  auto launch = [&] { transpose<TILE, ROWS, PAD><<<grid, block>>>(c.in, c.out, c.rows, c.cols); };
  const size_t n = size_t(c.rows) * c.cols;
  Poison(c.out, n * sizeof(float));
  launch();
  CHECK_CUDA(cudaGetLastError());
  const bool ok = std::memcmp(Download(c.out, n).data(), c.expected.data(), n * sizeof(float)) == 0;
  const double ms = MedianMs({kSamples, 10}, launch);
  std::printf("transpose %5lldx%-5lld TILE=%-2d ROWS=%-2d PAD=%d  %s  %8.4f ms  %6.0f GB/s\n",
              (long long)c.rows, (long long)c.cols, TILE, ROWS, PAD, ok ? "ok  " : "FAIL", ms,
              2.0 * n * sizeof(float) / ms / 1e6);
}

void CheckTransposes() {
  // The ceiling: a device-to-device copy of the same bytes (read + write).
  const size_t copy_bytes = size_t(1) << 30;
  void *src, *dst;
  CHECK_CUDA(cudaMalloc(&src, copy_bytes));
  CHECK_CUDA(cudaMalloc(&dst, copy_bytes));
  CHECK_CUDA(cudaMemset(src, 1, copy_bytes));
  const double copy_ms = MedianMs({kSamples, 3}, [&] {
    CHECK_CUDA(cudaMemcpyAsync(dst, src, copy_bytes, cudaMemcpyDeviceToDevice));
  });
  std::printf("device copy 1 GiB: %.3f ms, %.0f GB/s (read + write)\n", copy_ms,
              2.0 * copy_bytes / copy_ms / 1e6);
  CHECK_CUDA(cudaFree(src));
  CHECK_CUDA(cudaFree(dst));

  for (std::pair<int64_t, int64_t> shape :
       {std::pair<int64_t, int64_t>{8192, 8192}, {4096, 16384}}) {
    const int64_t rows = shape.first, cols = shape.second;
    const size_t n = size_t(rows) * cols;
    std::vector<float> in_host = RandomFloats(n);
    TransposeCase c{rows, cols, Upload(in_host), nullptr, {}};
    CHECK_CUDA(cudaMalloc(&c.out, n * sizeof(float)));
    // The kernel reference is checked against the host once, then serves as the expectation.
    transpose_reference<<<dim3((cols + 31) / 32, (rows + 7) / 8), dim3(32, 8)>>>(c.in, c.out, rows,
                                                                                 cols);
    CHECK_CUDA(cudaGetLastError());
    c.expected = Download(c.out, n);
    for (int64_t r = 0; r < rows; r += 97) {
      for (int64_t col = 0; col < cols; col += 89) {
        if (c.expected[col * rows + r] != in_host[r * cols + col]) {
          std::printf("transpose_reference wrong at (%lld, %lld)\n", (long long)r, (long long)col);
          std::exit(1);
        }
      }
    }
    RunTranspose<16, 4, 1>(c);
    RunTranspose<16, 16, 1>(c);
    RunTranspose<32, 8, 0>(c);
    RunTranspose<32, 8, 1>(c);
    RunTranspose<32, 4, 1>(c);
    RunTranspose<32, 16, 1>(c);
    RunTranspose<64, 4, 1>(c);
    RunTranspose<64, 8, 1>(c);
    RunTranspose<64, 16, 0>(c);
    RunTranspose<64, 16, 1>(c);
    CHECK_CUDA(cudaFree(const_cast<float*>(c.in)));
    CHECK_CUDA(cudaFree(c.out));
  }
}

// ---- GEMM ----

struct GemmCase {
  int64_t m, n, k;
  const __half *a, *b;
  float* c;
  std::vector<float> expected;
  double cublas_ms;
};

// Counts elements outside rtol = atol = 1e-2 (the spec's tolerance); NaN never passes.
void CompareGemm(const GemmCase& g, const std::vector<float>& got, int* bad, double* max_err) {
  *bad = 0;
  *max_err = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(double(got[i]) - g.expected[i]);
    if (!(err <= 1e-2 + 1e-2 * std::fabs(g.expected[i]))) ++*bad;
    if (!(err <= *max_err)) *max_err = err;
  }
}

template <int BM, int BN, int BK, int STAGES, int WARPS_M, int WARPS_N>
void RunGemm(const GemmCase& g, int max_smem) {
  const int smem = (BM + BN) * BK * 2 * STAGES;
  if (g.m % BM || g.n % BN || g.k % BK || smem > max_smem) return;
  auto kernel = gemm<BM, BN, BK, STAGES, WARPS_M, WARPS_N>;
  CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const dim3 grid(g.n / BN, g.m / BM), block(WARPS_M * WARPS_N * 32);
  auto launch = [&] { kernel<<<grid, block, smem>>>(g.a, g.b, g.c, g.m, g.n, g.k); };
  Poison(g.c, size_t(g.m) * g.n * sizeof(float));
  launch();
  CHECK_CUDA(cudaGetLastError());
  int bad;
  double max_err;
  CompareGemm(g, Download(g.c, size_t(g.m) * g.n), &bad, &max_err);
  const double ms = MedianMs({kSamples, 10}, launch);
  std::printf(
      "gemm %5lldx%-5lldx%-5lld %3dx%3dx%2d S%d W%dx%d  %s bad=%d maxerr=%.1e  %8.4f ms  %5.0f "
      "TFLOP/s  %.2f of cuBLAS\n",
      (long long)g.m, (long long)g.n, (long long)g.k, BM, BN, BK, STAGES, WARPS_M, WARPS_N,
      bad == 0 ? "ok  " : "FAIL", bad, max_err, ms, 2.0 * g.m * g.n * g.k / ms / 1e9,
      g.cublas_ms / ms);
}

void CheckGemms(int max_smem) {
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  struct Shape {
    int64_t m, n, k;
  };
  for (Shape shape : {Shape{4096, 4096, 4096}, Shape{1024, 1024, 1024}, Shape{8192, 1024, 4096}}) {
    const int64_t m = shape.m, n = shape.n, k = shape.k;
    auto to_half = [](const std::vector<float>& v) {
      std::vector<__half> h(v.size());
      for (size_t i = 0; i < v.size(); ++i) h[i] = __float2half(v[i]);
      return h;
    };
    GemmCase g{
        m,       n,  k, Upload(to_half(RandomFloats(m * k))), Upload(to_half(RandomFloats(n * k))),
        nullptr, {}, 0};
    CHECK_CUDA(cudaMalloc(&g.c, m * n * sizeof(float)));
    Poison(g.c, m * n * sizeof(float));
    gemm_reference<<<dim3((n + 15) / 16, (m + 15) / 16), dim3(16, 16)>>>(g.a, g.b, g.c, m, n, k);
    CHECK_CUDA(cudaGetLastError());
    g.expected = Download(g.c, m * n);
    // Spot-check the reference on the host in double precision.
    std::vector<__half> a = Download(g.a, m * k), b = Download(g.b, n * k);
    for (int64_t i = 0; i < m; i += 331) {
      for (int64_t j = 0; j < n; j += 257) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += double(__half2float(a[i * k + p])) * __half2float(b[j * k + p]);
        if (std::fabs(sum - g.expected[i * n + j]) > 1e-3 + 1e-4 * std::fabs(sum)) {
          std::printf("gemm_reference wrong at (%lld, %lld): %f vs %f\n", (long long)i,
                      (long long)j, g.expected[i * n + j], sum);
          std::exit(1);
        }
      }
    }

    // Row-major C = A * B^T is column-major C^T = B^T' * A with B (N x K row-major) read
    // transposed: cuBLAS sees C as N x M.
    const float alpha = 1, beta = 0;
    auto cublas = [&] {
      CHECK_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, g.b, CUDA_R_16F,
                                k, g.a, CUDA_R_16F, k, &beta, g.c, CUDA_R_32F, n,
                                CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    };
    Poison(g.c, m * n * sizeof(float));
    cublas();
    int bad;
    double max_err;
    CompareGemm(g, Download(g.c, m * n), &bad, &max_err);
    g.cublas_ms = MedianMs({kSamples, 10}, cublas);
    std::printf("cublas %5lldx%-5lldx%-5lld  %s bad=%d maxerr=%.1e  %8.4f ms  %5.0f TFLOP/s\n",
                (long long)m, (long long)n, (long long)k, bad == 0 ? "ok  " : "FAIL", bad, max_err,
                g.cublas_ms, 2.0 * m * n * k / g.cublas_ms / 1e9);

    RunGemm<64, 64, 32, 4, 2, 2>(g, max_smem);
    RunGemm<64, 128, 32, 4, 2, 2>(g, max_smem);
    RunGemm<128, 128, 32, 3, 2, 2>(g, max_smem);
    RunGemm<128, 128, 32, 4, 2, 2>(g, max_smem);
    RunGemm<128, 128, 64, 3, 2, 2>(g, max_smem);
    RunGemm<128, 128, 32, 4, 2, 4>(g, max_smem);
    RunGemm<128, 256, 32, 3, 2, 4>(g, max_smem);
    RunGemm<128, 256, 32, 4, 2, 4>(g, max_smem);
    RunGemm<128, 256, 64, 3, 2, 4>(g, max_smem);
    RunGemm<256, 128, 32, 3, 4, 2>(g, max_smem);
    RunGemm<256, 128, 32, 4, 4, 2>(g, max_smem);
    RunGemm<256, 128, 64, 3, 4, 2>(g, max_smem);
    RunGemm<256, 128, 64, 2, 4, 2>(g, max_smem);
    CHECK_CUDA(cudaFree(const_cast<__half*>(g.a)));
    CHECK_CUDA(cudaFree(const_cast<__half*>(g.b)));
    CHECK_CUDA(cudaFree(g.c));
  }
  CHECK_CUBLAS(cublasDestroy(handle));
}

}  // namespace

int main() {
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, sm_%d%d, %d SMs, %.0f MB L2, %zu bytes shared memory per block (opt-in)\n",
              prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.l2CacheSize / 1e6,
              prop.sharedMemPerBlockOptin);
  CheckTransposes();
  CheckGemms(static_cast<int>(prop.sharedMemPerBlockOptin));
  return 0;
}
