#include "auth/token_index.h"

#include <algorithm>
#include <mutex>

#include "auth/tokens.h"

namespace tf::auth {

void TokenIndex::Put(const v1::TokenInfo& info, const std::string& hash) {
  std::unique_lock lock(mu_);
  by_id_[info.token_id()] = {info, hash};
  max_id_ = std::max(max_id_, info.token_id());
}

bool TokenIndex::Revoke(int64_t token_id, int64_t now_ms) {
  std::unique_lock lock(mu_);
  auto it = by_id_.find(token_id);
  if (it == by_id_.end()) return false;
  it->second.info.set_revoked_unix_ms(now_ms);
  return true;
}

// Found by its public id, then the hash compared in constant time: the
// lookup reveals only what the id already says.
Result<Caller> TokenIndex::Authenticate(std::string_view token) const {
  TF_ASSIGN_OR_RETURN(int64_t id, TokenId(token));
  const std::string hash = HashToken(token);
  std::shared_lock lock(mu_);
  auto it = by_id_.find(id);
  if (it == by_id_.end() || !ConstantTimeEquals(hash, it->second.hash)) {
    return Status::Unauthenticated("unknown token: not issued by this coordinator");
  }
  const v1::TokenInfo& info = it->second.info;
  if (info.revoked_unix_ms() != 0) {
    return Status::Unauthenticated("token " + std::to_string(id) + " (" + info.name() +
                                   ") revoked");
  }
  Caller caller;
  caller.token_id = id;
  caller.role = info.role();
  return caller;
}

std::vector<v1::TokenInfo> TokenIndex::List() const {
  std::vector<v1::TokenInfo> out;
  {
    std::shared_lock lock(mu_);
    for (const auto& [id, entry] : by_id_) out.push_back(entry.info);
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.token_id() < b.token_id(); });
  return out;
}

v1::TokenInfo TokenIndex::Find(int64_t token_id) const {
  std::shared_lock lock(mu_);
  auto it = by_id_.find(token_id);
  return it == by_id_.end() ? v1::TokenInfo() : it->second.info;
}

int64_t TokenIndex::NextId() const {
  std::shared_lock lock(mu_);
  return max_id_ + 1;
}

}  // namespace tf::auth
