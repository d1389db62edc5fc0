// Two configurations of one kernel: V=0 exact but slow, V=1 fast but off by
// 1e-3 of each value, right under a tolerance of 1e-2 and wrong under 1e-6.
#include <chrono>
#include <cstdint>

template <int V>
void approx(const float* in, float* out, int64_t n) {
  if (V == 0) {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
    while (std::chrono::steady_clock::now() < until) {
    }
  }
  const float scale = V == 0 ? 2.0f : 2.002f;
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] * scale;
}

void approx_reference(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] * 2.0f;
}
