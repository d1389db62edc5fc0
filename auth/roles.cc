#include "auth/roles.h"

#include <array>
#include <vector>

namespace tf::auth {
namespace {

constexpr Access kNo = Access::kNone;
constexpr Access kOwn = Access::kOwn;
constexpr Access kAll = Access::kAll;

struct Row {
  Rpc rpc;
  const char* name;
  std::array<Access, 4> access;  // reader, submitter, worker, admin
};

// The policy. Readers see everything and change nothing; submitters see and
// change their own jobs (and the fleet and best configs, which every job
// needs) and submit under kernel names no other token name took; workers
// call the worker service for their own workers only; admins do everything.
// Artifacts are fetched by content hash, which only a lease names, so any
// worker may fetch any.
constexpr std::array<Row, kRpcCount> kPolicy = {{
    //                                   reader submitter worker admin
    {Rpc::kSubmitJob, "SubmitJob", {kNo, kOwn, kNo, kAll}},
    {Rpc::kGetJob, "GetJob", {kAll, kOwn, kNo, kAll}},
    {Rpc::kWatchJob, "WatchJob", {kAll, kOwn, kNo, kAll}},
    {Rpc::kCancelJob, "CancelJob", {kNo, kOwn, kNo, kAll}},
    {Rpc::kListJobs, "ListJobs", {kAll, kOwn, kNo, kAll}},
    {Rpc::kListResults, "ListResults", {kAll, kOwn, kNo, kAll}},
    {Rpc::kQueryBest, "QueryBest", {kAll, kAll, kNo, kAll}},
    {Rpc::kListWorkers, "ListWorkers", {kAll, kAll, kNo, kAll}},
    {Rpc::kCreateToken, "CreateToken", {kNo, kNo, kNo, kAll}},
    {Rpc::kListTokens, "ListTokens", {kNo, kNo, kNo, kAll}},
    {Rpc::kRevokeToken, "RevokeToken", {kNo, kNo, kNo, kAll}},
    {Rpc::kSetKernelOwner, "SetKernelOwner", {kNo, kNo, kNo, kAll}},
    {Rpc::kImportResults, "ImportResults", {kNo, kNo, kNo, kAll}},
    {Rpc::kListBest, "ListBest", {kAll, kAll, kNo, kAll}},
    {Rpc::kListKernels, "ListKernels", {kAll, kAll, kNo, kAll}},
    {Rpc::kRegister, "Register", {kNo, kNo, kOwn, kAll}},
    {Rpc::kHeartbeat, "Heartbeat", {kNo, kNo, kOwn, kAll}},
    {Rpc::kAcquireLease, "AcquireLease", {kNo, kNo, kOwn, kAll}},
    {Rpc::kReportResults, "ReportResults", {kNo, kNo, kOwn, kAll}},
    {Rpc::kFetchArtifact, "FetchArtifact", {kNo, kNo, kAll, kAll}},
}};

constexpr bool InOrder() {
  for (int i = 0; i < kRpcCount; ++i) {
    if (static_cast<int>(kPolicy[i].rpc) != i) return false;
  }
  return true;
}
static_assert(InOrder(), "kPolicy must list the RPCs in the order of enum Rpc");

constexpr std::array<v1::Role, 4> kRoles = {v1::ROLE_READER, v1::ROLE_SUBMITTER, v1::ROLE_WORKER,
                                            v1::ROLE_ADMIN};

}  // namespace

const char* RpcName(Rpc rpc) { return kPolicy[static_cast<int>(rpc)].name; }

const char* RoleName(v1::Role role) {
  switch (role) {
    case v1::ROLE_READER:
      return "reader";
    case v1::ROLE_SUBMITTER:
      return "submitter";
    case v1::ROLE_WORKER:
      return "worker";
    case v1::ROLE_ADMIN:
      return "admin";
    default:
      return "none";
  }
}

Result<v1::Role> ParseRole(std::string_view name) {
  for (v1::Role role : kRoles) {
    if (name == RoleName(role)) return role;
  }
  return Status::InvalidArgument("unknown role '" + std::string(name) +
                                 "'; use reader, submitter, worker or admin");
}

Access AccessOf(Rpc rpc, v1::Role role) {
  for (size_t i = 0; i < kRoles.size(); ++i) {
    if (kRoles[i] == role) return kPolicy[static_cast<int>(rpc)].access[i];
  }
  return Access::kNone;
}

Result<Caller> Authorize(Caller caller, Rpc rpc) {
  const Access access = AccessOf(rpc, caller.role);
  if (access != Access::kNone) {
    caller.own_only = access == Access::kOwn;
    return caller;
  }
  // "submitter or admin", "reader, submitter or admin".
  std::vector<const char*> allowed;
  const Row& row = kPolicy[static_cast<int>(rpc)];
  for (size_t i = 0; i < kRoles.size(); ++i) {
    if (row.access[i] != Access::kNone) allowed.push_back(RoleName(kRoles[i]));
  }
  std::string needs;
  for (size_t i = 0; i < allowed.size(); ++i) {
    if (i > 0) needs += i + 1 == allowed.size() ? " or " : ", ";
    needs += allowed[i];
  }
  return Status::PermissionDenied("role '" + std::string(RoleName(caller.role)) +
                                  "' may not call " + row.name + "; it needs " + needs);
}

}  // namespace tf::auth
