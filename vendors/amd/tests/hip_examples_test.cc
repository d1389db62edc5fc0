// The shipped HIP examples, without a GPU: each spec loads and validates, its
// space on each supported target's properties has configurations, and a
// spread of them compiles for that target with the resource figures read
// from the code object and within the target's limits (or pruned with a
// reason, which the examples' constraints should make rare).
#include <gtest/gtest.h>

#include <filesystem>

#include "compiler/batch_builder.h"
#include "kernelspec/space.h"
#include "kernelspec/spec_loader.h"
#include "kernelspec/validate.h"
#include "tests/test_util.h"
#include "vendors/toolchains.h"

namespace tf::amd {
namespace {

namespace v1 = ::tunefleet::v1;

struct Gpu {
  const char* arch;
  int wave_size;
};
// MI210/MI250X, MI300A (gfx940), MI300X, RX 6800 (gfx1030), RX 7900 (gfx1100).
const Gpu kGpus[] = {
    {"gfx90a", 64}, {"gfx940", 64}, {"gfx942", 64}, {"gfx1030", 32}, {"gfx1100", 32}};

kernelspec::DeviceProperties Properties(const Gpu& gpu) {
  return {{"max_threads_per_block", 1024},
          {"max_shared_mem_per_block", 65536},
          {"wave_size", gpu.wave_size},
          {"compute_units", 104}};
}

class HipExamplesTest : public ::testing::TestWithParam<const char*> {};

TEST_P(HipExamplesTest, LoadsEnumeratesAndCompilesForEveryTarget) {
  auto loaded =
      kernelspec::LoadSpecFile(std::string(TF_SOURCE_DIR) + "/examples/hip/" + GetParam());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  Status valid = kernelspec::ValidateSpec(loaded->spec, loaded->sources, {});
  ASSERT_TRUE(valid.ok()) << valid.message();
  ASSERT_EQ(loaded->spec.target().arch(), "") << "the examples build for the bound GPU's target";

  for (const Gpu& gpu : kGpus) {
    SCOPED_TRACE(gpu.arch);
    const kernelspec::DeviceProperties props = Properties(gpu);
    const v1::Problem& problem = loaded->spec.problems(0);
    auto space = kernelspec::SearchSpace::Create(loaded->spec, problem, props);
    ASSERT_TRUE(space.ok()) << space.status().ToString();
    auto configs = space->Select(loaded->spec.search(), 100000);
    ASSERT_TRUE(configs.ok()) << configs.status().ToString();
    ASSERT_GE(configs->size(), 3u);
    // The first, the middle and the last: different tiles and depths.
    const size_t n = configs->size();
    std::vector<v1::Config> sample = {(*configs)[0], (*configs)[n / 2], (*configs)[n - 1]};

    auto toolchain = vendors::MakeToolchain(loaded->spec, gpu.arch);
    ASSERT_TRUE(toolchain.ok()) << toolchain.status().ToString();
    EXPECT_EQ((*toolchain)->target(), gpu.arch);
    tf::testing::TempDir temp;
    auto store = compiler::ArtifactStore::Open(temp.path() + "/store");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    compiler::BuildOptions options;
    options.work_root = temp.path();
    options.parallelism = 1;  // all three in one run: grouping is what is tested
    options.batch_size = 3;
    options.timeout_s = 600;  // a batch takes seconds on an idle core; CI's may be far slower
    std::vector<compiler::ConfigBuild> builds;
    auto stats = compiler::BatchBuilder(**toolchain, **store, options)
                     .Build(loaded->spec, loaded->sources, sample,
                            [&](std::vector<compiler::ConfigBuild> batch) {
                              builds.insert(builds.end(), batch.begin(), batch.end());
                            });
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(stats->compiler_runs, 1);
    ASSERT_EQ(builds.size(), sample.size());
    for (const compiler::ConfigBuild& build : builds) {
      ASSERT_TRUE(build.ok) << build.diagnostics;
      EXPECT_GT(build.resources.vector_registers(), 0) << build.symbol;
      EXPECT_EQ(build.resources.wave_size(), gpu.wave_size) << build.symbol;
      EXPECT_FALSE(build.reference_symbol.empty());
      Status fits =
          (*toolchain)->CheckResources(loaded->spec, build.config, problem, build.resources, props);
      EXPECT_TRUE(fits.ok()) << build.symbol << ": " << fits.message();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Specs, HipExamplesTest,
                         ::testing::Values("transpose/transpose.yaml", "gemm/gemm.yaml"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::filesystem::path(info.param).stem().string();
                         });

}  // namespace
}  // namespace tf::amd
