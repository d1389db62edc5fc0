// `tunefleet space SPEC`: how many configurations each problem's constrained
// space holds, and the first few, without building anything: a large space is
// seen, and its constraints checked, before any compiler runs.
#include <cstdio>
#include <set>

#include "client/cli/cli_util.h"
#include "client/cli/commands.h"
#include "client/cli/spec_space.h"
#include "kernelspec/config.h"
#include "kernelspec/spec_loader.h"
#include "kernelspec/validate.h"
#include "vendors/toolchains.h"

namespace tf::cli {

int RunSpace(const GlobalOptions& global, const SpaceOptions& options) {
  Result<kernelspec::LoadedSpec> loaded = kernelspec::LoadSpecFile(options.spec_path);
  if (!loaded.ok()) return FailUsage(loaded.status());
  v1::KernelSpec& spec = loaded->spec;
  if (Status valid = kernelspec::ValidateSpec(spec, loaded->sources, kernelspec::SpecLimits());
      !valid.ok()) {
    return FailSpec(*loaded, valid);
  }
  if (Status target = vendors::CompleteTarget(&spec); !target.ok()) {
    return FailSpec(*loaded, target);
  }
  Result<kernelspec::DeviceProperties> props = TargetProperties(spec, options.device_props);
  if (!props.ok()) return FailUsage(props.status());

  client::Json problems = client::Json::array();
  std::set<std::string> distinct;  // over all problems, when there are several
  uint64_t configurations = 0;
  for (const v1::Problem& problem : spec.problems()) {
    Result<kernelspec::SearchSpace> space = ProblemSpace(spec, problem, *props);
    if (!space.ok()) return FailSpec(*loaded, space.status());
    const uint64_t count = space->CountValid();
    client::Json shown = client::Json::array();
    if (options.show > 0) {
      space->Enumerate([&](const v1::Config& config) {
        shown.push_back(client::ConfigJson(config));
        return static_cast<int>(shown.size()) < options.show;
      });
    }
    if (spec.problems_size() == 1) {
      configurations = count;
    } else {
      space->Enumerate([&](const v1::Config& config) {
        distinct.insert(kernelspec::ConfigKey(config));
        return true;
      });
      configurations = distinct.size();
    }
    problems.push_back({{"problem", client::ProblemJson(problem)},
                        {"cartesian", space->CartesianSize()},
                        {"configurations", count},
                        {"first", std::move(shown)}});
  }
  if (global.json) {
    PrintJson({{"kernel", spec.name()},
               {"configurations", configurations},
               {"problems", std::move(problems)}});
    return kExitOk;
  }
  std::printf("%s: %llu configurations\n", spec.name().c_str(),
              static_cast<unsigned long long>(configurations));
  for (const client::Json& problem : problems) {
    std::printf("problem %s: %llu of %llu in the cartesian product satisfy the constraints\n",
                problem["problem"].dump().c_str(),
                static_cast<unsigned long long>(problem["configurations"].get<uint64_t>()),
                static_cast<unsigned long long>(problem["cartesian"].get<uint64_t>()));
    for (const client::Json& config : problem["first"]) {
      std::printf("  %s\n", config.dump().c_str());
    }
  }
  return kExitOk;
}

}  // namespace tf::cli
