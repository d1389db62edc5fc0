// The part of a GPU kind's discovery (vendors/device_kinds.h) that is not
// about its driver: which ordinals --devices asks for, and what happens when
// the driver shows fewer GPUs than that, or none. A host without the driver
// or without GPUs has none, logged rather than an error, so that one command
// line serves a mixed fleet; a GPU that --devices names must be there.
// Messages name the GPUs by `vendor` as a person would ("--devices asks for
// VENDOR GPU 3 but ...").
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "runner/device.h"

namespace tf::runner {

// No GPU of `vendor` can be used, because of `why`: when `ordinals` names
// one, an error of `code` "--devices asks for VENDOR GPU N but WHY"
// (Unavailable by default: the driver may not be up yet); else no devices,
// logged as "no VENDOR devices: WHY".
Result<std::vector<Device>> NoGpus(std::string_view vendor, const std::vector<int>& ordinals,
                                   const std::string& why, Code code = Code::kUnavailable);

// `describe(ordinal, index)` makes the device of one GPU, numbered `index`.
using DescribeGpu = std::function<Result<Device>(int ordinal, int index)>;

// The GPUs at `ordinals`, or every one of the `count` the driver shows when
// `ordinals` is empty, in that order, numbered from `first_index`. An ordinal
// outside 0..count-1 is InvalidArgument "--devices asks for VENDOR GPU N but
// this host has COUNT (ordinals 0..COUNT-1)"; the first error of `describe`
// is returned as it is. A driver that shows no GPU is NoGpus's case.
Result<std::vector<Device>> DescribeGpus(std::string_view vendor, const std::vector<int>& ordinals,
                                         int count, int first_index, const DescribeGpu& describe);

}  // namespace tf::runner
