// A content-addressed store of build artifacts in one directory: a file is
// named by the SHA-256 of its bytes and lives at <dir>/<first two hex
// digits>/<sha256>. Files are written atomically and made read-only; a file
// whose bytes no longer hash to its name is treated as absent and removed, so
// a torn or tampered artifact is rebuilt rather than served. Safe to use from
// several threads and processes at once.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tf::compiler {

class ArtifactStore {
 public:
  // Creates `dir` if needed and checks that it is writable.
  static Result<std::unique_ptr<ArtifactStore>> Open(const std::string& dir);

  const std::string& dir() const { return dir_; }

  // Moves the file at `path` into the store (copies it when the store is on
  // another file system) and returns its SHA-256. When the store already holds
  // that content, `path` is just removed.
  Result<std::string> PutFile(const std::string& path);
  // Stores `bytes` and returns their SHA-256.
  Result<std::string> Put(std::string_view bytes);

  // True when the store holds a file whose content hashes to `sha256`.
  bool Has(const std::string& sha256) const;
  // Where the file of `sha256` is (or would be); for loading it in place.
  // Empty when `sha256` is not 64 lowercase hex digits.
  std::string PathOf(const std::string& sha256) const;
  // The verified content of `sha256`; NotFound when absent or corrupt.
  Result<std::string> Read(const std::string& sha256) const;

 private:
  explicit ArtifactStore(std::string dir) : dir_(std::move(dir)) {}
  // Renames `tmp` (a file in the store) to the place of `sha256`.
  Status Install(const std::string& tmp, const std::string& sha256);
  // A fresh temporary path inside the store, on the same file system.
  std::string TempPath() const;

  std::string dir_;
};

}  // namespace tf::compiler
