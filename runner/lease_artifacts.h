// Which artifact holds which candidate of a lease, for the worker and its
// runner alike: a RunnerRequest's artifact_paths are the artifacts of its
// lease's candidates, each once, in the order the candidates first name
// them. Symbols are unique only within one artifact (define-style copies are
// named by their place in their batch), so a kernel is looked up in its own.
#pragma once

#include <string>
#include <vector>

#include "tunefleet/v1/worker.pb.h"

namespace tf::runner {

namespace v1 = ::tunefleet::v1;

// The artifact that holds `candidate`: its own when it names one (the
// finalists of a retime lease, batches built on the worker), else the lease's.
const std::string& ArtifactOf(const v1::Lease& lease, const v1::LeasedCandidate& candidate);

// The artifacts of `lease`'s candidates, each once, in first-named order.
std::vector<std::string> ArtifactOrder(const v1::Lease& lease);

// Where ArtifactOf(lease, candidate) is in ArtifactOrder(lease).
size_t ArtifactIndex(const v1::Lease& lease, const v1::LeasedCandidate& candidate);

}  // namespace tf::runner
