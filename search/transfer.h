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

// The sources' worths, computed once, to rank from for many new runs, each
// leaving out a source of its own (a job's problem already tuned on its
// device class reuses that run's results and does not transfer them).
class WarmStartRanking {
 public:
  explicit WarmStartRanking(const std::vector<std::vector<KeyedResult>>& sources);

  // At most `count` keys, best first, over every source but `left_out` (an
  // index into the sources); ties keep the order in which the keys first
  // appear in the sources counted. Sources without a success are left out.
  std::vector<std::string> Rank(size_t count, std::optional<size_t> left_out = std::nullopt) const;

 private:
  // One configuration's worth in one source.
  struct Worth {
    size_t source;
    size_t first_seen;  // where its first result in the source stands among all sources' results
    double worth;
  };
  struct Candidate {
    std::string key;
    double sum = 0;             // of the worths, added in source order
    std::vector<Worth> worths;  // in source order
  };

  std::vector<Candidate> candidates_;           // in order of first appearance
  std::vector<std::vector<size_t>> in_source_;  // candidates_ indices, by source
};

}  // namespace tf::search
