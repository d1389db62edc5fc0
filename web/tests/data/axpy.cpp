// z = 2x + y in blocks of BLOCK elements, the inner loop unrolled UNROLL times.
#include <cstdint>

template <int UNROLL, int BLOCK>
void axpy(const float* x, const float* y, float* z, int64_t n) {
  static_assert(UNROLL != 3, "UNROLL=3 is not supported: use a power of two");
  for (int64_t start = 0; start < n; start += BLOCK) {
    const int64_t end = start + BLOCK < n ? start + BLOCK : n;
    int64_t i = start;
    for (; i + UNROLL <= end; i += UNROLL) {
#pragma GCC unroll 8
      for (int u = 0; u < UNROLL; ++u) z[i + u] = 2.0f * x[i + u] + y[i + u];
    }
    for (; i < end; ++i) z[i] = 2.0f * x[i] + y[i];
  }
}

void axpy_reference(const float* x, const float* y, float* z, int64_t n) {
  for (int64_t i = 0; i < n; ++i) z[i] = 2.0f * x[i] + y[i];
}
