// How far apart two problem shapes are, for answering an untuned problem with
// the nearest tuned one: the sum over variables of |s(a) - s(b)|, where s is
// ProblemScale, so that doubling any one size costs 1 wherever it starts.
// Infinite when the two do not have the same variable names.
#pragma once

#include <cstdint>

#include "tunefleet/v1/spec.pb.h"

namespace tf::kernelspec {

// log2(value) from 1 up, value - 1 below: continuous at 1, and values under 1
// (an offset, a zero-sized dimension) stay apart by their difference.
double ProblemScale(int64_t value);

// The terms are summed in the order of the variables' names, so that the
// order a problem lists them in changes nothing.
double ProblemDistance(const ::tunefleet::v1::Problem& a, const ::tunefleet::v1::Problem& b);

// Distances this close are ties (the fastest answers): sums of different
// logarithms that are equal in exact arithmetic differ in the last bits.
inline constexpr double kProblemDistanceTie = 1e-9;

// Whether a problem at `distance` answers rather than the best so far, at
// `best_distance` with `best_ns`: nearer, or as near and faster.
inline bool AnswersBefore(double distance, double median_ns, double best_distance, double best_ns) {
  return distance < best_distance - kProblemDistanceTie ||
         (distance <= best_distance + kProblemDistanceTie && median_ns < best_ns);
}

}  // namespace tf::kernelspec
