// The coordinator's tokens, and the kernel names handed to their names: each
// change is committed to the database first, then made visible to the
// in-memory index that checks every call.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "auth/tokens.h"
#include "common/files.h"
#include "coordinator/coordinator.h"

namespace tf::coordinator {
namespace {

// 128 bits as hex digits.
constexpr size_t kMinAdminSecretChars = 32;

}  // namespace

Result<v1::CreateTokenResponse> Coordinator::CreateToken(const v1::CreateTokenRequest& request) {
  if (request.name().empty()) {
    return Status::InvalidArgument("a token needs a name, e.g. the person or host it is for");
  }
  // The name is shown in tables and logs: one line, short.
  constexpr size_t kMaxName = 128;
  if (request.name().size() > kMaxName) {
    return Status::InvalidArgument("a token's name is at most " + std::to_string(kMaxName) +
                                   " bytes; this one has " + std::to_string(request.name().size()));
  }
  for (unsigned char c : request.name()) {
    if (c < 0x20 || c == 0x7f) {
      return Status::InvalidArgument(
          "a token's name is one line without control characters (a line break, a tab, ...)");
    }
  }
  if (request.role() == v1::ROLE_UNSPECIFIED || !v1::Role_IsValid(request.role())) {
    return Status::InvalidArgument("a token needs a role: reader, submitter, worker or admin");
  }
  std::lock_guard lock(mu_);
  db::TokenRow row;
  row.info.set_token_id(tokens_.NextId());
  row.info.set_name(request.name());
  row.info.set_role(request.role());
  row.info.set_created_unix_ms(NowUnixMs());
  TF_ASSIGN_OR_RETURN(std::string token, auth::GenerateToken(row.info.token_id()));
  row.hash = auth::HashToken(token);
  TF_RETURN_IF_ERROR(db_->InsertToken(row));
  tokens_.Put(row.info, row.hash);
  spdlog::info("token {} ({}) created with role {}", row.info.token_id(), row.info.name(),
               auth::RoleName(row.info.role()));
  v1::CreateTokenResponse response;
  *response.mutable_info() = row.info;
  response.set_token(std::move(token));
  return response;
}

Result<v1::TokenInfo> Coordinator::RevokeToken(int64_t token_id) {
  std::lock_guard lock(mu_);
  v1::TokenInfo info = tokens_.Find(token_id);
  if (info.token_id() == 0) {
    return Status::NotFound("token " + std::to_string(token_id) + " does not exist");
  }
  if (info.revoked_unix_ms() != 0) return info;  // revoked already
  if (token_id == admin_file_token_) {
    return Status::FailedPrecondition(
        "token " + std::to_string(token_id) +
        " is the coordinator's --admin-token-file token, which it needs to start; to replace "
        "it, remove the file and restart the coordinator (it writes a new admin token), then "
        "revoke this one");
  }
  info.set_revoked_unix_ms(NowUnixMs());
  TF_RETURN_IF_ERROR(db_->RevokeToken(token_id, info.revoked_unix_ms()));
  tokens_.Revoke(token_id, info.revoked_unix_ms());
  spdlog::info("token {} ({}) revoked", token_id, info.name());
  return info;
}

Status Coordinator::EnsureAdminToken(const std::string& token) {
  TF_ASSIGN_OR_RETURN(int64_t id, auth::TokenId(token));
  std::lock_guard lock(mu_);
  if (tokens_.Find(id).token_id() == 0) {
    // A token made elsewhere (a secret manager's) is as strong as its secret.
    const size_t secret = token.size() - token.find('_', 3) - 1;
    if (secret < kMinAdminSecretChars) {
      return Status::FailedPrecondition(
          "the admin token file's secret has " + std::to_string(secret) +
          " characters; an admin token made elsewhere needs at least " +
          std::to_string(kMinAdminSecretChars) +
          " (the coordinator's own have 64 hex digits: remove the file and it writes one)");
    }
    db::TokenRow row;
    row.info.set_token_id(id);
    row.info.set_name("admin (--admin-token-file)");
    row.info.set_role(v1::ROLE_ADMIN);
    row.info.set_created_unix_ms(NowUnixMs());
    row.hash = auth::HashToken(token);
    TF_RETURN_IF_ERROR(db_->InsertToken(row));
    tokens_.Put(row.info, row.hash);
    admin_file_token_ = id;
    return Status::Ok();
  }
  auto caller = tokens_.Authenticate(token);
  if (!caller.ok()) {
    return Status::FailedPrecondition("the admin token file's token " + std::to_string(id) +
                                      " is not valid here: " + caller.status().message());
  }
  if (caller->role != v1::ROLE_ADMIN) {
    return Status::FailedPrecondition("the admin token file holds token " + std::to_string(id) +
                                      ", whose role is " + auth::RoleName(caller->role));
  }
  admin_file_token_ = id;
  return Status::Ok();
}

Result<v1::SetKernelOwnerResponse> Coordinator::SetKernelOwner(
    const v1::SetKernelOwnerRequest& request) {
  const std::string& kernel = request.kernel();
  const std::string& team = request.team();
  if (kernel.empty()) return Status::InvalidArgument("a kernel name is needed");
  std::lock_guard lock(mu_);
  const std::vector<v1::TokenInfo> tokens = tokens_.List();
  if (!team.empty() && std::none_of(tokens.begin(), tokens.end(), [&](const v1::TokenInfo& t) {
        return t.name() == team && t.role() == v1::ROLE_SUBMITTER && t.revoked_unix_ms() == 0;
      })) {
    return Status::NotFound("no submitter token in force is named '" + team +
                            "': a kernel name goes to a team, the name of submitter tokens "
                            "(`tunefleet token list` shows them)");
  }
  // Its jobs so far no longer claim it: who did is what the admin overrides.
  TF_ASSIGN_OR_RETURN(const int64_t last_job, db_->LastJobOf(kernel));
  if (last_job == 0) {
    return Status::NotFound("no job or import is under kernel name '" + kernel +
                            "' (`tunefleet jobs` and `tunefleet kernels` list them); a new name "
                            "goes to the first submitter token that submits under it");
  }
  TF_RETURN_IF_ERROR(db_->PutKernelOwner({kernel, team, last_job}));
  v1::SetKernelOwnerResponse response;
  response.set_kernel(kernel);
  response.set_previous_owner(kernel_owners_.OwnerOf(kernel));
  response.set_owner(team);
  kernel_owners_.Set(kernel, team);
  spdlog::info("kernel {}: owner {} -> {}", kernel,
               response.previous_owner().empty() ? "none" : response.previous_owner(),
               team.empty() ? "none" : team);
  return response;
}

}  // namespace tf::coordinator
