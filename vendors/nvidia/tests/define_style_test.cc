// Define-style kernels (param_style: define) through NVRTC: many
// configurations of one macro-configured source per compiler run, and the
// fallback for sources that cannot be copied.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "client/kerneltuner_import.h"
#include "common/files.h"
#include "common/subprocess.h"
#include "compiler/batch_builder.h"
#include "kernelspec/config.h"
#include "kernelspec/space.h"
#include "kernelspec/spec_loader.h"
#include "tests/imported_convolution.h"
#include "tests/test_util.h"
#include "vendors/nvidia/nvrtc_toolchain.h"
#include "vendors/toolchains.h"
#include "worker/devices.h"
#include "worker/runner_supervisor.h"

namespace tf::nvidia {
namespace {

namespace v1 = ::tunefleet::v1;

const std::string kNvrtcPath = std::string(TF_BINARY_DIR) + "/bin/tunefleet-nvrtc";

class DefineStyleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kNvrtcPath)) {
      GTEST_SKIP() << "no CUDA toolkit with NVRTC at configure time: " << kNvrtcPath
                   << " was not built";
    }
    auto store = compiler::ArtifactStore::Open(temp_ / "store");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    options_.work_root = temp_ / "work";
    options_.parallelism = 2;
  }

  Result<compiler::BuildStats> Build(const std::string& arch, const kernelspec::LoadedSpec& spec,
                                     const std::vector<v1::Config>& configs) {
    auto toolchain = NvrtcToolchain::Detect(arch, kNvrtcPath);
    if (!toolchain.ok()) return toolchain.status();
    builds_.clear();
    compiler::BatchBuilder builder(**toolchain, *store_, options_);
    return builder.Build(spec.spec, spec.sources, configs,
                         [this](std::vector<compiler::ConfigBuild> batch) {
                           for (auto& build : batch) builds_.push_back(std::move(build));
                         });
  }

  tf::testing::TempDir temp_;
  std::unique_ptr<compiler::ArtifactStore> store_;
  compiler::BuildOptions options_;
  std::vector<compiler::ConfigBuild> builds_;
};

// The Kernel Tuner convolution, imported from its T1 file, its source
// unchanged: a seeded spread of its space in batches of 6 for both
// architectures.
TEST_F(DefineStyleTest, ImportedConvolutionBuildsInGroupedBatches) {
  auto spec = tf::testing::ImportedConvolution();
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  auto configs = tf::testing::ConvolutionSpread(*spec);
  ASSERT_TRUE(configs.ok()) << configs.status().ToString();
  ASSERT_EQ(configs->size(), 12u);
  options_.batch_size = 6;

  for (const std::string arch : {"sm_80", "sm_90"}) {
    SCOPED_TRACE(arch);
    auto stats = Build(arch, *spec, *configs);
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(stats->batches, 2);
    EXPECT_TRUE(stats->note.empty()) << stats->note;
    // A tile too large for static shared memory is the kernel's own limit.
    tf::testing::ExpectGroupedConvolutionCopies(
        builds_, configs->size(), "shared",
        [](const compiler::ConfigBuild& build) { EXPECT_GT(build.resources.shared_bytes(), 0); });
  }
}

kernelspec::LoadedSpec ScaleSpec(const std::string& source) {
  const std::string yaml = R"yaml(
kernel: scale
language: cuda
source: scale.cu
entry: scale
param_style: define
params: {FACTOR: [1, 2, 3], BLOCK: [32, 64]}
problems: [{n: 1024}]
scalars: [n]
buffers:
  out: {dtype: f32, count: n, output: true}
  coeffs: {dtype: f32, count: 4, memory: constant}
launch: {grid: ["ceil_div(n, BLOCK)"], block: [BLOCK]}
)yaml";
  auto spec = kernelspec::ParseSpecYaml(yaml, "scale.yaml");
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  kernelspec::LoadedSpec loaded;
  loaded.spec = *spec;
  v1::SourceFile& file = loaded.sources.emplace_back();
  file.set_path("scale.cu");
  file.set_content(source);
  return loaded;
}

std::vector<v1::Config> ScaleConfigs(const kernelspec::LoadedSpec& spec) {
  auto space = kernelspec::SearchSpace::Create(spec.spec, spec.spec.problems(0), {});
  EXPECT_TRUE(space.ok()) << space.status().ToString();
  auto configs = space->Select(spec.spec.search(), 100);
  EXPECT_TRUE(configs.ok());
  return configs.ok() ? *configs : std::vector<v1::Config>{};
}

// extern "C" kernels and a __constant__ symbol in every copy: renamed per
// copy, all six configurations in one compiler run.
TEST_F(DefineStyleTest, ExternCKernelsGroupWithTheirConstants) {
  kernelspec::LoadedSpec spec = ScaleSpec(
      "#include <cuda_fp16.h>\n"
      "#define SCALED(x) ((x) * FACTOR)\n"
      "__constant__ float coeffs[4];\n"
      "extern \"C\" __global__ void scale(float* out, const float* c, long long n) {\n"
      "  long long i = blockIdx.x * (long long)BLOCK + threadIdx.x;\n"
      "  if (i < n) out[i] = SCALED(coeffs[i % 4]);\n"
      "}\n");
  std::vector<v1::Config> configs = ScaleConfigs(spec);
  ASSERT_EQ(configs.size(), 6u);
  options_.batch_size = 16;
  options_.parallelism = 1;  // one run holds all six copies
  auto stats = Build("sm_90", spec, configs);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->compiler_runs, 1);
  EXPECT_EQ(stats->failed_configs, 0);
  std::set<std::string> symbols;
  for (const compiler::ConfigBuild& build : builds_) {
    ASSERT_TRUE(build.ok) << build.diagnostics;
    // extern "C": the renamed name itself, unmangled.
    EXPECT_TRUE(build.symbol.starts_with("scale_tf_copy")) << build.symbol;
    symbols.insert(build.symbol);
  }
  EXPECT_EQ(symbols.size(), 6u);
}

// A source with an include guard would show its first copy only: each
// configuration gets a compiler run of its own, and the build says why.
TEST_F(DefineStyleTest, IncludeGuardFallsBackToOneConfigurationPerRun) {
  kernelspec::LoadedSpec spec = ScaleSpec(
      "#ifndef SCALE_CU\n#define SCALE_CU\n"
      "__global__ void scale(float* out, long long n) {\n"
      "  long long i = blockIdx.x * (long long)BLOCK + threadIdx.x;\n"
      "  if (i < n) out[i] = FACTOR;\n"
      "}\n#endif\n");
  spec.spec.mutable_buffers()->RemoveLast();
  std::vector<v1::Config> configs = ScaleConfigs(spec);
  options_.batch_size = 16;
  auto stats = Build("sm_80", spec, configs);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->compiler_runs, 6);
  EXPECT_EQ(stats->failed_configs, 0);
  EXPECT_NE(stats->note.find("include guard SCALE_CU"), std::string::npos) << stats->note;
}

// The device side finds a copy's __constant__ symbol by the name C++ gives
// it; NVRTC's own lowering of the variable must agree.
TEST_F(DefineStyleTest, ConstantSymbolIsTheLoweredName) {
  const std::string tu =
      "namespace tf_copy0 { __constant__ float coeffs[4]; }\n"
      "namespace tf_copy12 { __constant__ float coeffs[4];\n"
      "extern \"C\" __global__ void k_tf_copy12(float* o) { o[0] = coeffs[0]; } }\n"
      "__constant__ float plain[4];\n";
  ASSERT_TRUE(WriteFileAtomic(temp_ / "c.cu", tu).ok());
  auto run = RunProcess({kNvrtcPath, "--arch", "sm_80", "--tu", temp_ / "c.cu", "--cubin",
                         temp_ / "c.cubin", "--names", temp_ / "c.names", "--name",
                         "&tf_copy0::coeffs", "--name", "&tf_copy12::coeffs", "--name", "&plain"},
                        tf::testing::WithTimeout(120));
  ASSERT_TRUE(run.ok() && run->success()) << (run.ok() ? run->output : run.status().ToString());
  auto names = ReadFile(temp_ / "c.names");
  ASSERT_TRUE(names.ok());
  EXPECT_NE(
      names->find("&tf_copy0::coeffs\t" +
                  kernelspec::ConstantSymbol("_ZN8tf_copy012scale_tf_copy0EPf", "coeffs") + "\n"),
      std::string::npos)
      << *names;
  EXPECT_NE(names->find("&tf_copy12::coeffs\t" +
                        kernelspec::ConstantSymbol("k_tf_copy12", "coeffs") + "\n"),
            std::string::npos)
      << *names;
  EXPECT_NE(names->find("&plain\t" + kernelspec::ConstantSymbol("_Z5scalePf", "plain") + "\n"),
            std::string::npos)
      << *names;
}

// On a GPU: six configurations of one grouped CUBIN, each reading its own
// copy of a __constant__ table that the runner fills before every run, are
// checked against a reference that reads the same values from global memory.
// Without a GPU it skips (run it on one: ctest -R DefineStyleTest.Constant).
TEST_F(DefineStyleTest, ConstantMemoryIsFilledForEveryCopyOnTheGpu) {
  auto devices = worker::DiscoverDevices("nvidia", "");
  if (!devices.ok() || devices->empty()) {
    GTEST_SKIP() << "no NVIDIA GPU found (libcuda not loadable or no device); skipping";
  }
  const auto& gpu = devices->front();
  kernelspec::LoadedSpec spec = ScaleSpec(
      "__constant__ float coeffs[4];\n"
      "extern \"C\" __global__ void scale(float* out, const float* c, long long n) {\n"
      "  long long i = blockIdx.x * (long long)BLOCK + threadIdx.x;\n"
      "#if FACTOR == 2\n"
      "  if (i < n) out[i] = coeffs[i & 3] * (float)(i % 7);\n"
      "#else\n"
      "  if (i < n) out[i] = coeffs[i % 4] * (float)(i % 7);\n"
      "#endif\n"
      "}\n"
      "extern \"C\" __global__ void scale_reference(float* out, const float* c, long long n) {\n"
      "  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
      "  if (i < n) out[i] = c[i % 4] * (float)(i % 7);\n"
      "}\n");
  spec.spec.mutable_verify()->set_reference("scale_reference");
  spec.spec.mutable_verify()->add_grid("ceil_div(n, 128)");
  spec.spec.mutable_verify()->add_block("128");
  spec.spec.mutable_benchmark()->set_min_time_ms(1);
  spec.spec.mutable_benchmark()->set_min_repeats(3);
  spec.spec.mutable_benchmark()->set_max_repeats(10);
  spec.spec.mutable_benchmark()->set_timeout_s(10);
  std::vector<v1::Config> configs = ScaleConfigs(spec);
  options_.batch_size = 16;
  options_.parallelism = 1;  // one module holds every copy's __constant__
  auto stats = Build(gpu.info.arch(), spec, configs);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_EQ(stats->compiler_runs, 1);

  v1::Lease lease;
  lease.set_lease_id(1);
  *lease.mutable_spec() = spec.spec;
  lease.set_reference_symbol(builds_.front().reference_symbol);
  int64_t id = 1;
  for (const compiler::ConfigBuild& build : builds_) {
    ASSERT_TRUE(build.ok) << build.diagnostics;
    v1::LeasedCandidate* candidate = lease.add_candidates();
    candidate->set_candidate_id(id++);
    candidate->set_symbol(build.symbol);
    *candidate->mutable_config() = build.config;
    *candidate->mutable_problem() = spec.spec.problems(0);
  }
  worker::RunnerSupervisor supervisor(TF_BINARY_DIR "/bin/tunefleet-runner", gpu);
  std::map<int64_t, v1::CandidateResult> results =
      tf::testing::RunLease(supervisor, lease, store_->PathOf(builds_.front().artifact_sha256));
  ASSERT_EQ(results.size(), 6u);
  for (const auto& [candidate, result] : results) {
    EXPECT_EQ(result.status(), v1::RESULT_STATUS_OK) << candidate << ": " << result.error();
  }
}

}  // namespace
}  // namespace tf::nvidia
