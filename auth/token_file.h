// Token files: a token's text on one line, readable by its owner only. The
// coordinator keeps its admin token in one (--admin-token-file); clients and
// workers read theirs from one (--token-file).
#pragma once

#include <string>

#include "common/status.h"

namespace tf::auth {

// The token in `path`, surrounding whitespace removed; errors name the file.
Result<std::string> ReadTokenFile(const std::string& path);

// Creates `path` with mode 0600 (failing if it exists) and writes the token.
Status WriteTokenFile(const std::string& path, const std::string& token);

// kFailedPrecondition when group or others may read `path`: a bearer token
// readable by other users is theirs too.
Status CheckOwnerOnly(const std::string& path);

}  // namespace tf::auth
