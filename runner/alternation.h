// Timing finalists in alternation, as the examples' checks time a kernel
// against the vendor's library: round after round every candidate
// is timed once briefly (a sample), so that the drift of the device's clock
// and temperature over the re-timing charges them all alike, and each round
// starts one candidate further than the last (A B C D, B C D A, ...), so that
// none always runs first. A candidate's figure is the median of its samples'
// medians: one sample taken while the device throttled moves it little.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "common/status.h"
#include "tunefleet/v1/common.pb.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::runner {

namespace v1 = ::tunefleet::v1;

inline constexpr int kAlternationRounds = 20;
// A finalist's samples together time it for this many times the spec's
// benchmark.min_time_ms.
inline constexpr double kAlternationTimeFactor = 5;

// The candidates (indices below `count`) in the order round `round` times them.
std::vector<size_t> RoundOrder(size_t count, size_t round);

// One sample: one warm-up run (the candidate before it left its own code and
// data in the caches) and timed runs for the sample's share of
// kAlternationTimeFactor * min_time_ms, at least one; flush as the spec says.
v1::BenchmarkSettings SampleSettings(const v1::BenchmarkSettings& spec);

// `rounds` rounds over `count` candidates; `sample(i)` times candidate i
// once. Per candidate: median, p10, p90, min and mean of its samples'
// medians, `repeats` the samples, clock and temperature as its last sample
// read them; or the error of the sample that dropped it from the rounds.
std::vector<Result<v1::TimingStats>> TimeInAlternation(
    size_t count, int rounds, const std::function<Result<v1::TimingStats>(size_t)>& sample);

}  // namespace tf::runner
