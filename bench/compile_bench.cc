// Build cost of grouped compilation: compiles every configuration of a spec
// once per batch size (in a fresh artifact store each time) and prints the
// compiler CPU-seconds per configuration and per candidate (a configuration
// on one problem). The baseline is one compiler process per candidate, as a
// tuner does that compiles each candidate on its own: the first batch size
// (1 by default) gives the cost of one process, and TuneFleet builds each
// configuration once for all problems, since problem sizes are run-time
// scalars. Needs no GPU: CUDA kernels are cross-compiled.
//
//   compile_bench --spec examples/cuda/gemm/gemm.yaml --target sm_90
//       --device-prop max_shared_mem_per_block_optin=232448 --batch-size 1,8,32
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>

#include "client/cli/spec_space.h"
#include "compiler/artifact_store.h"
#include "compiler/batch_builder.h"
#include "kernelspec/spec_loader.h"
#include "kernelspec/validate.h"
#include "vendors/toolchains.h"

namespace {

namespace v1 = ::tunefleet::v1;
using tf::Status;

int Fail(const Status& status) {
  std::fprintf(stderr, "compile_bench: %s\n", status.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Compiler CPU-seconds per candidate, grouped batches against one process each"};
  std::string spec_path, target, work_root = "/tmp";
  std::vector<int> batch_sizes = {1, 8, 16};
  std::vector<std::string> device_props;
  int jobs = 0;
  size_t max_configs = 0;
  app.add_option("--spec", spec_path, "kernel spec (YAML)")->required();
  app.add_option("--target", target, "architecture, e.g. sm_90 (default: the spec's)");
  app.add_option("--batch-size", batch_sizes, "batch sizes to compare, the baseline first")
      ->delimiter(',');
  app.add_option("--device-prop", device_props, "NAME=VALUE for device.* in constraints");
  app.add_option("--jobs", jobs, "concurrent compiler runs (0: one per hardware thread)");
  app.add_option("--max-configs", max_configs, "build only the first N configurations");
  app.add_option("--work-root", work_root, "where artifacts and build directories go");
  CLI11_PARSE(app, argc, argv);

  auto loaded = tf::kernelspec::LoadSpecFile(spec_path);
  if (!loaded.ok()) return Fail(loaded.status());
  v1::KernelSpec& spec = loaded->spec;
  if (!target.empty()) spec.mutable_target()->set_arch(target);
  if (auto valid =
          tf::kernelspec::ValidateSpec(spec, loaded->sources, tf::kernelspec::SpecLimits());
      !valid.ok()) {
    return Fail(valid);
  }
  auto props = tf::cli::TargetProperties(spec, device_props);
  if (!props.ok()) return Fail(props.status());
  size_t candidates = 0;
  auto configs = tf::cli::EnumerateConfigs(spec, *props, 0, 1, &candidates);
  if (!configs.ok()) return Fail(configs.status());
  if (max_configs > 0 && configs->size() > max_configs) {
    std::printf("building the first %zu of %zu configurations (%zu candidates)\n", max_configs,
                configs->size(), candidates);
    candidates = candidates * max_configs / configs->size();  // the same share of each problem
    configs->resize(max_configs);
  }
  auto toolchain = tf::vendors::MakeToolchain(spec);
  if (!toolchain.ok()) return Fail(toolchain.status());
  if ((*toolchain)->target().empty()) {
    return Fail(Status::InvalidArgument("the spec names no target.arch: pass --target"));
  }

  std::printf("%s: %zu configurations, %zu candidates over %d problems, %s %s for %s\n",
              spec.name().c_str(), configs->size(), candidates, spec.problems_size(),
              (*toolchain)->name().c_str(), (*toolchain)->version().c_str(),
              (*toolchain)->target().c_str());
  std::printf("%10s %6s %6s %8s %8s %13s %13s %14s\n", "batch_size", "runs", "failed", "cpu_s",
              "wall_s", "cpu_s/config", "cpu_s/cand", "vs_per_cand");
  double per_process = 0;  // CPU-seconds of one configuration compiled alone
  for (int batch_size : batch_sizes) {
    std::string store_dir = work_root + "/compile_bench_" + std::to_string(batch_size);
    std::filesystem::remove_all(store_dir);
    auto store = tf::compiler::ArtifactStore::Open(store_dir);
    if (!store.ok()) return Fail(store.status());
    tf::compiler::BuildOptions options;
    options.batch_size = batch_size;
    options.parallelism = jobs;
    options.work_root = work_root;
    tf::compiler::BatchBuilder builder(**toolchain, **store, options);
    auto stats = builder.Build(spec, loaded->sources, *configs,
                               [](std::vector<tf::compiler::ConfigBuild>) {});
    std::filesystem::remove_all(store_dir);
    if (!stats.ok()) return Fail(stats.status());
    double per_config = stats->cpu_seconds / static_cast<double>(stats->configs);
    double per_candidate = stats->cpu_seconds / static_cast<double>(candidates);
    if (per_process == 0) per_process = per_config;
    std::printf("%10d %6lld %6lld %8.2f %8.2f %13.4f %13.4f %13.2fx\n", batch_size,
                static_cast<long long>(stats->compiler_runs),
                static_cast<long long>(stats->failed_configs), stats->cpu_seconds,
                stats->wall_seconds, per_config, per_candidate, per_process / per_candidate);
    std::fflush(stdout);
  }
  return 0;
}
