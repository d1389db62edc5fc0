// The configurations a strategy has proposed or been told about: one bit per
// configuration of the space.
#pragma once

#include <cstdint>
#include <vector>

#include "search/space.h"

namespace tf::search {

class ProposedSet {
 public:
  explicit ProposedSet(size_t space_size) : bits_((space_size + 63) / 64), size_(space_size) {}

  bool Contains(ConfigId id) const { return bits_[id / 64] >> (id % 64) & 1; }
  // False when it was already there.
  bool Add(ConfigId id) {
    uint64_t& word = bits_[id / 64];
    const uint64_t bit = uint64_t{1} << (id % 64);
    if (word & bit) return false;
    word |= bit;
    ++count_;
    return true;
  }
  size_t count() const { return count_; }
  bool full() const { return count_ == size_; }

 private:
  std::vector<uint64_t> bits_;
  size_t size_;
  size_t count_ = 0;
};

}  // namespace tf::search
