#include "client/cli/spec_space.h"

#include <cstdlib>
#include <set>

#include "kernelspec/config.h"
#include "kernelspec/expr.h"
#include "kernelspec/validate.h"
#include "vendors/device_kinds.h"

namespace tf::cli {

namespace {

std::string JoinDeviceNames(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "device." : ", device.") + name;
  return out;
}

}  // namespace

Result<kernelspec::DeviceProperties> TargetProperties(const v1::KernelSpec& spec,
                                                      const std::vector<std::string>& flags) {
  kernelspec::DeviceProperties props;
  // A kind backed by files (replay) has no hardware here to ask.
  if (auto kind = vendors::FindDeviceKind(spec.target().vendor()); kind.ok() && (*kind)->discover) {
    if (auto local = (*kind)->discover({}, 0, ""); local.ok() && !local->empty()) {
      props.insert((*local)[0].info.properties().begin(), (*local)[0].info.properties().end());
    }
  }
  // A misspelt name would leave the property it meant at this machine's value.
  std::set<std::string> used;
  for (const std::string& constraint : spec.constraints()) {
    auto expr = kernelspec::Expr::Parse(constraint);
    if (!expr.ok()) continue;  // ValidateSpec names it
    for (const std::string& variable : expr->variables()) {
      if (variable.starts_with("device.")) used.insert(variable.substr(7));
    }
  }
  for (const std::string& flag : flags) {
    const size_t eq = flag.find('=');
    char* end = nullptr;
    const long long value = eq == std::string::npos ? 0 : std::strtoll(&flag[eq + 1], &end, 10);
    if (eq == std::string::npos || eq == 0 || end == &flag[eq + 1] || *end != '\0') {
      return Status::InvalidArgument("--device-prop '" + flag +
                                     "' is not NAME=INTEGER, e.g. max_shared_mem_per_block=232448");
    }
    const std::string name = flag.substr(0, eq);
    if (!used.count(name)) {
      return Status::InvalidArgument("--device-prop " + name +
                                     ": no constraint of the spec uses device." + name +
                                     (used.empty() ? std::string(" (none uses a device property)")
                                                   : "; they use " + JoinDeviceNames(used)));
    }
    props[name] = value;
  }
  return props;
}

Result<kernelspec::SearchSpace> ProblemSpace(const v1::KernelSpec& spec, const v1::Problem& problem,
                                             const kernelspec::DeviceProperties& props) {
  Result<kernelspec::SearchSpace> space = kernelspec::SearchSpace::Create(spec, problem, props);
  if (!space.ok() &&
      space.status().message().find("is unknown for this device") != std::string::npos) {
    return Status(space.status().code(),
                  space.status().message() + " (give it with --device-prop NAME=VALUE)");
  }
  return space;
}

Result<std::vector<v1::Config>> EnumerateConfigs(const v1::KernelSpec& spec,
                                                 const kernelspec::DeviceProperties& props,
                                                 int64_t limit, uint64_t seed, size_t* candidates) {
  v1::Search search = spec.search();
  if (limit > 0) {
    search.set_strategy("random");
    search.set_max_candidates(limit);
    search.set_seed(seed);
  }
  std::vector<v1::Config> configs;
  std::set<std::string> seen;
  if (candidates != nullptr) *candidates = 0;
  for (const v1::Problem& problem : spec.problems()) {
    TF_ASSIGN_OR_RETURN(kernelspec::SearchSpace space, ProblemSpace(spec, problem, props));
    TF_ASSIGN_OR_RETURN(std::vector<v1::Config> selected,
                        space.Select(search, kernelspec::SpecLimits().max_space_size));
    if (candidates != nullptr) *candidates += selected.size();
    for (v1::Config& config : selected) {
      if (limit > 0 && static_cast<int64_t>(configs.size()) >= limit) break;
      if (seen.insert(kernelspec::ConfigKey(config)).second) configs.push_back(std::move(config));
    }
  }
  return configs;
}

}  // namespace tf::cli
