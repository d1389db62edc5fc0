#include "search/neighbours.h"

#include <algorithm>

namespace tf::search {

std::vector<Neighbour> Neighbours(const Space& space, ConfigId id, uint32_t max_steps) {
  std::vector<Neighbour> found;
  std::vector<uint32_t> tuple(space.config(id), space.config(id) + space.num_params());
  for (size_t p = 0; p < space.num_params(); ++p) {
    const Parameter& param = space.params()[p];
    const uint32_t own = tuple[p];
    const bool ordinal = param.ordinal();
    for (uint32_t v = 0; v < param.values.size(); ++v) {
      const uint32_t steps = !ordinal ? 1 : (v > own ? v - own : own - v);
      if (v == own || steps > max_steps) continue;
      tuple[p] = v;
      if (std::optional<ConfigId> n = space.Find(tuple.data())) found.push_back({*n, steps});
    }
    tuple[p] = own;
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const Neighbour& a, const Neighbour& b) { return a.steps < b.steps; });
  return found;
}

}  // namespace tf::search
