// How far apart two problem shapes are, for answering an untuned problem with
// the nearest tuned one: the sum over variables of |log2(a/b)| (values under 1
// counted as 1), so that doubling any one size costs 1 wherever it starts.
// Infinite when the two do not have the same variable names.
#pragma once

#include "tunefleet/v1/spec.pb.h"

namespace tf::kernelspec {

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
