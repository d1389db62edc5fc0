#include "search/transfer.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace tf::search {

std::vector<std::string> RankForWarmStart(const std::vector<std::vector<KeyedResult>>& sources,
                                          size_t count) {
  struct Candidate {
    std::string key;
    double worth = 0;  // summed over the sources
  };
  std::vector<Candidate> candidates;  // in order of first appearance
  std::unordered_map<std::string, size_t> index;
  for (const auto& source : sources) {
    double best = INFINITY;
    for (const auto& [key, time] : source) {
      if (time && *time > 0) best = std::min(best, *time);
    }
    if (!std::isfinite(best)) continue;
    // A configuration measured twice in one run counts at its best.
    std::unordered_map<size_t, double> worth;
    for (const auto& [key, time] : source) {
      auto [it, added] = index.emplace(key, candidates.size());
      if (added) candidates.push_back({key});
      double& w = worth[it->second];
      if (time && *time > 0) w = std::max(w, best / *time);
    }
    for (const auto& [i, w] : worth) candidates[i].worth += w;
  }
  // The sum orders as the mean over the sources does.
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.worth > b.worth; });
  std::vector<std::string> ranked;
  for (const Candidate& c : candidates) {
    if (ranked.size() >= count || c.worth <= 0) break;
    ranked.push_back(c.key);
  }
  return ranked;
}

}  // namespace tf::search
