// `tunefleet compile`: builds a spec's candidates on this machine, the way the
// coordinator would, to check a kernel and its space before submitting it.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "client/cli/build_failures.h"
#include "client/cli/cli_util.h"
#include "client/cli/commands.h"
#include "client/cli/spec_space.h"
#include "client/cli/text_format.h"
#include "common/number_text.h"
#include "compiler/artifact_store.h"
#include "compiler/batch_builder.h"
#include "kernelspec/config.h"
#include "kernelspec/space.h"
#include "kernelspec/spec_loader.h"
#include "kernelspec/validate.h"
#include "vendors/toolchains.h"

namespace tf::cli {
namespace {

using client::Json;
using kernelspec::DeviceProperties;

// $XDG_CACHE_HOME/tunefleet/artifacts, else ~/.cache/tunefleet/artifacts:
// content-addressed, so a second compile of the same candidates is cheap.
std::string DefaultArtifactDir() {
  if (const char* cache = std::getenv("XDG_CACHE_HOME"); cache && *cache) {
    return std::string(cache) + "/tunefleet/artifacts";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::string(home) + "/.cache/tunefleet/artifacts";
  }
  return "tunefleet-artifacts";
}

}  // namespace

int RunCompile(const GlobalOptions& global, const CompileOptions& options) {
  Result<kernelspec::LoadedSpec> loaded = kernelspec::LoadSpecFile(options.spec_path);
  if (!loaded.ok()) return FailUsage(loaded.status());
  v1::KernelSpec& spec = loaded->spec;
  if (!options.target.empty()) spec.mutable_target()->set_arch(options.target);
  // An arch from --target is the command line's error, not the file's line.
  auto fail_spec = [&](const Status& status) {
    constexpr std::string_view kArch = "target.arch: ";
    if (!options.target.empty() && status.message().starts_with(kArch)) {
      return FailUsage(
          Status::InvalidArgument("--target: " + status.message().substr(kArch.size())));
    }
    return FailSpec(*loaded, status);
  };
  if (Status status = vendors::CompleteTarget(&spec); !status.ok()) return fail_spec(status);
  if (Status valid = kernelspec::ValidateSpec(spec, loaded->sources, kernelspec::SpecLimits());
      !valid.ok()) {
    return fail_spec(valid);
  }
  // A toolchain this build lacks is said before the device properties it would need.
  Result<std::unique_ptr<compiler::Toolchain>> toolchain = vendors::MakeToolchain(spec);
  if (!toolchain.ok()) return FailUsage(toolchain.status());
  // What the coordinator checks at submit (compile_options, define-style values), with lines.
  if (Status valid = (*toolchain)->Validate(spec); !valid.ok()) return fail_spec(valid);
  if ((*toolchain)->target().empty()) {
    return FailUsage(Status::InvalidArgument(
        "target.arch: the spec names no architecture; pass --target with the arch a worker "
        "reports for the device (tunefleet workers)"));
  }
  Result<DeviceProperties> props = TargetProperties(spec, options.device_props);
  if (!props.ok()) return FailUsage(props.status());
  Result<std::vector<v1::Config>> configs =
      EnumerateConfigs(spec, *props, options.limit, options.seed);
  if (!configs.ok()) return FailSpec(*loaded, configs.status());  // constraints[i]: ...
  const std::string out_dir = options.out_dir.empty() ? DefaultArtifactDir() : options.out_dir;
  Result<std::unique_ptr<compiler::ArtifactStore>> store = compiler::ArtifactStore::Open(out_dir);
  if (!store.ok()) return Fail(store.status());

  std::fprintf(stderr, "%s: %s over %s, toolchain %s for %s\n", spec.name().c_str(),
               CountText(configs->size(), "configuration").c_str(),
               CountText(spec.problems_size(), "problem").c_str(), (*toolchain)->name().c_str(),
               (*toolchain)->target().c_str());
  std::vector<compiler::ConfigBuild> failures;
  std::set<std::string> artifacts;
  size_t resolved = 0;
  compiler::BuildOptions build_options;
  build_options.batch_size = options.batch_size;
  build_options.parallelism = options.jobs;
  compiler::BatchBuilder builder(**toolchain, **store, build_options);
  // The builder calls this from its threads, one call at a time.
  Result<compiler::BuildStats> stats =
      builder.Build(spec, loaded->sources, *configs, [&](std::vector<compiler::ConfigBuild> batch) {
        resolved += batch.size();
        size_t failed = 0;
        for (compiler::ConfigBuild& build : batch) {
          if (build.ok) {
            artifacts.insert(build.artifact_sha256);
          } else {
            ++failed;
            failures.push_back(std::move(build));
          }
        }
        std::fprintf(stderr, "[%zu/%zu] %zu built, %zu failed\n", resolved, configs->size(),
                     batch.size() - failed, failed);
      });
  if (!stats.ok()) return Fail(stats.status());
  if (!stats->note.empty()) std::fprintf(stderr, "%s\n", stats->note.c_str());

  if (global.json) {
    Json failed = Json::array();
    for (const compiler::ConfigBuild& build : failures) {
      failed.push_back(
          {{"config", client::ConfigJson(build.config)}, {"diagnostics", build.diagnostics}});
    }
    PrintJson({{"kernel", spec.name()},
               {"toolchain", (*toolchain)->name()},
               {"target", (*toolchain)->target()},
               {"configurations", stats->configs},
               {"batches", stats->batches},
               {"compiler_runs", stats->compiler_runs},
               {"failed_configs", stats->failed_configs},
               {"wall_seconds", stats->wall_seconds},
               {"cpu_seconds", stats->cpu_seconds},
               {"artifact_dir", (*store)->dir()},
               {"note", stats->note},
               {"artifacts", Json(artifacts)},
               {"failures", std::move(failed)}});
  } else {
    std::printf("%s in %s, %s, %lld failed\n", CountText(stats->configs, "configuration").c_str(),
                CountText(stats->batches, "batch", "batches").c_str(),
                CountText(stats->compiler_runs, "compiler run").c_str(),
                static_cast<long long>(stats->failed_configs));
    std::printf("build time %s wall, %.1f CPU seconds; %zu artifacts in %s\n",
                FormatSeconds(stats->wall_seconds).c_str(), stats->cpu_seconds, artifacts.size(),
                (*store)->dir().c_str());
    std::vector<FailedBuild> failed;
    for (const compiler::ConfigBuild& build : failures) {
      failed.push_back({kernelspec::ConfigKey(build.config), build.diagnostics});
    }
    PrintBuildFailures(stdout, failed);
  }
  return failures.empty() ? kExitOk : kExitJobFailed;
}

}  // namespace tf::cli
