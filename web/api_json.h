// The dashboard's JSON is the shapes `tunefleet ... --json` prints
// (client/json_format.h; a job is client::JobJson), so the page, scripts and
// the CLI read one format; these add what only the coordinator knows: when
// each result was recorded, and the leases each device holds.
#pragma once

#include <functional>
#include <vector>

#include "client/json_format.h"
#include "coordinator/coordinator.h"

namespace tf::web {

// client::ResultJson and recorded_unix_ms.
client::Json ResultJson(const coordinator::Coordinator::RecordedResult& recorded);
// client::WorkerJson per worker, each device with the leases it holds
// (lease_id, job_id, kernel, candidates, granted_unix_ms, backup); job_id and
// kernel are null for a job whose submitter's token `shows_job` refuses.
client::Json WorkersJson(const std::vector<tunefleet::v1::WorkerInfo>& workers,
                         const coordinator::Activity& activity,
                         const std::function<bool(int64_t owner_token)>& shows_job);

}  // namespace tf::web
