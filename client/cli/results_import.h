// `tunefleet import results`: a recorded tuning run (search/recorded_space.h:
// a Kernel Tuner cache file or a T4 results file) as the coordinator's
// ImportResults request. Every recorded configuration is kept: an OK one
// with its timing (search/recorded_timing.h), a failure with its kind
// (compile, runtime, wrong result, timeout; Kernel Tuner's invalid
// configurations as pruned).
#pragma once

#include <string>

#include "common/status.h"
#include "search/recorded_space.h"
#include "tunefleet/v1/results.pb.h"

namespace tf::cli {

// `device`: the device recorded on; empty: as the file says, else the file's
// name. Errors name the file and the configuration: a value that is neither
// an integer nor a string (TuneFleet parameters are one or the other).
Result<::tunefleet::v1::ImportResultsRequest> ImportRequestFromRecording(
    const search::RecordedSpace& recording, const std::string& kernel,
    const std::string& device_class, const ::tunefleet::v1::Problem& problem,
    const std::string& device);

}  // namespace tf::cli
