// Lease artifacts on the worker's disk, named by their SHA-256 and fetched
// from the coordinator on a miss. Nothing is run unless its hash matched: a
// cached file is checked on every use (a disk or a hand may have changed it
// since; hashing is cheap next to a lease), a download before it is kept.
#pragma once

#include <functional>
#include <mutex>
#include <string>

#include "common/status.h"

namespace tf::worker {

class ArtifactCache {
 public:
  // Writes the artifact's bytes to `path`.
  using Fetch = std::function<Status(const std::string& sha256, const std::string& path)>;

  ArtifactCache(std::string dir, Fetch fetch);

  // Local path of the artifact. A download whose hash does not match is
  // fetched once more; a second mismatch is an error naming both hashes.
  Result<std::string> Get(const std::string& sha256);

 private:
  // Fetches into `path`; returns the hash of what arrived.
  Result<std::string> Download(const std::string& sha256, const std::string& path);

  const std::string dir_;
  const Fetch fetch_;
  std::mutex mu_;  // one download at a time; others wait and then hit
};

}  // namespace tf::worker
