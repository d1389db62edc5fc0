// What the coordinator's files share about jobs: the states that end a job,
// the results that count as failures, and a spec's problems by key.
#pragma once

#include <map>
#include <string>

#include "kernelspec/config.h"
#include "tunefleet/v1/common.pb.h"
#include "tunefleet/v1/spec.pb.h"
#include "tunefleet/v1/tunefleet.pb.h"

namespace tf::coordinator {

namespace v1 = ::tunefleet::v1;

inline bool IsTerminal(v1::JobState state) {
  return state == v1::JOB_STATE_SUCCEEDED || state == v1::JOB_STATE_FAILED ||
         state == v1::JOB_STATE_CANCELLED;
}

inline bool IsFailure(v1::ResultStatus status) {
  return status != v1::RESULT_STATUS_OK && status != v1::RESULT_STATUS_EARLY_STOPPED;
}

inline std::map<std::string, int> ProblemIndex(const v1::KernelSpec& spec) {
  std::map<std::string, int> index;
  for (int i = 0; i < spec.problems_size(); ++i) {
    index.emplace(kernelspec::ProblemKey(spec.problems(i)), i);
  }
  return index;
}

}  // namespace tf::coordinator
