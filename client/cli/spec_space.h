// The configurations a spec builds, for the commands that work on a spec
// without a coordinator (`compile`, `space`): the target's device
// properties, and the constrained space of every problem.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "kernelspec/space.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::cli {

namespace v1 = ::tunefleet::v1;

// The properties of the first device of the target's kind on this host, as a
// worker here would advertise them (none where there is no such device);
// overridden by `flags`, NAME=VALUE.
Result<kernelspec::DeviceProperties> TargetProperties(const v1::KernelSpec& spec,
                                                      const std::vector<std::string>& flags);

// The space of one problem; errors suggest --device-prop for an unknown
// device property.
Result<kernelspec::SearchSpace> ProblemSpace(const v1::KernelSpec& spec, const v1::Problem& problem,
                                             const kernelspec::DeviceProperties& props);

// Distinct configurations over all problems, in first-seen order, as the
// spec's search selects them; with `limit` > 0, a sample of at most `limit`
// drawn uniformly from each problem's space with `seed` (the same for the
// same seed). `candidates`, when given, counts the (configuration, problem)
// pairs selected.
Result<std::vector<v1::Config>> EnumerateConfigs(const v1::KernelSpec& spec,
                                                 const kernelspec::DeviceProperties& props,
                                                 int64_t limit = 0, uint64_t seed = 1,
                                                 size_t* candidates = nullptr);

}  // namespace tf::cli
