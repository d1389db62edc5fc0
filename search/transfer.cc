#include "search/transfer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace tf::search {

WarmStartRanking::WarmStartRanking(const std::vector<std::vector<KeyedResult>>& sources)
    : in_source_(sources.size()) {
  std::unordered_map<std::string, size_t> index;
  size_t position = 0;
  for (size_t s = 0; s < sources.size(); ++s) {
    double best = INFINITY;
    for (const auto& [key, time] : sources[s]) {
      if (time && *time > 0) best = std::min(best, *time);
    }
    if (!std::isfinite(best)) continue;
    for (const auto& [key, time] : sources[s]) {
      auto [it, added] = index.emplace(key, candidates_.size());
      if (added) candidates_.push_back({key, 0, {}});
      Candidate& candidate = candidates_[it->second];
      if (candidate.worths.empty() || candidate.worths.back().source != s) {
        candidate.worths.push_back({s, position, 0});
        in_source_[s].push_back(it->second);
      }
      ++position;
      // A configuration measured twice in one run counts at its best.
      double& worth = candidate.worths.back().worth;
      if (time && *time > 0) worth = std::max(worth, best / *time);
    }
  }
  for (Candidate& candidate : candidates_) {
    for (const Worth& w : candidate.worths) candidate.sum += w.worth;
  }
}

std::vector<std::string> WarmStartRanking::Rank(size_t count,
                                                std::optional<size_t> left_out) const {
  struct Ranked {
    double sum;
    size_t first_seen;
    const std::string* key;
  };
  std::vector<Ranked> ranked;
  ranked.reserve(candidates_.size());
  for (const Candidate& c : candidates_) {
    ranked.push_back({c.sum, c.worths.front().first_seen, &c.key});
  }
  // Only the left-out source's candidates change. Their sums are added again
  // in source order without it, so that each is the sum ranking the other
  // sources alone gives, to the last bit, and ties stay ties.
  if (left_out && *left_out < in_source_.size()) {
    for (size_t i : in_source_[*left_out]) {
      Ranked& r = ranked[i];
      r.sum = 0;
      r.first_seen = std::numeric_limits<size_t>::max();
      for (const Worth& w : candidates_[i].worths) {
        if (w.source == *left_out) continue;
        r.sum += w.worth;
        r.first_seen = std::min(r.first_seen, w.first_seen);
      }
    }
  }
  std::erase_if(ranked, [](const Ranked& r) { return r.sum <= 0; });
  // The sum orders as the mean over the sources does.
  const auto end = ranked.begin() + std::min(count, ranked.size());
  std::partial_sort(ranked.begin(), end, ranked.end(), [](const Ranked& a, const Ranked& b) {
    return a.sum != b.sum ? a.sum > b.sum : a.first_seen < b.first_seen;
  });
  std::vector<std::string> keys;
  for (auto it = ranked.begin(); it != end; ++it) keys.push_back(*it->key);
  return keys;
}

}  // namespace tf::search
