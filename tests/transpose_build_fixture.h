// A fixture for the tests of a GPU vendor's toolchain (vendors/*/tests): a
// tiled transpose over TILE and ROWS in the vendor's language, an artifact
// store in a temporary folder, and Build(), which runs the batch builder and
// keeps each delivered build by its TILE. A vendor's test names its language
// and source file and makes its toolchain; CUDA and HIP share the kernel text.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/files.h"
#include "compiler/batch_builder.h"
#include "kernelspec/config.h"
#include "tests/test_util.h"

namespace tf::testing {

class TransposeBuildTest : public ::testing::Test {
 protected:
  TransposeBuildTest(std::string language, std::string source_path)
      : language_(std::move(language)), source_path_(std::move(source_path)) {}

  // The toolchain that compiles for `arch`, or an error.
  virtual Result<std::unique_ptr<compiler::Toolchain>> MakeToolchain(const std::string& arch) = 0;

  void SetUp() override {
    auto store = compiler::ArtifactStore::Open(temp_ / "store");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    options_.work_root = temp_ / "work";
    options_.parallelism = 2;
    options_.batch_size = 4;

    spec_.set_name("transpose");
    spec_.set_language(language_);
    spec_.set_source(source_path_);
    spec_.set_entry("transpose<{TILE},{ROWS}>");
    auto* in = spec_.add_buffers();
    in->set_name("in");
    in->set_dtype("f32");
    auto* out = spec_.add_buffers();
    out->set_name("out");
    out->set_dtype("f32");
    out->set_output(true);
    spec_.add_scalars("n");
    spec_.add_scalars("m");
    spec_.mutable_launch()->add_grid("ceil_div(n, TILE)");
    spec_.mutable_launch()->add_block("TILE * ROWS");
    spec_.mutable_verify()->set_reference("transpose_reference");
    spec_.mutable_verify()->add_grid("ceil_div(n * m, 256)");
    spec_.mutable_verify()->add_block("256");
    SetKernel("");
  }

  // The transpose with `body_prefix` first in its template body (to make
  // chosen configurations fail), then `more` after it.
  void SetKernel(const std::string& body_prefix, const std::string& more = "") {
    sources_.clear();
    auto& source = sources_.emplace_back();
    source.set_path(source_path_);
    source.set_content(KernelSource(body_prefix) + more);
  }

  static std::string KernelSource(const std::string& body_prefix) {
    return "template <int TILE, int ROWS>\n"
           "__global__ void transpose(const float* in, float* out, int64_t n, int64_t m) {\n" +
           body_prefix +
           "  __shared__ float tile[TILE][TILE + 1];\n"
           "  int64_t x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;\n"
           "  for (int j = 0; j < TILE; j += ROWS)\n"
           "    if (x < m && y + j < n) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * m + x];\n"
           "  __syncthreads();\n"
           "  x = blockIdx.y * TILE + threadIdx.x;\n"
           "  y = blockIdx.x * TILE + threadIdx.y;\n"
           "  for (int j = 0; j < TILE; j += ROWS)\n"
           "    if (x < n && y + j < m) out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + "
           "j];\n"
           "}\n"
           "__global__ void transpose_reference(const float* in, float* out, int64_t n, "
           "int64_t m) {\n"
           "  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;\n"
           "  if (i < n * m) out[(i % m) * n + i / m] = in[i];\n"
           "}\n";
  }

  static tunefleet::v1::Config Config(int64_t tile, int64_t rows) {
    tunefleet::v1::Config config;
    for (auto [name, value] : {std::pair{"TILE", tile}, {"ROWS", rows}}) {
      auto* setting = config.add_settings();
      setting->set_name(name);
      *setting->mutable_value() = kernelspec::IntValue(value);
    }
    return config;
  }

  // The toolchain for `arch`, failing the test when there is none.
  std::unique_ptr<compiler::Toolchain> Toolchain(const std::string& arch) {
    auto toolchain = MakeToolchain(arch);
    EXPECT_TRUE(toolchain.ok()) << toolchain.status().ToString();
    return toolchain.ok() ? std::move(*toolchain) : nullptr;
  }

  // Builds `configs` for `arch` with toolchain_; every delivered build lands
  // in builds_, by its TILE.
  Result<compiler::BuildStats> Build(const std::string& arch,
                                     const std::vector<tunefleet::v1::Config>& configs) {
    toolchain_ = Toolchain(arch);
    if (!toolchain_) return Status::Unavailable("no toolchain");
    compiler::BatchBuilder builder(*toolchain_, *store_, options_);
    return builder.Build(spec_, sources_, configs,
                         [this](std::vector<compiler::ConfigBuild> batch) {
                           for (auto& build : batch) {
                             builds_[build.config.settings(0).value().int_value()] = build;
                           }
                         });
  }

  // What every toolchain does with the transpose for `arch`: `configs` (5 or
  // 6 of them) in two grouped batches on two threads, each build with its
  // instantiation's symbol, the reference, registers, its shared memory as
  // declared, an ELF artifact shared by its batch, within the target's limits.
  void ExpectGroupedBatches(const std::string& arch,
                            const std::vector<tunefleet::v1::Config>& configs) {
    SCOPED_TRACE(arch);
    builds_.clear();
    auto stats = Build(arch, configs);
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(stats->compiler_runs, 2);  // 3 per batch
    EXPECT_EQ(stats->failed_configs, 0);
    ASSERT_EQ(builds_.size(), configs.size());
    tunefleet::v1::Problem problem;
    for (auto [name, value] : {std::pair{"n", 1024}, {"m", 1024}}) {
      auto* var = problem.add_vars();
      var->set_name(name);
      var->set_value(value);
    }
    std::set<std::string> symbols, artifacts;
    for (const auto& [tile, build] : builds_) {
      ASSERT_TRUE(build.ok) << tile << ": " << build.diagnostics;
      // The lowered name of transpose<TILE,ROWS>.
      EXPECT_TRUE(build.symbol.starts_with("_Z9transposeILi" + std::to_string(tile) + "E"))
          << build.symbol;
      EXPECT_TRUE(build.reference_symbol.starts_with("_Z19transpose_reference"))
          << build.reference_symbol;
      EXPECT_GT(build.resources.vector_registers(), 0) << tile;
      EXPECT_EQ(build.resources.shared_bytes(), tile * (tile + 1) * 4) << tile;
      EXPECT_EQ(build.resources.spill_store_bytes(), 0) << tile;
      auto code = ReadFile(store_->PathOf(build.artifact_sha256));
      ASSERT_TRUE(code.ok()) << code.status().ToString();
      EXPECT_TRUE(
          code->starts_with("\x7f"
                            "ELF"))
          << tile;
      EXPECT_TRUE(
          toolchain_->CheckResources(spec_, build.config, problem, build.resources, {}).ok())
          << tile;
      symbols.insert(build.symbol);
      artifacts.insert(build.artifact_sha256);
    }
    EXPECT_EQ(symbols.size(), configs.size());
    EXPECT_EQ(artifacts.size(), 2u);
  }

  // A configuration that fails to compile fails alone, with the compiler's
  // message; the others of its batch are built. Its diagnostics are in
  // builds_.at(24).
  void ExpectFailureIsolated(const std::string& arch) {
    SetKernel("  static_assert(TILE != 24, \"TILE 24 is refused\");\n");
    auto stats = Build(arch, {Config(8, 2), Config(16, 4), Config(24, 8), Config(32, 8)});
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(stats->failed_configs, 1);
    EXPECT_GT(stats->compiler_runs, 1);
    ASSERT_EQ(builds_.size(), 4u);
    EXPECT_FALSE(builds_.at(24).ok);
    EXPECT_NE(builds_.at(24).diagnostics.find("TILE 24 is refused"), std::string::npos)
        << builds_.at(24).diagnostics;
    for (int64_t tile : {8, 16, 32}) {
      EXPECT_TRUE(builds_.at(tile).ok) << builds_.at(tile).diagnostics;
    }
  }

  // Code that fails outside the template fails every configuration with the
  // compiler's message (a headline naming `undeclared_thing`), in no more
  // runs than the batches under way and one of the shared code.
  void ExpectSharedFailureReportedOnce(const std::string& arch) {
    SetKernel("", "__device__ int Helper() { return undeclared_thing; }\n");
    options_.batch_size = 2;
    std::vector<tunefleet::v1::Config> configs;
    for (int64_t tile = 8; tile <= 64; tile += 8) configs.push_back(Config(tile, 8));
    auto stats = Build(arch, configs);
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(stats->batches, 4);
    EXPECT_LE(stats->compiler_runs, options_.parallelism + 1);
    EXPECT_EQ(stats->failed_configs, 8);
    ASSERT_EQ(builds_.size(), 8u);
    for (const auto& [tile, build] : builds_) {
      EXPECT_FALSE(build.ok) << tile;
      const std::string headline = build.diagnostics.substr(0, build.diagnostics.find('\n'));
      EXPECT_TRUE(headline.starts_with("compilation failed: ")) << build.diagnostics;
      EXPECT_NE(headline.find("undeclared_thing"), std::string::npos) << build.diagnostics;
    }
  }

  const std::string language_, source_path_;
  TempDir temp_;
  std::unique_ptr<compiler::ArtifactStore> store_;
  compiler::BuildOptions options_;
  tunefleet::v1::KernelSpec spec_;
  std::vector<tunefleet::v1::SourceFile> sources_;
  std::unique_ptr<compiler::Toolchain> toolchain_;
  std::map<int64_t, compiler::ConfigBuild> builds_;
};

}  // namespace tf::testing
