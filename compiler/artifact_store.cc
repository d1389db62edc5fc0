#include "compiler/artifact_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "common/files.h"

namespace tf::compiler {
namespace {

bool IsSha256(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

Status NotSha256(const std::string& s) {
  return Status::InvalidArgument("'" + s + "' is not a SHA-256 (64 lowercase hex digits)");
}

// Data must be on disk before the rename makes the file visible under its
// name; otherwise a crash could leave a named file with missing content.
Status SyncFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::Internal("cannot open " + path + ": " + std::strerror(errno));
  int rc = fsync(fd);
  close(fd);
  if (rc != 0) return Status::Internal("cannot flush " + path + ": " + std::strerror(errno));
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<ArtifactStore>> ArtifactStore::Open(const std::string& dir) {
  TF_RETURN_IF_ERROR(MakeDirs(dir));
  if (access(dir.c_str(), W_OK) != 0) {
    return Status::FailedPrecondition("artifact store " + dir +
                                      " is not writable: " + std::strerror(errno));
  }
  return std::unique_ptr<ArtifactStore>(new ArtifactStore(dir));
}

std::string ArtifactStore::PathOf(const std::string& sha256) const {
  if (!IsSha256(sha256)) return "";
  return dir_ + "/" + sha256.substr(0, 2) + "/" + sha256;
}

bool ArtifactStore::Has(const std::string& sha256) const {
  std::string path = PathOf(sha256);
  if (path.empty()) return false;
  auto actual = Sha256OfFile(path);
  if (!actual.ok()) return false;
  if (*actual != sha256) {
    unlink(path.c_str());
    return false;
  }
  return true;
}

Result<std::string> ArtifactStore::Read(const std::string& sha256) const {
  std::string path = PathOf(sha256);
  if (path.empty()) return NotSha256(sha256);
  auto bytes = ReadFile(path);
  if (!bytes.ok()) return Status::NotFound("artifact " + sha256 + " is not in " + dir_);
  if (Sha256Hex(*bytes) != sha256) {
    unlink(path.c_str());
    return Status::NotFound("artifact " + sha256 + " in " + dir_ +
                            " was corrupt and has been removed");
  }
  return bytes;
}

Result<std::string> ArtifactStore::Put(std::string_view bytes) {
  std::string sha256 = Sha256Hex(bytes);
  if (Has(sha256)) return sha256;
  std::string tmp = TempPath();
  TF_RETURN_IF_ERROR(WriteFileAtomic(tmp, bytes));
  TF_RETURN_IF_ERROR(Install(tmp, sha256));
  return sha256;
}

Result<std::string> ArtifactStore::PutFile(const std::string& path) {
  TF_ASSIGN_OR_RETURN(std::string sha256, Sha256OfFile(path));
  if (Has(sha256)) {
    unlink(path.c_str());
    return sha256;
  }
  TF_RETURN_IF_ERROR(SyncFile(path));
  std::string tmp = TempPath();
  if (rename(path.c_str(), tmp.c_str()) == 0) {
    TF_RETURN_IF_ERROR(Install(tmp, sha256));
    return sha256;
  }
  if (errno != EXDEV) {
    return Status::Internal("cannot move " + path + " into " + dir_ + ": " + std::strerror(errno));
  }
  TF_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  TF_ASSIGN_OR_RETURN(std::string stored, Put(bytes));
  unlink(path.c_str());
  return stored;
}

Status ArtifactStore::Install(const std::string& tmp, const std::string& sha256) {
  std::string path = PathOf(sha256);
  Status made = MakeDirs(dir_ + "/" + sha256.substr(0, 2));
  // Read-only: artifacts are immutable once named.
  if (made.ok() && chmod(tmp.c_str(), 0444) != 0) {
    made = Status::Internal("cannot chmod " + tmp + ": " + std::strerror(errno));
  }
  if (made.ok() && rename(tmp.c_str(), path.c_str()) != 0) {
    made = Status::Internal("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
  }
  if (!made.ok()) unlink(tmp.c_str());
  return made;
}

std::string ArtifactStore::TempPath() const {
  static std::atomic<uint64_t> counter{0};
  return dir_ + "/.tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
}

}  // namespace tf::compiler
