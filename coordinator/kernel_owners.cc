#include "coordinator/kernel_owners.h"

#include <utility>

namespace tf::coordinator {

KernelOwners::KernelOwners(const std::vector<db::KernelSubmitter>& submitters,
                           const std::vector<db::KernelOwnerRow>& set, TeamOf team_of)
    : team_of_(std::move(team_of)) {
  for (const db::KernelOwnerRow& o : set) {
    if (!o.team.empty()) owner_.emplace(o.kernel, o.team);
  }
  // A set name's submitters are those since it was set: one set to no one
  // goes to the first of them.
  for (const db::KernelSubmitter& s : submitters) {  // by first job: the first team keeps it
    if (std::optional<std::string> team = team_of_(s.token_id)) owner_.try_emplace(s.kernel, *team);
  }
}

Status KernelOwners::CheckSubmit(const std::string& kernel, const auth::Caller& caller) const {
  if (!caller.own_only) return Status::Ok();
  auto owner = owner_.find(kernel);
  if (owner == owner_.end() || team_of_(caller.token_id) == owner->second) return Status::Ok();
  return Status::PermissionDenied(
      "kernel '" + kernel +
      "' belongs to another token name (the name of the first submitter token to submit a job "
      "under a kernel name owns it, so that its best configuration is its own team's); choose "
      "another kernel name (the spec's `kernel:`), have an admin submit it, or have an admin "
      "hand it to your token name (tunefleet kernels set-owner)");
}

void KernelOwners::Submitted(const std::string& kernel, const auth::Caller& caller) {
  if (!caller.own_only || caller.token_id == 0) return;
  if (std::optional<std::string> team = team_of_(caller.token_id))
    owner_.try_emplace(kernel, *team);
}

std::string KernelOwners::OwnerOf(const std::string& kernel) const {
  auto owner = owner_.find(kernel);
  return owner == owner_.end() ? "" : owner->second;
}

void KernelOwners::Set(const std::string& kernel, const std::string& team) {
  if (team.empty()) {
    owner_.erase(kernel);
  } else {
    owner_[kernel] = team;
  }
}

}  // namespace tf::coordinator
