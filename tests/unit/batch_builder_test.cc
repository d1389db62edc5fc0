#include "compiler/batch_builder.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "kernelspec/config.h"
#include "tests/test_util.h"
#include "vendors/cpu/host_toolchain.h"

namespace tf::compiler {
namespace {

namespace v1 = ::tunefleet::v1;

// out[i] = 2 * in[i], unrolled by U. `body_prefix` goes first in the template
// body, to make chosen configurations fail or hang.
std::string KernelSource(const std::string& body_prefix) {
  return "#include \"detail/twice.h\"\n"
         "template <int U>\n"
         "void scale(const float* in, float* out, int64_t n) {\n" +
         body_prefix +
         "  int64_t i = 0;\n"
         "  for (; i + U <= n; i += U)\n"
         "    for (int u = 0; u < U; ++u) out[i + u] = Twice(in[i + u]);\n"
         "  for (; i < n; ++i) out[i] = Twice(in[i]);\n"
         "}\n"
         "void scale_reference(const float* in, float* out, int64_t n) {\n"
         "  for (int64_t i = 0; i < n; ++i) out[i] = 2 * in[i];\n"
         "}\n";
}

v1::SourceFile Source(const std::string& path, const std::string& content) {
  v1::SourceFile file;
  file.set_path(path);
  file.set_content(content);
  return file;
}

std::vector<v1::Config> Configs(int first, int last) {
  std::vector<v1::Config> configs;
  for (int u = first; u <= last; ++u) {
    auto* setting = configs.emplace_back().add_settings();
    setting->set_name("U");
    *setting->mutable_value() = kernelspec::IntValue(u);
  }
  return configs;
}

int64_t U(const ConfigBuild& build) { return build.config.settings(0).value().int_value(); }

class BatchBuilderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = ArtifactStore::Open(dir_ + "/store");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    auto host = cpu::HostToolchain::Detect();
    ASSERT_TRUE(host.ok()) << host.status().ToString();
    host_ = std::move(*host);
    options_.work_root = dir_ + "/work";
    options_.parallelism = 2;

    spec_.set_name("scale");
    spec_.set_language("cpp");
    spec_.set_source("scale.h");
    spec_.set_entry("scale<{U}>");
    auto* in = spec_.add_buffers();
    in->set_name("in");
    in->set_dtype("f32");
    auto* out = spec_.add_buffers();
    out->set_name("out");
    out->set_dtype("f32");
    out->set_output(true);
    spec_.add_scalars("n");
    spec_.mutable_verify()->set_reference("scale_reference");
    SetKernel("");
  }

  void SetKernel(const std::string& body_prefix) {
    sources_ = {Source("scale.h", KernelSource(body_prefix)),
                Source("detail/twice.h", "inline float Twice(float x) { return x + x; }\n")};
  }

  // Builds and records every delivered batch.
  Result<BuildStats> Build(const std::vector<v1::Config>& configs,
                           const std::atomic<bool>* cancel = nullptr) {
    BatchBuilder builder(*host_, *store_, options_);
    return builder.Build(
        spec_, sources_, configs,
        [this](std::vector<ConfigBuild> batch) {
          delivered_.push_back(batch);
          for (auto& build : batch) builds_[U(build)] = build;
        },
        cancel);
  }

  tf::testing::TempDir temp_;
  const std::string dir_ = temp_.path();
  std::unique_ptr<ArtifactStore> store_;
  std::unique_ptr<cpu::HostToolchain> host_;
  BuildOptions options_;
  v1::KernelSpec spec_;
  std::vector<v1::SourceFile> sources_;
  std::vector<std::vector<ConfigBuild>> delivered_;
  std::map<int64_t, ConfigBuild> builds_;
};

using KernelFn = void (*)(void* const*, const int64_t*);

TEST_F(BatchBuilderTest, BuildsEveryConfigInOneRunPerBatch) {
  options_.batch_size = 4;
  auto stats = Build(Configs(1, 10));
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->configs, 10);
  EXPECT_EQ(stats->batches, 3);
  EXPECT_EQ(stats->compiler_runs, 3);
  EXPECT_EQ(stats->failed_configs, 0);
  EXPECT_GT(stats->cpu_seconds, 0);
  EXPECT_EQ(delivered_.size(), 3u);
  ASSERT_EQ(builds_.size(), 10u);
  std::set<std::string> artifacts;
  for (const auto& [u, build] : builds_) {
    EXPECT_TRUE(build.ok) << u << ": " << build.diagnostics;
    EXPECT_TRUE(store_->Has(build.artifact_sha256)) << u;
    EXPECT_EQ(build.symbol, kernelspec::CandidateSymbol(build.config));
    EXPECT_EQ(build.reference_symbol, kernelspec::kReferenceSymbol);
    artifacts.insert(build.artifact_sha256);
  }
  EXPECT_EQ(artifacts.size(), 3u);
  // The private build directory is gone.
  EXPECT_TRUE(std::filesystem::is_empty(options_.work_root));
}

TEST_F(BatchBuilderTest, ArtifactExportsCallableCandidatesAndReference) {
  auto stats = Build(Configs(3, 4));
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  const ConfigBuild& build = builds_.at(3);
  ASSERT_TRUE(build.ok) << build.diagnostics;
  void* library = dlopen(store_->PathOf(build.artifact_sha256).c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  auto candidate = reinterpret_cast<KernelFn>(dlsym(library, build.symbol.c_str()));
  auto reference = reinterpret_cast<KernelFn>(dlsym(library, kernelspec::kReferenceSymbol));
  ASSERT_NE(candidate, nullptr) << dlerror();
  ASSERT_NE(reference, nullptr) << dlerror();

  std::vector<float> in = {1, 2, 3, 4, 5, 6, 7}, out(7), expected(7);
  void* buffers[] = {in.data(), out.data()};
  const int64_t scalars[] = {7};
  candidate(buffers, scalars);
  void* reference_buffers[] = {in.data(), expected.data()};
  reference(reference_buffers, scalars);
  EXPECT_EQ(out, (std::vector<float>{2, 4, 6, 8, 10, 12, 14}));
  EXPECT_EQ(out, expected);
  dlclose(library);
}

TEST_F(BatchBuilderTest, FailingConfigsAreIsolatedAndTheRestBuilt) {
  SetKernel("  static_assert(U != 3 && U != 6, \"U may not be 3 or 6\");\n");
  auto stats = Build(Configs(1, 32));
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_EQ(builds_.size(), 32u);
  for (const auto& [u, build] : builds_) {
    if (u == 3 || u == 6) {
      EXPECT_FALSE(build.ok) << u;
      // The compiler's own error heads the text, where tables show it.
      const std::string headline = build.diagnostics.substr(0, build.diagnostics.find('\n'));
      EXPECT_TRUE(headline.starts_with("compilation failed: ")) << build.diagnostics;
      EXPECT_NE(headline.find("error: static assertion failed: U may not be 3 or 6"),
                std::string::npos)
          << build.diagnostics;
      EXPECT_NE(build.diagnostics.find("U = " + std::to_string(u)), std::string::npos)
          << build.diagnostics;
      EXPECT_LE(build.diagnostics.size(), options_.max_diagnostics_bytes + 64);
    } else {
      EXPECT_TRUE(build.ok) << u << ": " << build.diagnostics;
    }
  }
  EXPECT_EQ(stats->failed_configs, 2);
  // Bisection costs a few extra runs, far from one run per configuration.
  EXPECT_LT(stats->compiler_runs, stats->configs / 2);
}

// Code outside the template fails whatever the configuration: every
// configuration fails with the compiler's message, after one run per batch
// under way and one of the shared code, however many configurations there are.
TEST_F(BatchBuilderTest, BrokenSharedCodeFailsEveryConfigInFewRuns) {
  sources_[0].set_content(KernelSource("") + "int Helper() { return undeclared_thing; }\n");
  options_.batch_size = 4;
  for (int count : {8, 64}) {
    SCOPED_TRACE(count);
    builds_.clear();
    auto stats = Build(Configs(1, count));
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    EXPECT_EQ(stats->batches, count / 4);
    EXPECT_LE(stats->compiler_runs, options_.parallelism + 1);
    EXPECT_EQ(stats->failed_configs, count);
    EXPECT_NE(stats->note.find("shares does not compile"), std::string::npos) << stats->note;
    ASSERT_EQ(builds_.size(), static_cast<size_t>(count));
    for (const auto& [u, build] : builds_) {
      EXPECT_FALSE(build.ok) << u;
      const std::string headline = build.diagnostics.substr(0, build.diagnostics.find('\n'));
      EXPECT_TRUE(headline.starts_with("compilation failed: scale.h:")) << build.diagnostics;
      EXPECT_NE(headline.find("error: "), std::string::npos) << build.diagnostics;
      EXPECT_NE(headline.find("undeclared_thing"), std::string::npos) << build.diagnostics;
    }
  }
  EXPECT_TRUE(std::filesystem::is_empty(options_.work_root));
}

// When the shared code compiles, configurations that all fail are each
// isolated, with their own message.
TEST_F(BatchBuilderTest, ConfigsThatAllFailAreEachIsolated) {
  SetKernel("  static_assert(U > 8, \"U is too small\");\n");
  options_.batch_size = 4;
  auto stats = Build(Configs(1, 8));
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->failed_configs, 8);
  EXPECT_TRUE(stats->note.empty()) << stats->note;
  ASSERT_EQ(builds_.size(), 8u);
  for (const auto& [u, build] : builds_) {
    EXPECT_FALSE(build.ok) << u;
    EXPECT_NE(build.diagnostics.find("U is too small"), std::string::npos) << build.diagnostics;
    EXPECT_NE(build.diagnostics.find("U = " + std::to_string(u)), std::string::npos)
        << build.diagnostics;
  }
}

// Define-style copies share no code to compile alone: a failing batch is
// split as ever, and only the failing configuration fails.
TEST_F(BatchBuilderTest, DefineStyleFailureIsIsolated) {
  spec_.set_param_style("define");
  spec_.set_entry("scale");
  sources_ = {Source("scale.h",
                     "#include <cstdint>\n"
                     "#if U == 3\n#error U may not be 3\n#endif\n"
                     "void scale(const float* in, float* out, int64_t n) {\n"
                     "  for (int64_t i = 0; i < n; ++i) out[i] = U * in[i];\n"
                     "}\n"
                     "void scale_reference(const float* in, float* out, int64_t n) {\n"
                     "  for (int64_t i = 0; i < n; ++i) out[i] = U * in[i];\n"
                     "}\n")};
  options_.batch_size = 4;
  auto stats = Build(Configs(1, 8));
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->failed_configs, 1);
  ASSERT_EQ(builds_.size(), 8u);
  for (const auto& [u, build] : builds_) EXPECT_EQ(build.ok, u != 3) << u << build.diagnostics;
  EXPECT_NE(builds_.at(3).diagnostics.find("U may not be 3"), std::string::npos)
      << builds_.at(3).diagnostics;
}

// Eight configurations on four threads: four runs of two, not one run of
// eight, so that a device waiting for a small build waits least.
TEST_F(BatchBuilderTest, SpreadsFewConfigurationsOverEveryThread) {
  options_.batch_size = 16;
  options_.parallelism = 4;
  auto stats = Build(Configs(1, 8));
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->batches, 4);
  EXPECT_EQ(stats->compiler_runs, 4);
  ASSERT_EQ(delivered_.size(), 4u);
  for (const auto& batch : delivered_) EXPECT_EQ(batch.size(), 2u);
}

TEST_F(BatchBuilderTest, HangingCompileTimesOut) {
  // For U == 2, constant-evaluates 1000 variables (a count that depends on U,
  // so that no other configuration evaluates them), each of which burns the
  // compiler's whole constexpr operation budget (seconds each).
  sources_.push_back(Source("slow.h",
                            "#include <utility>\n"
                            "constexpr long Spin(long n) {\n"
                            "  long x = 0;\n"
                            "  for (long i = 0; i < n; ++i)\n"
                            "    for (long j = 0; j < n; ++j) x += i ^ j;\n"
                            "  return x;\n"
                            "}\n"
                            "template <long I> constexpr long kSlow = Spin(100000 + I);\n"
                            "template <long... I>\n"
                            "constexpr long SumSlow(std::integer_sequence<long, I...>) {\n"
                            "  return (kSlow<I> + ...);\n"
                            "}\n"));
  sources_[0].set_content("#include \"slow.h\"\n" +
                          KernelSource("  if constexpr (U == 2) static_assert(SumSlow("
                                       "std::make_integer_sequence<long, 500 * U>()) != 0);\n"));
  options_.batch_size = 1;
  options_.timeout_s = 3;
  auto stats = Build(Configs(1, 2));
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_TRUE(builds_.at(1).ok) << builds_.at(1).diagnostics;
  EXPECT_FALSE(builds_.at(2).ok);
  EXPECT_EQ(builds_.at(2).diagnostics.rfind("compilation timed out after 3 s", 0), 0u)
      << builds_.at(2).diagnostics;
}

TEST_F(BatchBuilderTest, DisallowedCompileOptionIsRefusedBeforeBuilding) {
  spec_.add_compile_options("-O2 -fplugin=./evil.so");
  auto stats = Build(Configs(1, 2));
  EXPECT_EQ(stats.status().code(), Code::kInvalidArgument);
  EXPECT_NE(stats.status().message().find("'-fplugin=./evil.so'"), std::string::npos)
      << stats.status().message();
  EXPECT_TRUE(delivered_.empty());
}

TEST_F(BatchBuilderTest, UnsafeSourcePathIsRefused) {
  sources_.push_back(Source("../outside.h", ""));
  auto stats = Build(Configs(1, 1));
  EXPECT_EQ(stats.status().code(), Code::kInvalidArgument);
  EXPECT_NE(stats.status().message().find("'../outside.h'"), std::string::npos)
      << stats.status().message();
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/outside.h"));
}

TEST_F(BatchBuilderTest, DuplicateConfigIsRefused) {
  std::vector<v1::Config> configs = Configs(1, 2);
  configs.push_back(configs[0]);
  auto stats = Build(configs);
  EXPECT_EQ(stats.status().code(), Code::kInvalidArgument);
  EXPECT_NE(stats.status().message().find("U=1"), std::string::npos) << stats.status().message();
}

TEST_F(BatchBuilderTest, CancelStopsBeforeTheNextRun) {
  options_.batch_size = 1;
  options_.parallelism = 1;
  std::atomic<bool> cancel{false};
  BatchBuilder builder(*host_, *store_, options_);
  int batches = 0;
  auto stats = builder.Build(
      spec_, sources_, Configs(1, 3),
      [&](std::vector<ConfigBuild>) {
        ++batches;
        cancel = true;
      },
      &cancel);
  EXPECT_EQ(stats.status().code(), Code::kCancelled);
  EXPECT_EQ(batches, 1);
}

}  // namespace
}  // namespace tf::compiler
