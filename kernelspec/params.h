// The values a tunable parameter takes: its explicit list, or its range
// expanded.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::kernelspec {

namespace v1 = ::tunefleet::v1;

// Enumeration holds every value of every parameter in memory; a range that
// expands beyond this is a mistake in the spec.
inline constexpr uint64_t kMaxParamValues = 1 << 20;

// Number of values without expanding; 0 for an invalid range.
uint64_t ParamSize(const v1::Param& param);

// Errors name the parameter: "params.BM: range step must be > 0, got 0".
Result<std::vector<v1::Value>> ParamValues(const v1::Param& param);

}  // namespace tf::kernelspec
