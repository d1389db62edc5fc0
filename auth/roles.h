// Roles and the one policy table: for every RPC of the three services, what each
// role may do with it. docs/security.md prints the same table, and
// tests/unit/auth_test.cc checks that the two agree.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "tunefleet/v1/tunefleet.pb.h"

namespace tf::auth {

namespace v1 = ::tunefleet::v1;

enum class Rpc {
  // TuneFleet, for clients.
  kSubmitJob,
  kGetJob,
  kWatchJob,
  kCancelJob,
  kListJobs,
  kListResults,
  kQueryBest,
  kListWorkers,
  kCreateToken,
  kListTokens,
  kRevokeToken,
  kSetKernelOwner,
  // TuningResults, for clients.
  kImportResults,
  kListBest,
  kListKernels,
  // WorkerService, for workers.
  kRegister,
  kHeartbeat,
  kAcquireLease,
  kReportResults,
  kFetchArtifact,
};
inline constexpr int kRpcCount = 20;

enum class Access {
  kNone,
  // Only what the caller's token made: the jobs it submitted, the kernel
  // names its name claimed (coordinator/kernel_owners.h), the workers it
  // registered and the leases granted to them.
  kOwn,
  kAll,
};

// The RPC's name in the .proto, e.g. "SubmitJob".
const char* RpcName(Rpc rpc);
// "reader", "submitter", "worker", "admin"; "none" for ROLE_UNSPECIFIED.
const char* RoleName(v1::Role role);
// The inverse of RoleName; kInvalidArgument naming the four roles otherwise.
Result<v1::Role> ParseRole(std::string_view name);

Access AccessOf(Rpc rpc, v1::Role role);

// Who makes a call. The default is an anonymous caller with every right:
// what --allow-anonymous gives a call without a token, and what code that
// drives the coordinator directly (tests, benchmarks) uses.
struct Caller {
  int64_t token_id = 0;  // 0: no token
  v1::Role role = v1::ROLE_ADMIN;
  bool own_only = false;  // limited to what its token made (Access::kOwn)
};

// `caller` with own_only set as the table says for `rpc`, or
// kPermissionDenied: "role 'reader' may not call SubmitJob; it needs
// submitter or admin".
Result<Caller> Authorize(Caller caller, Rpc rpc);

}  // namespace tf::auth
