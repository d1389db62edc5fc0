// A recorded result's timing as TuneFleet keeps timings: the recording's
// objective (Kernel Tuner: the mean of its runs) as the median and mean, and
// p10, p90 and min over its runs where they were recorded, else as recorded
// (RecordedResult::p10_ms, ...), else the objective. Used alike by
// replay devices and by `tunefleet import results`, so that a replayed and an
// imported recording time the same. Inline: tf_search itself does not link
// the protobuf messages; its users that do include this.
#pragma once

#include <algorithm>
#include <vector>

#include "search/recorded_space.h"
#include "tunefleet/v1/common.pb.h"

namespace tf::search {

inline ::tunefleet::v1::TimingStats RecordedTiming(const RecordedResult& r) {
  ::tunefleet::v1::TimingStats t;
  std::vector<double> runs = r.runtimes_ms;
  std::sort(runs.begin(), runs.end());
  auto at = [&](double q) { return runs[static_cast<size_t>(q * (runs.size() - 1) + 0.5)]; };
  auto recorded = [&](double ms) { return ms > 0 ? ms : r.time_ms; };
  t.set_median_ns(r.time_ms * 1e6);
  t.set_p10_ns((runs.empty() ? recorded(r.p10_ms) : at(0.1)) * 1e6);
  t.set_p90_ns((runs.empty() ? recorded(r.p90_ms) : at(0.9)) * 1e6);
  t.set_min_ns((runs.empty() ? recorded(r.min_ms) : runs.front()) * 1e6);
  t.set_mean_ns(r.time_ms * 1e6);
  t.set_repeats(std::max<int>(1, static_cast<int>(runs.size())));
  return t;
}

}  // namespace tf::search
