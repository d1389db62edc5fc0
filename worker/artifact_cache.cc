#include "worker/artifact_cache.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>

#include "common/files.h"

namespace tf::worker {
namespace {

bool IsSha256Hex(const std::string& text) {
  return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

ArtifactCache::ArtifactCache(std::string dir, Fetch fetch)
    : dir_(std::move(dir)), fetch_(std::move(fetch)) {}

Result<std::string> ArtifactCache::Download(const std::string& sha256, const std::string& path) {
  Status fetched = fetch_(sha256, path);
  if (!fetched.ok()) {
    std::filesystem::remove(path);
    return Status(fetched.code(), "fetching artifact " + sha256 + ": " + fetched.message());
  }
  return Sha256OfFile(path);
}

Result<std::string> ArtifactCache::Get(const std::string& sha256) {
  if (!IsSha256Hex(sha256)) {
    return Status::InvalidArgument("artifact name '" + sha256 + "' is not a lowercase SHA-256");
  }
  const std::string path = dir_ + "/" + sha256;
  std::lock_guard lock(mu_);
  if (std::filesystem::exists(path)) {
    auto actual = Sha256OfFile(path);
    if (actual.ok() && *actual == sha256) return path;
    spdlog::warn("cached artifact {} is corrupted (its SHA-256 is {}); fetching it again", path,
                 actual.ok() ? *actual : actual.status().message());
    std::filesystem::remove(path);
  }
  // A download is checked before it takes the artifact's name; a corrupted
  // one is tried once more.
  const std::string partial = path + ".partial." + std::to_string(getpid());
  std::string received;
  for (int attempt = 0; attempt < 2 && received != sha256; ++attempt) {
    TF_ASSIGN_OR_RETURN(received, Download(sha256, partial));
  }
  if (received != sha256) {
    std::filesystem::remove(partial);
    return Status::Internal("artifact hash mismatch: asked for " + sha256 + ", received " +
                            received);
  }
  std::error_code ec;
  std::filesystem::rename(partial, path, ec);
  if (ec) return Status::Internal("cannot move artifact into " + path + ": " + ec.message());
  return path;
}

}  // namespace tf::worker
