// Results in the T4 format (Kernel Tuner's T4 1.0.0 results schema,
// kernel_tuner/schema/T4/1.0.0/results-schema.json; checked by
// tests/unit/t4_format_test.cc against a copy in tests/data/), so that other
// tools read TuneFleet's results. Each candidate with an outcome is one
// result:
//   configuration  the parameters, by name
//   problem        the problem variables (an addition: T4 has one problem
//                  per file, a TuneFleet job may have several)
//   invalidity     correct, compile, runtime, correctness (wrong result),
//                  timeout, or constraints (pruned: over a device limit or
//                  spilling under forbid_spills, never run)
//   correctness    1 when correct, else 0
//   objectives     ["time"], and measurements: time (the median), time_p10,
//                  time_p90, time_min in ms, and GFLOP/s when the spec counts
//                  flops. TuneFleet keeps statistics, not each run, so
//                  times.runtimes is left out; `tunefleet import results`
//                  reads the statistics back (search/recorded_space.h).
#pragma once

#include <vector>

#include "client/json_format.h"

namespace tf::client {

Json T4Results(const std::vector<v1::CandidateResult>& results);

}  // namespace tf::client
