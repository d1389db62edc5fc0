// A kernel whose run time is its parameter: candidates last long enough for
// fault tests to strike while a lease is in flight.
#include <chrono>
#include <cstdint>

template <int MS>
void spin(const float* in, float* out, int64_t n) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(MS);
  while (std::chrono::steady_clock::now() < until) {
  }
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] * 2.0f;
}

void spin_reference(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] * 2.0f;
}
