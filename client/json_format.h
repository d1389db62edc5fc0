// The JSON that `tunefleet ... --json` prints. Scripts depend on these shapes:
// keys are only ever added. Integers stay numbers, configurations and problems
// are objects keyed by name in spec order, states are lowercase words.
#pragma once

#include <nlohmann/json.hpp>

#include "tunefleet/v1/results.pb.h"
#include "tunefleet/v1/tunefleet.pb.h"

namespace tf::client {

namespace v1 = ::tunefleet::v1;

// Keeps keys in insertion order, so that parameters read in spec order.
using Json = nlohmann::ordered_json;

// "ok", "compile_failed", "runtime_failed", "wrong_result", "timeout",
// "pruned"; "unknown" otherwise.
const char* ResultStatusName(v1::ResultStatus status);

Json ValueJson(const v1::Value& value);
// {"BM": 64, "DT": "half"}
Json ConfigJson(const v1::Config& config);
// {"M": 4096, "N": 4096}
Json ProblemJson(const v1::Problem& problem);
// job_id, kernel, state, device_class, waiting_for (while queued), toolchain,
// fingerprint, priority, candidates_*,
// configurations, builds_done, created/updated_unix_ms, error, best: one
// object per problem with problem, config, candidate_id and the timing keys,
// and problems_without_success (once it ended, the problems best lacks).
Json JobJson(const v1::Job& job);
// kernel, problem, device_class, config, exact, median_ns, p10_ns, p90_ns,
// gflops, job_id, fingerprint.
Json BestJson(const v1::QueryBestResponse& best);
// candidate_id, status, config, problem, device_class, worker, the timing
// keys, max_abs_error, error, performance_warnings (the compiler's, as
// ResourceUsage keeps them; an array, empty for most).
Json ResultJson(const v1::CandidateResult& result);
// worker_id, hostname, alive, last_heartbeat_unix_ms, active_leases,
// results_reported, devices (with their properties).
Json WorkerJson(const v1::WorkerInfo& worker);
// token_id, name, role ("reader", ...), created_unix_ms, revoked_unix_ms (0:
// in force). Never the token's text or hash.
Json TokenJson(const v1::TokenInfo& token);
// name, owner ("" for none), tuned, device_classes, last_tuned_unix_ms.
Json KernelJson(const v1::TunedKernel& kernel);

}  // namespace tf::client
