// A kernel with one configuration that does not build: compilation on the
// worker host must isolate it and run the rest.
#include <cstdint>

template <int U>
void scale(const float* in, float* out, int64_t n) {
  static_assert(U != 3, "U=3 does not build");
  for (int64_t i = 0; i < n; i += U) {
    for (int64_t j = i; j < i + U && j < n; ++j) out[j] = in[j] * 2.0f;
  }
}

void scale_reference(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] * 2.0f;
}
