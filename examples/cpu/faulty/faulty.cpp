// A kernel that misbehaves on purpose, one way per MODE, for testing fault
// containment: 1 crashes, 2 never returns, 3 computes a wrong answer; the
// other modes are correct.
#include <cstdint>

namespace {
int* volatile null_pointer = nullptr;  // volatile: the store is really made
}

template <int MODE>
void add(const float* x, const float* y, float* z, int64_t n) {
  if (MODE == 1) *null_pointer = 1;
  if (MODE == 2) {
    for (;;) asm volatile("");
  }
  for (int64_t i = 0; i < n; ++i) z[i] = x[i] + y[i];
  if (MODE == 3) z[n / 2] += 1;
}

void add_reference(const float* x, const float* y, float* z, int64_t n) {
  for (int64_t i = 0; i < n; ++i) z[i] = x[i] + y[i];
}
