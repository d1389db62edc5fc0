// Configurations one parameter away from a configuration: the same values
// but one, in the space. Nearest first: an ordinal parameter's adjacent
// values before farther ones; any other value of a categorical parameter is
// one step away.
#pragma once

#include <vector>

#include "search/space.h"

namespace tf::search {

struct Neighbour {
  ConfigId id;
  uint32_t steps;  // index distance on the parameter that differs (1 for categorical)
};

// Neighbours of `id` at most `max_steps` away, sorted by steps (stable in
// parameter order).
std::vector<Neighbour> Neighbours(const Space& space, ConfigId id, uint32_t max_steps);

}  // namespace tf::search
