#include "worker/bundle_builder.h"

#include <spdlog/spdlog.h>

#include "common/files.h"
#include "kernelspec/config.h"
#include "tunefleet/v1/worker.pb.h"
#include "vendors/toolchains.h"

namespace tf::worker {

namespace v1 = ::tunefleet::v1;

Result<std::unique_ptr<BundleBuilder>> BundleBuilder::Open(const std::string& dir) {
  TF_ASSIGN_OR_RETURN(auto store, compiler::ArtifactStore::Open(dir));
  return std::unique_ptr<BundleBuilder>(new BundleBuilder(std::move(store)));
}

Result<std::shared_ptr<const BuiltBundle>> BundleBuilder::Get(
    const std::string& sha256, const std::string& bundle_path, const std::string& arch,
    std::optional<compiler::BuildStats>* built_now) {
  std::lock_guard lock(mu_);
  const std::string key = sha256 + "@" + arch;
  if (auto found = built_.find(key); found != built_.end()) {
    spdlog::info("bundle {} for {}: already built", sha256.substr(0, 12), arch);
    return found->second;
  }
  TF_ASSIGN_OR_RETURN(std::string bytes, ReadFile(bundle_path));
  v1::BuildBundle bundle;
  if (!bundle.ParseFromString(bytes)) {
    return Status::InvalidArgument("artifact " + sha256 + " is not a build bundle");
  }
  TF_ASSIGN_OR_RETURN(auto toolchain, vendors::MakeToolchain(bundle.spec(), arch));
  auto built = std::make_shared<BuiltBundle>();
  compiler::BuildOptions options;  // spreads the bundle over the host's cores
  options.work_root = store_->dir() + "/work";
  TF_RETURN_IF_ERROR(MakeDirs(options.work_root));
  compiler::BatchBuilder builder(*toolchain, *store_, options);
  std::vector<v1::Config> configs(bundle.configs().begin(), bundle.configs().end());
  std::vector<v1::SourceFile> sources(bundle.sources().begin(), bundle.sources().end());
  std::mutex outcomes_mu;  // on_batch is called from builder threads
  TF_ASSIGN_OR_RETURN(compiler::BuildStats stats,
                      builder.Build(bundle.spec(), sources, configs,
                                    [&](std::vector<compiler::ConfigBuild> builds) {
                                      std::lock_guard outcomes_lock(outcomes_mu);
                                      for (auto& b : builds)
                                        built->by_config[kernelspec::ConfigKey(b.config)] =
                                            std::move(b);
                                    }));
  spdlog::info(
      "bundle {} for {}: compiled {} configurations with {} in {} compiler runs "
      "({:.1f} s), {} failed",
      sha256.substr(0, 12), toolchain->target(), stats.configs, toolchain->name(),
      stats.compiler_runs, stats.wall_seconds, stats.failed_configs);
  built->toolchain = std::move(toolchain);
  built_[key] = built;
  if (built_now) *built_now = stats;
  return std::shared_ptr<const BuiltBundle>(built);
}

}  // namespace tf::worker
