// One compile-option policy: the toolchain's. What the coordinator accepts at
// submit is exactly what the batch builder accepts before building, for the
// options each toolchain documents and for joined or path-naming ones.
#include <gtest/gtest.h>

#include "common/files.h"
#include "common/subprocess.h"
#include "compiler/artifact_store.h"
#include "compiler/batch_builder.h"
#include "coordinator/coordinator.h"
#include "kernelspec/config.h"
#include "kernelspec/spec_loader.h"
#include "tests/test_util.h"
#include "vendors/toolchains.h"

namespace tf {
namespace {

namespace v1 = ::tunefleet::v1;

class CompilePolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    coordinator::CoordinatorOptions options;
    options.db_path = dir_ / "tunefleet.db";
    options.artifact_dir = dir_ / "artifacts";
    options.db_synchronous_full = false;
    auto started = coordinator::Coordinator::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    coordinator_ = std::move(*started);
    auto loaded =
        kernelspec::LoadSpecFile(testing::SourcePath("tests/integration/data/slow/slow.yaml"));
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    loaded_ = std::move(*loaded);
  }

  // Submitted with `option`: Ok, or the coordinator's refusal.
  Status AtSubmit(const std::string& option) {
    v1::SubmitJobRequest request;
    *request.mutable_spec() = loaded_.spec;
    request.mutable_spec()->add_compile_options(option);
    for (const auto& s : loaded_.sources) *request.add_sources() = s;
    return coordinator_->Submit(request).status();
  }

  // Handed to the batch builder with `option`: Ok, or its refusal before any
  // compiler runs (a successful setup builds one configuration).
  Status AtBuild(const std::string& option) {
    v1::KernelSpec spec = loaded_.spec;
    spec.add_compile_options(option);
    auto toolchain = vendors::MakeToolchain(spec);
    if (!toolchain.ok()) return toolchain.status();
    auto store = compiler::ArtifactStore::Open(dir_ / "build-artifacts");
    if (!store.ok()) return store.status();
    compiler::BatchBuilder builder(**toolchain, **store, compiler::BuildOptions());
    v1::Config config;
    auto* setting = config.add_settings();
    setting->set_name("MS");
    *setting->mutable_value() = kernelspec::IntValue(1);
    return builder.Build(spec, loaded_.sources, {config}, [](auto) {}).status();
  }

  testing::TempDir dir_;
  std::unique_ptr<coordinator::Coordinator> coordinator_;
  kernelspec::LoadedSpec loaded_;
};

TEST_F(CompilePolicyTest, SubmitAndBuildGiveTheSameAnswer) {
  // Documented by the host toolchain (host_toolchain.h), one entry or joined.
  for (const char* option :
       {"-O2", "-Ikernels", "-DTILE=4", "-D TILE=4", "-Ofast -funroll-loops"}) {
    Status submit = AtSubmit(option);
    EXPECT_TRUE(submit.ok()) << option << ": " << submit.message();
    Status build = AtBuild(option);
    EXPECT_TRUE(build.ok()) << option << ": " << build.message();
  }
  // Joined with a refused option, naming files, or reaching other tools.
  // -I=/etc and -I$SYSROOT/etc name a folder under the compiler's sysroot.
  for (const char* option :
       {"-DX=1 -fplugin=./evil.so", "-I/etc", "-I../x", "-I=/etc", "-I =/etc", "-I$SYSROOT/etc",
        "-o/etc/passwd", "-Wl,-rpath,/tmp", "-include/etc/passwd"}) {
    Status submit = AtSubmit(option);
    Status build = AtBuild(option);
    EXPECT_EQ(submit.code(), Code::kInvalidArgument) << option;
    EXPECT_EQ(build.code(), Code::kInvalidArgument) << option;
    EXPECT_EQ(submit.message(), build.message()) << option;
    EXPECT_NE(submit.message().find("compile_options[0]"), std::string::npos) << submit.message();
  }
}

// `tunefleet compile` refuses what the coordinator would, before building,
// with the spec's line.
TEST_F(CompilePolicyTest, TheCompileCommandRefusesTheSameWithTheSpecsLine) {
  for (const char* file : {"slow.yaml", "slow.cpp"}) {
    auto text = ReadFile(testing::SourcePath(std::string("tests/integration/data/slow/") + file));
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    std::string content = *text;
    if (std::string(file) == "slow.yaml") content += "compile_options: [\"-fplugin=./evil.so\"]\n";
    ASSERT_TRUE(WriteFileAtomic(dir_ / file, content).ok());
  }
  RunOptions options;
  options.timeout_s = 60;
  auto result = RunProcess({testing::BinaryPath("bin/tunefleet"), "compile", dir_ / "slow.yaml",
                            "--limit", "1", "--out", dir_ / "cli-artifacts"},
                           options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->exit_code, 2) << result->output;
  EXPECT_NE(result->output.find(dir_ / "slow.yaml" + ":15: compile_options[0]: "
                                                     "'-fplugin=./evil.so' is not allowed"),
            std::string::npos)
      << result->output;
  EXPECT_EQ(result->output.find("configurations over"), std::string::npos)
      << "refused before building: " << result->output;
}

}  // namespace
}  // namespace tf
