// `tunefleet import results`: a recorded tuning run (search/recorded_space.h:
// a Kernel Tuner cache file or a T4 results file) as the coordinator's
// ImportResults request. Every recorded configuration is kept: an OK one
// with its timing (search/recorded_timing.h), a failure with its kind
// (compile, runtime, wrong result, timeout; Kernel Tuner's invalid
// configurations as pruned).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "search/recorded_space.h"
#include "tunefleet/v1/results.pb.h"

namespace tf::cli {

// The requests that import one file's recordings (search::ReadRecordedSpaces),
// one per problem. `problem` (NAME=VALUE,...; may be empty where the file
// names its problems) picks the recording of that problem, or names the
// problem of a file that names none. `device`: the device recorded on; empty:
// as the file says, else the file's name. Errors name the file and what is
// wrong: a problem the file does not record or does not name, a value that is
// neither an integer nor a string (TuneFleet parameters are one or the other).
Result<std::vector<::tunefleet::v1::ImportResultsRequest>> ImportRequests(
    const std::vector<search::RecordedSpace>& recordings, const std::string& kernel,
    const std::string& device_class, const std::string& problem, const std::string& device);

}  // namespace tf::cli
