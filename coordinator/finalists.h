// A job's finalists (Search.finalists): once its search is done, the fastest
// few configurations of each problem are timed again on one device in
// alternation (runner/alternation.h), and the winner is the fastest of that
// re-timing rather than of timings taken one after the other, minutes apart,
// at whatever clock and temperature the device had then.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tunefleet/v1/common.pb.h"

namespace tf::coordinator {

namespace v1 = ::tunefleet::v1;

struct TimedCandidate {
  int64_t candidate_id = 0;
  double median_ns = 0;
};

// The `count` fastest of one problem's OK candidates, by median (then by
// id), fastest first; none when `count` or the candidates are fewer than 2:
// there is nothing to alternate.
std::vector<int64_t> PickFinalists(std::vector<TimedCandidate> candidates, int count);

// The finalist whose re-timing has the lowest median (then the lowest id),
// among the OK results with a re-timing; none when there is none.
std::optional<int64_t> RetimeWinner(const std::vector<v1::CandidateResult>& retimed);

}  // namespace tf::coordinator
