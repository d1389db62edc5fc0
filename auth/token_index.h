// The coordinator's tokens in memory, so that checking a call costs a hash
// and a map lookup, never a database query. Loaded from the database at
// start and changed by the coordinator after each create or revoke commits:
// a revoked token fails its very next call. Thread-safe; lookups share a
// reader lock.
#pragma once

#include <cstdint>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "auth/roles.h"
#include "common/status.h"

namespace tf::auth {

class TokenIndex {
 public:
  // Adds or replaces the token with info.token_id(); `hash` is HashToken of
  // its text.
  void Put(const v1::TokenInfo& info, const std::string& hash);
  // Marks it revoked; false when there is no such token.
  bool Revoke(int64_t token_id, int64_t now_ms);

  // The caller a token's text stands for (own_only not yet set), or
  // kUnauthenticated: "unknown token", "token 3 (ci) revoked".
  Result<Caller> Authenticate(std::string_view token) const;

  std::vector<v1::TokenInfo> List() const;  // by id
  // Empty info (token_id 0) when there is no such token.
  v1::TokenInfo Find(int64_t token_id) const;
  // One past the highest id ever used: ids are never reused.
  int64_t NextId() const;

 private:
  struct Entry {
    v1::TokenInfo info;
    std::string hash;
  };
  mutable std::shared_mutex mu_;
  std::unordered_map<int64_t, Entry> by_id_;
  int64_t max_id_ = 0;
};

}  // namespace tf::auth
