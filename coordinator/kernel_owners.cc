#include "coordinator/kernel_owners.h"

namespace tf::coordinator {

KernelOwners::KernelOwners(const std::vector<db::KernelSubmitter>& submitters,
                           const std::function<bool(int64_t token_id)>& is_submitter) {
  std::unordered_map<std::string, int64_t> first_job;
  for (const db::KernelSubmitter& s : submitters) {
    if (!is_submitter(s.token_id)) continue;
    auto [first, added] = first_job.try_emplace(s.kernel, s.first_job_id);
    if (added || s.first_job_id < first->second) {
      first->second = s.first_job_id;
      owner_[s.kernel] = s.token_id;
    }
  }
}

Status KernelOwners::CheckSubmit(const std::string& kernel, const auth::Caller& caller) const {
  if (!caller.own_only) return Status::Ok();
  auto owner = owner_.find(kernel);
  if (owner == owner_.end() || owner->second == caller.token_id) return Status::Ok();
  return Status::PermissionDenied(
      "kernel '" + kernel +
      "' belongs to another token (the first submitter token to submit a job under a name owns "
      "it, so that its best configuration is its own team's); choose another name (the spec's "
      "`kernel:`), or have an admin submit it");
}

void KernelOwners::Submitted(const std::string& kernel, const auth::Caller& caller) {
  if (caller.own_only && caller.token_id != 0) owner_.try_emplace(kernel, caller.token_id);
}

}  // namespace tf::coordinator
