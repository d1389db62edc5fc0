// Job states as people and scripts see them.
#pragma once

#include "tunefleet/v1/common.pb.h"

namespace tf::client {

namespace v1 = ::tunefleet::v1;

// "queued", "running", "succeeded", "failed", "cancelled"; "unknown" for a
// state this client does not know.
const char* JobStateName(v1::JobState state);
// True once a job can no longer change: succeeded, failed or cancelled.
bool IsTerminal(v1::JobState state);

}  // namespace tf::client
