// The shipped CUDA examples, without a GPU: each spec loads and validates,
// its space on an H200's properties (and an A100's, for the specs with an
// Ampere path) has configurations, and a spread of them compiles with NVRTC
// for the architecture the coordinator would pick (sm_90a for the H200 when
// the spec leaves target.arch out), reporting resource use.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "compiler/batch_builder.h"
#include "kernelspec/config.h"
#include "kernelspec/space.h"
#include "kernelspec/spec_loader.h"
#include "kernelspec/validate.h"
#include "tests/test_util.h"
#include "vendors/toolchains.h"

namespace tf::nvidia {
namespace {

namespace v1 = ::tunefleet::v1;

const std::string kNvrtcPath = std::string(TF_BINARY_DIR) + "/bin/tunefleet-nvrtc";

struct Gpu {
  const char* arch;
  kernelspec::DeviceProperties props;
};
const Gpu kH200 = {"sm_90",
                   {{"cc_major", 9},
                    {"sm_count", 132},
                    {"max_threads_per_block", 1024},
                    {"max_shared_mem_per_block_optin", 232448}}};
const Gpu kA100 = {"sm_80",
                   {{"cc_major", 8},
                    {"sm_count", 108},
                    {"max_threads_per_block", 1024},
                    {"max_shared_mem_per_block_optin", 166912}}};

struct Example {
  const char* spec;
  std::vector<const Gpu*> gpus;
};

class CudaExamplesTest : public ::testing::TestWithParam<Example> {};

TEST_P(CudaExamplesTest, LoadsEnumeratesAndCompiles) {
  if (!std::filesystem::exists(kNvrtcPath)) {
    GTEST_SKIP() << "no CUDA toolkit with NVRTC at configure time: " << kNvrtcPath
                 << " was not built";
  }
  auto loaded =
      kernelspec::LoadSpecFile(std::string(TF_SOURCE_DIR) + "/examples/cuda/" + GetParam().spec);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  Status valid = kernelspec::ValidateSpec(loaded->spec, loaded->sources, {});
  ASSERT_TRUE(valid.ok()) << valid.message();

  for (const Gpu* gpu : GetParam().gpus) {
    SCOPED_TRACE(gpu->arch);
    auto space =
        kernelspec::SearchSpace::Create(loaded->spec, loaded->spec.problems(0), gpu->props);
    ASSERT_TRUE(space.ok()) << space.status().ToString();
    auto configs = space->Select(loaded->spec.search(), 100000);
    ASSERT_TRUE(configs.ok()) << configs.status().ToString();
    ASSERT_GE(configs->size(), 4u);
    // The first, the last and two between: different tiles and pipeline depths.
    const size_t n = configs->size();
    std::vector<v1::Config> sample = {(*configs)[0], (*configs)[n / 3], (*configs)[2 * n / 3],
                                      (*configs)[n - 1]};

    auto toolchain = vendors::MakeToolchain(loaded->spec, gpu->arch);
    ASSERT_TRUE(toolchain.ok()) << toolchain.status().ToString();
    if (loaded->spec.target().arch().empty()) {  // the bound device's own, wgmma included
      EXPECT_EQ((*toolchain)->target(), gpu == &kH200 ? "sm_90a" : "sm_80");
    }
    tf::testing::TempDir temp;
    auto store = compiler::ArtifactStore::Open(temp.path() + "/store");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    compiler::BuildOptions options;
    options.work_root = temp.path();
    options.parallelism = 2;
    options.batch_size = 4;
    std::vector<compiler::ConfigBuild> builds;
    auto stats = compiler::BatchBuilder(**toolchain, **store, options)
                     .Build(loaded->spec, loaded->sources, sample,
                            [&](std::vector<compiler::ConfigBuild> batch) {
                              builds.insert(builds.end(), batch.begin(), batch.end());
                            });
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    ASSERT_EQ(builds.size(), sample.size());
    for (const compiler::ConfigBuild& build : builds) {
      EXPECT_TRUE(build.ok) << build.diagnostics;
      EXPECT_GT(build.resources.vector_registers(), 0) << build.symbol;
      // A serialized WGMMA passes every check 30-40% slower; the specs prune
      // it (forbid_performance_warnings), so a kernel edit that serializes
      // configurations which do not spill anyway must show here, not on a GPU.
      const v1::ResourceUsage& used = build.resources;
      if (!used.performance_warnings().empty()) {
        EXPECT_GT(used.spill_store_bytes(), 0)
            << build.symbol << ": " << used.performance_warnings(0);
      }
    }
  }
}

// Edge tiles: every problem of the Hopper GEMM specs, the ragged one included, has
// configurations on both GPUs. Split-K is a Hopper knob offered where the tiles alone leave SMs
// idle (1024^3), not where they fill the GPU many times over (8192^3). Stream-K is offered on
// Hopper where the tiles are more than a wave with a partial last one (the ragged shape's 480
// tiles of 128 x 256 on 132 SMs), never where they are one wave or less (1024^3's 32 such
// tiles), where it would time STREAM_K = 0 again. The 256 x 152 tile (three whole waves at the
// ragged shape) is offered on Hopper with B column-major only, as its kernel path supports, and
// with the TMA store, whose 32-column C boxes fit it with 4 stages and clusters of 2 (the
// configuration that measured best there, bench/hopper_gemm/NOTES.md v8). GROUP_M 16 is offered
// wherever it orders the tiles otherwise than 8, 1024^3's 16 rows of 64 x 128 tiles included.
TEST(HopperGemmSpecs, EveryProblemHasConfigurationsAndSplitKOnlyWhereTilesAreFew) {
  for (const char* spec : {"hopper_gemm_f16_tn.yaml", "hopper_gemm_bf16_tn.yaml",
                           "hopper_gemm_f16_nn.yaml", "hopper_gemm_bf16_nn.yaml"}) {
    SCOPED_TRACE(spec);
    auto loaded =
        kernelspec::LoadSpecFile(std::string(TF_SOURCE_DIR) + "/examples/cuda/hopper_gemm/" + spec);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    bool ragged = false;
    const bool tn = std::string(spec).find("_tn.") != std::string::npos;
    for (const Gpu* gpu : {&kH200, &kA100}) {
      for (const v1::Problem& problem : loaded->spec.problems()) {
        const std::string shape = kernelspec::ProblemText(problem);
        SCOPED_TRACE(std::string(gpu->arch) + " " + shape);
        auto space = kernelspec::SearchSpace::Create(loaded->spec, problem, gpu->props);
        ASSERT_TRUE(space.ok()) << space.status().ToString();
        auto configs = space->Select(loaded->spec.search(), 1000000);
        ASSERT_TRUE(configs.ok()) << configs.status().ToString();
        EXPECT_FALSE(configs->empty());
        std::map<std::string, int64_t> p;
        for (const auto& var : problem.vars()) p[var.name()] = var.value();
        int split = 0, stream = 0, wide = 0, wide_4_stages_clustered = 0, column_major_64x128 = 0;
        for (const v1::Config& config : *configs) {
          std::map<std::string, int64_t> v;
          for (const v1::ParamSetting& setting : config.settings()) {
            v[setting.name()] = setting.value().int_value();
          }
          // GROUP_M 16 only where it orders the tiles otherwise than 8: over 8 rows of them.
          const int64_t tile_rows =
              (p["M"] + v["BM"] * v["CLUSTER_M"] - 1) / (v["BM"] * v["CLUSTER_M"]);
          if (v["GROUP_M"] == 16) {
            EXPECT_GT(tile_rows, 8);
          }
          if (v["GROUP_M"] == 16 && v["BM"] == 64 && v["BN"] == 128 && tile_rows == 16) {
            ++column_major_64x128;
          }
          if (v["SPLIT_K"] > 1) ++split;
          if (v["BN"] == 152) {
            ++wide;
            EXPECT_EQ(v["BM"], 256);
            EXPECT_EQ(v["CONSUMERS"], 2);
            EXPECT_EQ(v["TMA_STORE"], 1);
            EXPECT_LE(v["STAGES"], 4);  // 5 x 51 KiB of stages alone exceed 227 KiB
            if (v["STAGES"] == 4 && v["CLUSTER_M"] == 2) ++wide_4_stages_clustered;
          }
          if (v["STREAM_K"] == 0) continue;
          ++stream;
          const int64_t cluster_tiles = (p["M"] + v["BM"] * v["CLUSTER_M"] - 1) /
                                        (v["BM"] * v["CLUSTER_M"]) *
                                        ((p["N"] + v["BN"] - 1) / v["BN"]);
          const int64_t wave = 132 / v["CLUSTER_M"];
          EXPECT_TRUE(cluster_tiles > wave && cluster_tiles % wave != 0) << cluster_tiles;
        }
        if (gpu == &kA100 || !tn) {
          EXPECT_EQ(wide, 0);
        }
        if (gpu == &kA100) {
          EXPECT_EQ(stream, 0);
        }
        if (gpu == &kH200 && shape == "M=3000,N=5000,K=2000") {
          EXPECT_GT(stream, 0);
          if (tn) {
            EXPECT_GT(wide_4_stages_clustered, 0);
          }
        }
        if (gpu == &kA100 || shape == "M=8192,N=8192,K=8192") {
          EXPECT_EQ(split, 0);
        }
        if (gpu == &kH200 && shape == "M=1024,N=1024,K=1024") {
          EXPECT_GT(split, 0);
          // All 16 rows of 64 x 128 tiles in one group: 6% faster than GROUP_M 8 on an H100
          // (bench/hopper_gemm/NOTES.md v12).
          EXPECT_GT(column_major_64x128, 0);
        }
        ragged |= shape == "M=3000,N=5000,K=2000";
      }
    }
    EXPECT_TRUE(ragged) << "the specs tune a shape that is no multiple of any tile";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Specs, CudaExamplesTest,
    ::testing::Values(Example{"transpose/transpose.yaml", {&kH200}},
                      Example{"gemm/gemm.yaml", {&kH200}},
                      Example{"hopper_gemm/hopper_gemm_f16_tn.yaml", {&kH200, &kA100}},
                      Example{"hopper_gemm/hopper_gemm_bf16_nn.yaml", {&kH200, &kA100}},
                      Example{"attention/attention_f16_d128.yaml", {&kH200}},
                      Example{"attention/attention_bf16_d128.yaml", {&kH200}},
                      Example{"attention/attention_f16_d64.yaml", {&kH200}},
                      Example{"attention/attention_bf16_d64.yaml", {&kH200}}),
    [](const ::testing::TestParamInfo<Example>& info) {
      return std::filesystem::path(info.param.spec).stem().string();
    });

}  // namespace
}  // namespace tf::nvidia
