// A uniformly random order of the configurations 0..n-1, drawn lazily (a
// Fisher-Yates shuffle whose swaps are kept in a hash map), so drawing k of
// 10^6 costs O(k) time and memory. Configurations marked with Skip are never
// drawn. Deterministic for a seed.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <unordered_map>

#include "search/proposed_set.h"
#include "search/space.h"

namespace tf::search {

class RandomOrder {
 public:
  RandomOrder(size_t n, uint64_t seed) : rng_(seed), taken_(n), remaining_(n) {}

  // The next configuration not drawn nor skipped; nullopt when none is left.
  std::optional<ConfigId> Next();
  // Marks `id` as taken without drawing it.
  void Skip(ConfigId id) { taken_.Add(id); }
  bool Taken(ConfigId id) const { return taken_.Contains(id); }
  std::mt19937_64& rng() { return rng_; }

 private:
  ConfigId At(size_t i) const {
    auto it = swapped_.find(i);
    return it == swapped_.end() ? static_cast<ConfigId>(i) : it->second;
  }

  std::mt19937_64 rng_;
  ProposedSet taken_;
  std::unordered_map<size_t, ConfigId> swapped_;  // position -> id, where not the identity
  size_t remaining_;                              // positions [0, remaining_) are not drawn yet
};

}  // namespace tf::search
