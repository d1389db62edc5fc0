// Who may submit jobs under a kernel name. The best configuration of a kernel
// is its newest completed tuning, whoever submitted it, so a name answers for
// one team only if one team may tune it: a name belongs to the first
// submitter token that submitted a job under it, and other submitter tokens
// are refused it. Admins and callers without a token may submit under any
// name and claim none; a name whose jobs are all theirs (or imported) belongs
// to no one yet. Nothing is stored of its own: the jobs table says it all
// (LoadKernelSubmitters), so a restart changes no owner.
//
// Not thread-safe: guarded by the coordinator's mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "auth/roles.h"
#include "common/status.h"
#include "db/tuning_db.h"

namespace tf::coordinator {

class KernelOwners {
 public:
  // `submitters` as LoadKernelSubmitters gives them; `is_submitter` says
  // whether a token is a submitter's (revoked ones included), since admins'
  // jobs claim nothing.
  KernelOwners(const std::vector<db::KernelSubmitter>& submitters,
               const std::function<bool(int64_t token_id)>& is_submitter);
  KernelOwners() = default;

  // kPermissionDenied when an own_only caller names a kernel that belongs to
  // another token.
  Status CheckSubmit(const std::string& kernel, const auth::Caller& caller) const;
  // A job under `kernel` was stored: an own_only caller claims an unclaimed
  // name.
  void Submitted(const std::string& kernel, const auth::Caller& caller);

 private:
  std::unordered_map<std::string, int64_t> owner_;
};

}  // namespace tf::coordinator
