#include "auth/tokens.h"

#include <sys/random.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "common/files.h"

namespace tf::auth {
namespace {

constexpr std::string_view kPrefix = "tf_";
constexpr size_t kSecretBytes = 32;

}  // namespace

Result<std::string> GenerateToken(int64_t id) {
  unsigned char secret[kSecretBytes];
  size_t filled = 0;
  while (filled < sizeof secret) {
    ssize_t got = getrandom(secret + filled, sizeof secret - filled, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Status::Internal(std::string("getrandom: ") + std::strerror(errno));
    filled += static_cast<size_t>(got);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text = std::string(kPrefix) + std::to_string(id) + "_";
  for (unsigned char byte : secret) {
    text += kHex[byte >> 4];
    text += kHex[byte & 15];
  }
  return text;
}

std::string HashToken(std::string_view token) { return Sha256Hex(token); }

Result<int64_t> TokenId(std::string_view token) {
  auto malformed = [] {
    return Status::Unauthenticated("malformed token: expected tf_<id>_<secret>");
  };
  if (!token.starts_with(kPrefix)) return malformed();
  token.remove_prefix(kPrefix.size());
  int64_t id = 0;
  auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), id);
  if (error != std::errc() || id <= 0 || end == token.data() + token.size() || *end != '_') {
    return malformed();
  }
  return id;
}

Status CheckTokenText(std::string_view token) {
  if (token.empty()) return Status::InvalidArgument("the token is empty");
  for (size_t i = 0; i < token.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(token[i]);
    if (c > 0x20 && c < 0x7f) continue;
    const char* what = c == '\n' || c == '\r'  ? "a line break"
                       : c == ' ' || c == '\t' ? "a space"
                                               : "a byte that is not visible ASCII";
    return Status::InvalidArgument("the token has " + std::string(what) + " at character " +
                                   std::to_string(i + 1) +
                                   ": a token is one line of visible ASCII (tf_<id>_<secret>)");
  }
  return Status::Ok();
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char differ = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    differ |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return differ == 0;
}

}  // namespace tf::auth
