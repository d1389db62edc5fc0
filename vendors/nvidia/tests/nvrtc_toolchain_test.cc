#include "vendors/nvidia/nvrtc_toolchain.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/transpose_build_fixture.h"
#include "vendors/nvidia/ptxas_log.h"
#include "vendors/nvidia/resource_check.h"
#include "vendors/toolchains.h"

namespace tf::nvidia {
namespace {

namespace v1 = ::tunefleet::v1;

// Captured from tunefleet-nvrtc (NVRTC 13.0, sm_90, -maxrregcount=32), with a
// spilling kernel's frame line and a device function's properties added.
const char kPtxasLog[] =
    R"(ptxas info    : Overriding maximum register limit 256 for '_Z5spillILi512EEvPfxx' with  32 of maxrregcount option
ptxas info    : 0 bytes gmem
ptxas info    : Function properties for _Z6helperf
ptxas         .     24 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_Z9transposeILi32ELi8EEvPKfPfxx' for 'sm_90'
ptxas info    : Function properties for _Z9transposeILi32ELi8EEvPKfPfxx
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 26 registers, used 1 barriers, 4224 bytes smem
ptxas info    : Compile time = 34.771 ms
ptxas info    : Compiling entry function '_Z5spillILi512EEvPfxx' for 'sm_90'
ptxas info    : Function properties for _Z5spillILi512EEvPfxx
ptxas         .     2048 bytes stack frame, 120 bytes spill stores, 96 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 2048 bytes cumulative stack size
ptxas info    : Compile time = 30.744 ms
)";

// Through the language table, as the coordinator matches jobs to devices.
TEST(NvrtcArchTest, ArchitectureSpecificCodeRunsOnItsBaseArchitectureOnly) {
  v1::KernelSpec cuda;
  cuda.set_language("cuda");
  EXPECT_TRUE(vendors::CodeRunsOn(cuda, "sm_90", "sm_90"));
  EXPECT_TRUE(vendors::CodeRunsOn(cuda, "sm_90a", "sm_90"));
  EXPECT_FALSE(vendors::CodeRunsOn(cuda, "sm_90a", "sm_100"));
  EXPECT_FALSE(vendors::CodeRunsOn(cuda, "sm_90", "sm_80"));
  EXPECT_FALSE(vendors::CodeRunsOn(cuda, "sm_80", "sm_90"));
}

TEST(PtxasLogTest, ReadsEachEntryFunctionsResources) {
  auto usage = ParsePtxasResourceUsage(kPtxasLog);
  ASSERT_EQ(usage.size(), 2u);  // the device function is no kernel
  const v1::ResourceUsage& transpose = usage.at("_Z9transposeILi32ELi8EEvPKfPfxx");
  EXPECT_EQ(transpose.vector_registers(), 26);
  EXPECT_EQ(transpose.shared_bytes(), 4224);
  EXPECT_EQ(transpose.scratch_bytes(), 0);
  EXPECT_EQ(transpose.wave_size(), 32);
  EXPECT_EQ(transpose.spill_store_bytes(), 0);
  const v1::ResourceUsage& spill = usage.at("_Z5spillILi512EEvPfxx");
  EXPECT_EQ(spill.vector_registers(), 32);
  EXPECT_EQ(spill.shared_bytes(), 0);
  EXPECT_EQ(spill.scratch_bytes(), 2048);
  EXPECT_EQ(spill.spill_store_bytes(), 120);
  EXPECT_EQ(spill.spill_load_bytes(), 96);
}

// ptxas 13.0 for sm_90a: C7512 as the attention example drew it (the name
// shortened), C7515 as it names a device function, and C7519, which ptxas
// prints beside a serialized wgmma but which reports no loss of its own.
TEST(PtxasLogTest, KeepsEachEntryFunctionsPerformanceWarnings) {
  const std::string log =
      "ptxas info    : (C7512) Potential Performance Loss: wgmma.mma_async instructions are "
      "serialized due to insufficient register resources for the function '_Z9attentionv'\n"
      "ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are "
      "serialized due to non wgmma instructions defining accumulator registers of a wgmma between "
      "start and end of the pipeline stage in the function 'selp_b16'\n"
      "ptxas info    : (C7519) warpgroup.arrive is injected in around line 39 by compiler to "
      "allow use of registers in GMMA in function '_Z9attentionv'\n"
      "ptxas info    : Compiling entry function '_Z9attentionv' for 'sm_90a'\n"
      "ptxas info    : Used 168 registers, used 1 barriers, 1024 bytes smem\n"
      "ptxas info    : Compiling entry function '_Z4copyv' for 'sm_90a'\n"
      "ptxas info    : Used 16 registers, used 0 barriers\n";
  auto usage = ParsePtxasResourceUsage(log);
  ASSERT_EQ(usage.size(), 2u);  // selp_b16 is no entry: its warning is dropped
  const auto& warnings = usage.at("_Z9attentionv").performance_warnings();
  ASSERT_EQ(warnings.size(), 1) << "C7519 reports no loss";
  EXPECT_EQ(warnings[0],
            "C7512: wgmma.mma_async instructions are serialized due to insufficient register "
            "resources");
  EXPECT_EQ(usage.at("_Z9attentionv").vector_registers(), 168);
  EXPECT_EQ(usage.at("_Z4copyv").performance_warnings_size(), 0);
  EXPECT_TRUE(ParsePtxasResourceUsage(kPtxasLog)
                  .at("_Z5spillILi512EEvPfxx")
                  .performance_warnings()
                  .empty());
}

TEST(PtxasLogTest, ExplainsStaticSharedMemoryOverTheLimit) {
  EXPECT_EQ(ExplainPtxasFailure(kPtxasLog), "") << "4224 bytes are within the limit";
  const std::string over =
      "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
      "ptxas info    : Used 10 registers, used 1 barriers, 68816 bytes smem\n";
  EXPECT_EQ(ExplainPtxasFailure(over),
            "error: entry function 'k' uses 68816 bytes of static shared memory, more than the "
            "49152 a kernel may declare (ptxas stopped there)\n");
}

const std::string kNvrtcPath = std::string(TF_BINARY_DIR) + "/bin/tunefleet-nvrtc";

class CudaToolchainTest : public tf::testing::TransposeBuildTest {
 protected:
  CudaToolchainTest() : TransposeBuildTest("cuda", "transpose.cuh") {}

  void SetUp() override {
    if (!std::filesystem::exists(kNvrtcPath)) {
      GTEST_SKIP() << "no CUDA toolkit with NVRTC at configure time: " << kNvrtcPath
                   << " was not built";
    }
    TransposeBuildTest::SetUp();
  }

  Result<std::unique_ptr<compiler::Toolchain>> MakeToolchain(const std::string& arch) override {
    TF_ASSIGN_OR_RETURN(std::unique_ptr<NvrtcToolchain> toolchain,
                        NvrtcToolchain::Detect(arch, kNvrtcPath));
    return std::unique_ptr<compiler::Toolchain>(std::move(toolchain));
  }
};

TEST_F(CudaToolchainTest, ReportsNvrtcVersionAndArch) {
  auto toolchain = Toolchain("sm_90a");
  ASSERT_NE(toolchain, nullptr);
  EXPECT_EQ(toolchain->name(), "cuda-nvrtc");
  EXPECT_TRUE(toolchain->version().starts_with("NVRTC ")) << toolchain->version();
  EXPECT_EQ(toolchain->target(), "sm_90a");
}

TEST_F(CudaToolchainTest, BuildsGroupedBatchesIntoCubinsForEachArch) {
  for (const std::string arch : {"sm_90", "sm_80"}) {
    ExpectGroupedBatches(arch, {Config(8, 2), Config(16, 4), Config(24, 8), Config(32, 8),
                                Config(40, 8), Config(48, 8)});
  }
}

TEST_F(CudaToolchainTest, FailsEveryConfigurationOnceWhenTheSharedCodeFails) {
  ExpectSharedFailureReportedOnce("sm_90");
}

TEST_F(CudaToolchainTest, IsolatesAConfigurationThatFailsToCompile) {
  ExpectFailureIsolated("sm_90");
  // NVRTC's own message heads the text, where tables show it.
  const std::string& text = builds_.at(24).diagnostics;
  const std::string headline = text.substr(0, text.find('\n'));
  EXPECT_TRUE(headline.starts_with("compilation failed: transpose.cuh(")) << text;
  EXPECT_NE(headline.find("error: static assertion failed"), std::string::npos) << text;
  EXPECT_NE(headline.find("TILE 24 is refused"), std::string::npos) << text;
}

// What nvcc gives a kernel without asking (cuda_runtime.h's <math.h>
// constants) and the C headers kernels include under nvcc.
TEST_F(CudaToolchainTest, BuildsAKernelWrittenForNvcc) {
  sources_[0].set_content(
      "#include <cassert>\n#include <cfloat>\n#include <climits>\n#include <cmath>\n"
      "#include <cstddef>\n#include <cstdio>\n#include <math.h>\n#include <cuda_fp16.h>\n" +
      KernelSource("  constexpr float kLowest = -INFINITY;\n"
                   "  float v = fmaxf(kLowest, float(M_PI) + FLT_EPSILON + (INT_MAX > 0));\n"
                   "  if (isnan(v + NAN) && v > FLT_MAX) printf(\"%f\\n\", v);\n"
                   "  assert(v > 0 && sizeof(std::size_t) == 8 && HUGE_VALF > DBL_MAX);\n"));
  auto stats = Build("sm_90", {Config(32, 8)});
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_TRUE(builds_.at(32).ok) << builds_.at(32).diagnostics;
}

// Hopper's WGMMA pipeline: a plain instruction writing a wgmma's accumulator
// before the group completes makes ptxas serialize the wgmmas, which it only
// reports as an info line; TILE 16 does so, TILE 8 has no wgmma.
TEST_F(CudaToolchainTest, RecordsAndPrunesSerializedWgmma) {
  SetKernel(
      "  if constexpr (TILE == 16) {\n"
      "    float d[4] = {0, 0, 0, 0};\n"
      "    uint64_t desc = reinterpret_cast<uint64_t>(in);\n"
      "    asm volatile(\n"
      "        \"wgmma.fence.sync.aligned;\\n\"\n"
      "        \"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %4, 1, 1, "
      "1, 0, 0;\\n\"\n"
      "        \"wgmma.commit_group.sync.aligned;\\n\"\n"
      "        \"mov.f32 %0, 0f3F800000;\\n\"\n"
      "        \"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %4, 1, 1, "
      "1, 0, 0;\\n\"\n"
      "        \"wgmma.commit_group.sync.aligned;\\n\"\n"
      "        \"wgmma.wait_group.sync.aligned 0;\\n\"\n"
      "        : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
      "        : \"l\"(desc));\n"
      "    out[threadIdx.x] = d[0] + d[1] + d[2] + d[3];\n"
      "  }\n");
  auto stats = Build("sm_90a", {Config(8, 2), Config(16, 4)});
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  for (int64_t tile : {8, 16}) ASSERT_TRUE(builds_.at(tile).ok) << builds_.at(tile).diagnostics;
  EXPECT_TRUE(builds_.at(8).resources.performance_warnings().empty());
  const v1::ResourceUsage& serialized = builds_.at(16).resources;
  ASSERT_EQ(serialized.performance_warnings_size(), 1) << builds_.at(16).diagnostics;
  EXPECT_TRUE(serialized.performance_warnings(0).starts_with("C75"))
      << serialized.performance_warnings(0);
  EXPECT_NE(serialized.performance_warnings(0).find("wgmma.mma_async instructions are serialized"),
            std::string::npos)
      << serialized.performance_warnings(0);

  const v1::Problem problem;
  EXPECT_TRUE(CheckResources(spec_, Config(16, 4), problem, serialized, {}).ok());
  spec_.set_forbid_performance_warnings(true);
  EXPECT_TRUE(CheckResources(spec_, Config(8, 2), problem, builds_.at(8).resources, {}).ok());
  Status pruned = CheckResources(spec_, Config(16, 4), problem, serialized, {});
  EXPECT_EQ(pruned.code(), Code::kFailedPrecondition);
  EXPECT_NE(pruned.message().find(serialized.performance_warnings(0)), std::string::npos)
      << pruned.message();
}

TEST_F(CudaToolchainTest, KillsACompilationPastItsTimeLimit) {
  options_.timeout_s = 0.001;
  auto stats = Build("sm_90", {Config(8, 2)});
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_EQ(builds_.size(), 1u);
  EXPECT_FALSE(builds_.at(8).ok);
  EXPECT_NE(builds_.at(8).diagnostics.find("timed out"), std::string::npos)
      << builds_.at(8).diagnostics;
}

TEST_F(CudaToolchainTest, AppliesAllowedOptions) {
  SetKernel("#if SCALE != 2\n#error SCALE is not 2\n#endif\n");
  // ptxas allows no fewer than 24 registers on sm_90; the kernel wants more.
  spec_.add_compile_options("-maxrregcount=24 --use_fast_math -D SCALE=2 -lineinfo");
  auto stats = Build("sm_90", {Config(32, 8)});
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_TRUE(builds_.at(32).ok) << builds_.at(32).diagnostics;
  EXPECT_LE(builds_.at(32).resources.vector_registers(), 24);
}

TEST_F(CudaToolchainTest, RefusesOptionsOutsideTheAllowlist) {
  auto toolchain = Toolchain("sm_90");
  ASSERT_NE(toolchain, nullptr);
  for (const std::string option : {"--output-directory=/tmp", "-Xptxas=-v", "--include-path=/etc",
                                   "-I/usr/include", "-DX=$(id)", "--pre-include=/etc/passwd"}) {
    spec_.clear_compile_options();
    spec_.add_compile_options(option);
    Status status = toolchain->Validate(spec_);
    EXPECT_EQ(status.code(), Code::kInvalidArgument) << option;
    EXPECT_NE(status.message().find("'" + option + "'"), std::string::npos) << status.message();
  }
}

TEST_F(CudaToolchainTest, IncludesHalfPrecisionHeadersForTheirBuffers) {
  auto toolchain = Toolchain("sm_90");
  ASSERT_NE(toolchain, nullptr);
  spec_.mutable_buffers(0)->set_dtype("f16");
  spec_.mutable_buffers(1)->set_dtype("bf16");
  auto tu = toolchain->GenerateBatch(spec_, {}, {Config(8, 2)});
  ASSERT_TRUE(tu.ok()) << tu.status().ToString();
  EXPECT_NE(tu->find("#include <cuda_fp16.h>"), std::string::npos) << *tu;
  EXPECT_NE(tu->find("#include <cuda_bf16.h>"), std::string::npos) << *tu;
  EXPECT_NE(tu->find("#include \"transpose.cuh\""), std::string::npos) << *tu;
  spec_.mutable_buffers(0)->set_dtype("f8");
  EXPECT_NE(toolchain->Validate(spec_).message().find("'f8'"), std::string::npos);
}

TEST_F(CudaToolchainTest, CompilesForTheSpecArchElseTheDevicesOwn) {
  EXPECT_EQ(CompileArch("sm_80", "sm_90"), "sm_80");
  EXPECT_EQ(CompileArch("", "sm_90"), "sm_90a");  // wgmma and setmaxnreg allowed
  EXPECT_EQ(CompileArch("", "sm_100"), "sm_100a");
  EXPECT_EQ(CompileArch("", "sm_86"), "sm_86");  // no arch-specific variant
  EXPECT_EQ(CompileArch("", ""), "");

  spec_.mutable_target()->set_arch("");
  auto bound = vendors::MakeToolchain(spec_, "sm_90");
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  EXPECT_EQ((*bound)->target(), "sm_90a");

  // Unbound: good for checks and the version, not for compiling.
  auto unbound = vendors::MakeToolchain(spec_);
  ASSERT_TRUE(unbound.ok()) << unbound.status().ToString();
  EXPECT_EQ((*unbound)->target(), "");
  EXPECT_TRUE((*unbound)->Validate(spec_).ok());
  auto batch = (*unbound)->GenerateBatch(spec_, {}, {});
  EXPECT_EQ(batch.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(batch.status().message().find("target.arch"), std::string::npos);

  spec_.mutable_target()->set_arch("gfx942");
  auto wrong = vendors::MakeToolchain(spec_, "sm_90");
  EXPECT_EQ(wrong.status().code(), Code::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("'gfx942'"), std::string::npos);
}

}  // namespace
}  // namespace tf::nvidia
