// Tiled single-precision GEMM for CPUs: C = A * B, all row-major, A is MxK,
// B is KxN, C is MxN.
//
// Knobs: BM x BN is the tile of C kept hot in cache, BK the slice of K
// streamed through it, and U the rows of A handled together by the
// micro-kernel, so that each row of B loaded from cache feeds U rows of C
// (register blocking). The inner j loop is left to the compiler to vectorise.
#include <algorithm>
#include <cstdint>

template <int BM, int BN, int BK, int U>
void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  std::fill(C, C + M * N, 0.0f);
  for (int64_t i0 = 0; i0 < M; i0 += BM) {
    const int64_t i_end = std::min<int64_t>(i0 + BM, M);
    for (int64_t j0 = 0; j0 < N; j0 += BN) {
      const int64_t j_end = std::min<int64_t>(j0 + BN, N);
      for (int64_t k0 = 0; k0 < K; k0 += BK) {
        const int64_t k_end = std::min<int64_t>(k0 + BK, K);
        int64_t i = i0;
        for (; i + U <= i_end; i += U) {
          for (int64_t k = k0; k < k_end; ++k) {
            float a[U];
            for (int u = 0; u < U; ++u) a[u] = A[(i + u) * K + k];
            const float* b = B + k * N;
            for (int u = 0; u < U; ++u) {
              float* c = C + (i + u) * N;
#pragma GCC ivdep
              for (int64_t j = j0; j < j_end; ++j) c[j] += a[u] * b[j];
            }
          }
        }
        for (; i < i_end; ++i) {  // rows left over when U does not divide the tile
          for (int64_t k = k0; k < k_end; ++k) {
            const float a = A[i * K + k];
            const float* b = B + k * N;
            float* c = C + i * N;
            for (int64_t j = j0; j < j_end; ++j) c[j] += a * b[j];
          }
        }
      }
    }
  }
}

// The plain triple loop, accumulating in double: the answer candidates are
// checked against.
void gemm_reference(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += double(A[i * K + k]) * B[k * N + j];
      C[i * N + j] = static_cast<float>(sum);
    }
  }
}
