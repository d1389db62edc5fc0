#include "runner/lease_artifacts.h"

#include <algorithm>

namespace tf::runner {

const std::string& ArtifactOf(const v1::Lease& lease, const v1::LeasedCandidate& candidate) {
  return candidate.artifact_sha256().empty() ? lease.artifact_sha256()
                                             : candidate.artifact_sha256();
}

std::vector<std::string> ArtifactOrder(const v1::Lease& lease) {
  std::vector<std::string> order;
  for (const v1::LeasedCandidate& candidate : lease.candidates()) {
    const std::string& artifact = ArtifactOf(lease, candidate);
    if (std::find(order.begin(), order.end(), artifact) == order.end()) order.push_back(artifact);
  }
  return order;
}

size_t ArtifactIndex(const v1::Lease& lease, const v1::LeasedCandidate& candidate) {
  const std::vector<std::string> order = ArtifactOrder(lease);
  return std::find(order.begin(), order.end(), ArtifactOf(lease, candidate)) - order.begin();
}

}  // namespace tf::runner
