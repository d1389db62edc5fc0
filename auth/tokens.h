// Bearer tokens. A token's text is "tf_<id>_<secret>": <id> is its public
// number (listed, and named to revoke it), <secret> 32 random bytes in hex.
// The coordinator keeps only the SHA-256 of the whole text, so its database
// holds nothing that can be presented as a token.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tf::auth {

// A new token's text for id `id`; fails only when the system has no
// randomness to give (getrandom).
Result<std::string> GenerateToken(int64_t id);

// What is stored for a token: the lowercase hex SHA-256 of its text.
std::string HashToken(std::string_view token);

// The id of a token's text; kUnauthenticated when the text is not a token.
Result<int64_t> TokenId(std::string_view token);

// OK when `token` can travel in a header: visible ASCII, one line, no
// spaces. A file holding a token and a comment fails here, not in gRPC's
// assertion. The message names the offending character's position, never
// the token.
Status CheckTokenText(std::string_view token);

// Equality whose time depends on the lengths only, not on where the bytes
// differ: comparing a presented hash leaks nothing about the stored one.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace tf::auth
