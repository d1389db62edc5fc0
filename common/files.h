// Small filesystem helpers that report errors as Status.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace tf {

Result<std::string> ReadFile(const std::string& path);
// Writes to a temporary file beside `path`, fsyncs, then renames: readers see
// the old content or the new, never a torn file.
Status WriteFileAtomic(const std::string& path, std::string_view content);
Status MakeDirs(const std::string& path);
// A new folder `root`/`prefix`XXXXXX (mode 0700); `root` empty: the system's
// temporary folder.
Result<std::string> MakeTempDir(const std::string& prefix, const std::string& root = "");
// Lowercase hex SHA-256 of the bytes.
std::string Sha256Hex(std::string_view bytes);
Result<std::string> Sha256OfFile(const std::string& path);
int64_t NowUnixMs();

}  // namespace tf
