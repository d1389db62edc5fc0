// Who may submit jobs under a kernel name. The best configuration of a kernel
// is its newest completed tuning, whoever submitted it, so a name answers for
// one team only if one team may tune it: a name belongs to the team of the
// first submitter token that submitted a job under it, a team being a token
// name (`tunefleet token create --name`), so that a token replaced by a new
// one of the same name keeps its kernels. Submitter tokens of other names are
// refused it. Admins and callers without a token may submit under any name
// and claim none; a name whose jobs are all theirs (or imported) belongs to
// no one yet. An admin may hand a name to another team, or to no one
// (SetKernelOwner: `tunefleet kernels set-owner`), whatever its jobs say;
// handed to no one, it goes to the team of the first submitter token that
// submits under it afterwards, as a new name would. The jobs table and the
// tokens say who claimed a name, the kernel_owners table what an admin set
// and since which job (db::KernelOwnerRow, LoadKernelSubmitters), so a
// restart changes no owner.
//
// Not thread-safe: guarded by the coordinator's mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "auth/roles.h"
#include "common/status.h"
#include "db/tuning_db.h"

namespace tf::coordinator {

class KernelOwners {
 public:
  // A token's team: its name when it is a submitter's (revoked ones
  // included), nullopt for any other token.
  using TeamOf = std::function<std::optional<std::string>(int64_t token_id)>;

  // `submitters` as LoadKernelSubmitters gives them, by first job; `set` as
  // LoadKernelOwners does.
  KernelOwners(const std::vector<db::KernelSubmitter>& submitters,
               const std::vector<db::KernelOwnerRow>& set, TeamOf team_of);
  KernelOwners() = default;

  // kPermissionDenied when an own_only caller names a kernel that belongs to
  // another team.
  Status CheckSubmit(const std::string& kernel, const auth::Caller& caller) const;
  // A job under `kernel` was stored: an own_only caller's team claims an
  // unclaimed name.
  void Submitted(const std::string& kernel, const auth::Caller& caller);
  // The team `kernel` belongs to; empty while it belongs to no one.
  std::string OwnerOf(const std::string& kernel) const;
  // An admin handed `kernel` to `team`; empty: to no one, until an own_only
  // caller's next job under it claims it.
  void Set(const std::string& kernel, const std::string& team);

 private:
  TeamOf team_of_;
  std::unordered_map<std::string, std::string> owner_;  // kernel name -> team
};

}  // namespace tf::coordinator
