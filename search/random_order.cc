#include "search/random_order.h"

namespace tf::search {

std::optional<ConfigId> RandomOrder::Next() {
  while (remaining_ > 0) {
    // Uniform in [0, remaining_) from mt19937_64's sequence alone, so a seed
    // gives the same order with any standard library.
    const uint64_t n = remaining_;
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do {
      x = rng_();
    } while (x >= limit);
    const size_t pick = x % n;
    const ConfigId id = At(pick);
    const ConfigId last = At(remaining_ - 1);
    if (pick != remaining_ - 1) swapped_[pick] = last;
    swapped_.erase(remaining_ - 1);
    --remaining_;
    if (taken_.Add(id)) return id;  // else it was skipped: draw again
  }
  return std::nullopt;
}

}  // namespace tf::search
