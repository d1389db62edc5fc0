// How far apart two problem shapes are, for answering an untuned problem with
// the nearest tuned one: the sum over variables of |log2(a/b)| (values under 1
// counted as 1), so that doubling any one size costs 1 wherever it starts.
// Infinite when the two do not have the same variable names.
#pragma once

#include "tunefleet/v1/spec.pb.h"

namespace tf::kernelspec {

double ProblemDistance(const ::tunefleet::v1::Problem& a, const ::tunefleet::v1::Problem& b);

}  // namespace tf::kernelspec
