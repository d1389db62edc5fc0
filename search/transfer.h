// Warm starts from other tuning runs of the same kernel: on other device
// classes, or on other problems. Each source is one run's results by
// configuration key; a configuration's worth in a source is the fraction of
// that source's optimum it reached (best time / its time; 0 for a failure,
// and for a configuration the source did not measure). The configurations
// to seed a new run with are the `count` best ranked by their mean worth over
// the sources, so that a configuration good everywhere goes before one that
// is the best of one source and slow on the others (docs/search.md, "Warm
// starts from other devices").
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tf::search {

// How many configurations the coordinator seeds a job with from other runs
// (and search_eval's --warm-count): chosen on the recorded convolution spaces,
// docs/search.md.
inline constexpr size_t kWarmStartConfigs = 3;

// A configuration key and its time (lower is better); std::nullopt: failed.
using KeyedResult = std::pair<std::string, std::optional<double>>;

// At most `count` keys, best first; ties keep the order in which the keys
// first appear in the sources. Sources without a success are left out.
std::vector<std::string> RankForWarmStart(const std::vector<std::vector<KeyedResult>>& sources,
                                          size_t count);

}  // namespace tf::search
