#include "coordinator/finalists.h"

#include <algorithm>
#include <tuple>
#include <utility>

namespace tf::coordinator {

std::vector<int64_t> PickFinalists(std::vector<TimedCandidate> candidates, int count) {
  if (count < 2 || candidates.size() < 2) return {};
  std::sort(candidates.begin(), candidates.end(),
            [](const TimedCandidate& a, const TimedCandidate& b) {
              return std::tie(a.median_ns, a.candidate_id) < std::tie(b.median_ns, b.candidate_id);
            });
  candidates.resize(std::min(candidates.size(), static_cast<size_t>(count)));
  std::vector<int64_t> ids;
  for (const TimedCandidate& c : candidates) ids.push_back(c.candidate_id);
  return ids;
}

std::optional<int64_t> RetimeWinner(const std::vector<v1::CandidateResult>& retimed) {
  const v1::CandidateResult* winner = nullptr;
  for (const v1::CandidateResult& r : retimed) {
    if (r.status() != v1::RESULT_STATUS_OK || !(r.retiming().median_ns() > 0)) continue;
    if (!winner || std::make_pair(r.retiming().median_ns(), r.candidate_id()) <
                       std::make_pair(winner->retiming().median_ns(), winner->candidate_id())) {
      winner = &r;
    }
  }
  if (!winner) return std::nullopt;
  return winner->candidate_id();
}

}  // namespace tf::coordinator
