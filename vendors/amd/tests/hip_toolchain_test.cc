#include "vendors/amd/hip_toolchain.h"

#include <gtest/gtest.h>

#include "tests/transpose_build_fixture.h"
#include "vendors/amd/code_object.h"
#include "vendors/toolchains.h"

namespace tf::amd {
namespace {

namespace v1 = ::tunefleet::v1;

// Captured from `llvm-readelf-19 --notes --relocs --symbols --wide` on a
// gfx942 code object of transpose<64,8> with one marker variable, trimmed.
const char kReadelf[] = R"(
Relocation section '.rela.dyn' at offset 0xbf8 contains 1 entries:
    Offset             Info             Type               Symbol's Value  Symbol's Name + Addend
0000000000003f80  000000000000000d R_AMDGPU_RELATIVE64               2900

Symbol table '.symtab' contains 10 entries:
   Num:    Value          Size Type    Bind   Vis       Ndx Name
     0: 0000000000000000     0 NOTYPE  LOCAL  DEFAULT   UND 
     1: 0000000000003f80     8 OBJECT  LOCAL  DEFAULT     9 _ZL14tf_candidate_0
     2: 0000000000003f88     0 NOTYPE  LOCAL  HIDDEN     10 _DYNAMIC
     5: 0000000000002500   892 FUNC    GLOBAL PROTECTED   8 _Z9transposeILi16ELi4EEvPKfPfll
     7: 0000000000002900  1660 FUNC    GLOBAL PROTECTED   8 _Z9transposeILi64ELi8EEvPKfPfll
     8: 0000000000000cc0    64 OBJECT  GLOBAL PROTECTED   7 _Z9transposeILi64ELi8EEvPKfPfll.kd

Displaying notes found in: .note
  Owner                Data size 	Description
  AMDGPU               0x00000777	NT_AMDGPU_METADATA (AMDGPU Metadata)
    AMDGPU Metadata:
        ---
amdhsa.kernels:
  - .agpr_count:     4
    .args:
      - .address_space:  global
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
    .group_segment_fixed_size: 16640
    .max_flat_workgroup_size: 1024
    .name:           _Z9transposeILi64ELi8EEvPKfPfll
    .private_segment_fixed_size: 24
    .sgpr_count:     20
    .sgpr_spill_count: 1
    .symbol:         _Z9transposeILi64ELi8EEvPKfPfll.kd
    .vgpr_count:     12
    .vgpr_spill_count: 2
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa--gfx942
amdhsa.version:
  - 1
  - 2
...
)";

TEST(CodeObjectTest, ReadsResourcesAndWhichKernelEachMarkerNames) {
  auto report = ParseReadelfReport(kReadelf);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(report->kernels.size(), 1u);
  const v1::ResourceUsage& usage = report->kernels.at("_Z9transposeILi64ELi8EEvPKfPfll");
  EXPECT_EQ(usage.vector_registers(), 12);
  EXPECT_EQ(usage.scalar_registers(), 20);
  EXPECT_EQ(usage.accumulator_registers(), 4);
  EXPECT_EQ(usage.shared_bytes(), 16640);
  EXPECT_EQ(usage.scratch_bytes(), 24);
  EXPECT_EQ(usage.spill_store_bytes(), 12);  // 3 registers
  EXPECT_EQ(usage.max_threads_per_block(), 1024);
  EXPECT_EQ(usage.wave_size(), 64);
  EXPECT_EQ(report->markers.at(LocalVariableSymbol("tf_candidate_0")),
            "_Z9transposeILi64ELi8EEvPKfPfll");
  EXPECT_EQ(ParseReadelfReport("no notes here").status().code(), Code::kInvalidArgument);
}

TEST(HipArchTest, CodeRunsOnItsOwnGfxTargetOnly) {
  v1::KernelSpec hip;
  hip.set_language("hip");
  EXPECT_TRUE(vendors::CodeRunsOn(hip, "gfx942", "gfx942"));
  EXPECT_TRUE(vendors::CodeRunsOn(hip, "gfx90a", "gfx90a:sramecc+:xnack-"));
  EXPECT_FALSE(vendors::CodeRunsOn(hip, "gfx940", "gfx942"));
  EXPECT_FALSE(vendors::CodeRunsOn(hip, "gfx1030", "gfx1100"));
  EXPECT_EQ(CompileArch("", "gfx90a:sramecc+:xnack-"), "gfx90a");
  EXPECT_EQ(CompileArch("gfx940", "gfx942"), "gfx940");
}

// More live values than 1024 threads leave registers for: it spills.
const char kSpillKernel[] =
    "template <int N>\n"
    "__global__ void __launch_bounds__(1024) spill(const float* in, float* out, int64_t n, "
    "int64_t m) {\n"
    "  float v[N];\n"
    "#pragma unroll\n"
    "  for (int i = 0; i < N; ++i) v[i] = in[(threadIdx.x * 7 + i * 131) % n];\n"
    "#pragma unroll\n"
    "  for (int r = 0; r < 2; ++r)\n"
    "#pragma unroll\n"
    "    for (int i = 0; i < N; ++i) v[i] = v[i] * v[(i + 1) % N] + v[(i + 5) % N];\n"
    "  float s = 0;\n"
    "#pragma unroll\n"
    "  for (int i = 0; i < N; ++i) s += v[i] * (i + 1);\n"
    "  out[threadIdx.x] = s + m;\n"
    "}\n";

// The transpose's LDS is known: TILE x (TILE + 1) floats.
class HipToolchainTest : public tf::testing::TransposeBuildTest {
 protected:
  HipToolchainTest() : TransposeBuildTest("hip", "transpose.hip") {}

  void SetUp() override {
    TransposeBuildTest::SetUp();
    // A batch takes about 2 s on an idle core; CI's shared cores may be far slower.
    options_.timeout_s = 600;
  }

  Result<std::unique_ptr<compiler::Toolchain>> MakeToolchain(const std::string& arch) override {
    spec_.mutable_target()->set_arch(arch);
    return vendors::MakeToolchain(spec_);
  }
};

TEST_F(HipToolchainTest, ReportsClangVersionAndTarget) {
  auto toolchain = Toolchain("gfx942");
  ASSERT_NE(toolchain, nullptr);
  EXPECT_EQ(toolchain->name(), "hip-clang");
  EXPECT_NE(toolchain->version().find("clang version 19"), std::string::npos)
      << toolchain->version();
  EXPECT_EQ(toolchain->target(), "gfx942");
  spec_.mutable_target()->set_arch("gfx908");
  auto unknown = vendors::MakeToolchain(spec_);
  EXPECT_EQ(unknown.status().code(), Code::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("'gfx908'"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("gfx1100"), std::string::npos);
}

// Every target: grouped batches, one code object per batch; wave64 on CDNA,
// wave32 on RDNA.
TEST_F(HipToolchainTest, BuildsGroupedBatchesIntoCodeObjectsForEachTarget) {
  for (const std::string arch : {"gfx90a", "gfx940", "gfx942", "gfx1030", "gfx1100"}) {
    ExpectGroupedBatches(
        arch, {Config(8, 2), Config(16, 4), Config(24, 8), Config(32, 8), Config(40, 8)});
    for (const auto& [tile, build] : builds_) {
      EXPECT_EQ(build.reference_symbol, "_Z19transpose_referencePKfPfll");
      EXPECT_GT(build.resources.scalar_registers(), 0) << tile;
      EXPECT_EQ(build.resources.wave_size(), arch.starts_with("gfx9") ? 64 : 32) << arch;
    }
  }
}

TEST_F(HipToolchainTest, FailsEveryConfigurationOnceWhenTheSharedCodeFails) {
  ExpectSharedFailureReportedOnce("gfx90a");
}

TEST_F(HipToolchainTest, IsolatesAConfigurationThatFailsToCompile) {
  ExpectFailureIsolated("gfx90a");
}

TEST_F(HipToolchainTest, PrunesASpillingKernelWhenTheJobForbidsSpills) {
  SetKernel("", kSpillKernel);
  spec_.set_entry("spill<{TILE}>");
  spec_.mutable_launch()->clear_block();
  spec_.mutable_launch()->add_block("1024");
  spec_.clear_verify();
  auto stats = Build("gfx90a", {Config(8, 1), Config(128, 1)});
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_TRUE(builds_.at(8).ok) << builds_.at(8).diagnostics;
  ASSERT_TRUE(builds_.at(128).ok) << builds_.at(128).diagnostics;
  const v1::ResourceUsage& spills = builds_.at(128).resources;
  EXPECT_GT(spills.spill_store_bytes(), 0);
  EXPECT_GT(spills.scratch_bytes(), 0);
  EXPECT_EQ(builds_.at(8).resources.spill_store_bytes(), 0);

  const v1::Problem problem;
  EXPECT_TRUE(toolchain_->CheckResources(spec_, builds_.at(128).config, problem, spills, {}).ok());
  spec_.set_forbid_spills(true);
  Status pruned = toolchain_->CheckResources(spec_, builds_.at(128).config, problem, spills, {});
  EXPECT_EQ(pruned.code(), Code::kFailedPrecondition);
  EXPECT_NE(pruned.message().find("forbids spills"), std::string::npos) << pruned.message();
  EXPECT_TRUE(
      toolchain_->CheckResources(spec_, builds_.at(8).config, problem, builds_.at(8).resources, {})
          .ok());
}

TEST_F(HipToolchainTest, KillsACompilationPastItsTimeLimit) {
  options_.timeout_s = 0.001;
  auto stats = Build("gfx942", {Config(8, 2)});
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_EQ(builds_.size(), 1u);
  EXPECT_FALSE(builds_.at(8).ok);
  EXPECT_NE(builds_.at(8).diagnostics.find("timed out"), std::string::npos)
      << builds_.at(8).diagnostics;
}

TEST_F(HipToolchainTest, AppliesAllowedOptionsAndRefusesOthers) {
  SetKernel("#if SCALE != 2\n#error SCALE is not 2\n#endif\n");
  spec_.add_compile_options("-D SCALE=2 -ffast-math -O2");
  auto stats = Build("gfx1100", {Config(32, 8)});
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  ASSERT_TRUE(builds_.at(32).ok) << builds_.at(32).diagnostics;

  for (const std::string option : {"-o/tmp/x", "-Xclang", "-mllvm", "-I/usr/include", "-DX=$(id)",
                                   "-include/etc/passwd", "--offload-arch=gfx90a"}) {
    spec_.clear_compile_options();
    spec_.add_compile_options(option);
    Status status = toolchain_->Validate(spec_);
    EXPECT_EQ(status.code(), Code::kInvalidArgument) << option;
    EXPECT_NE(status.message().find("'" + option + "'"), std::string::npos) << status.message();
  }
}

TEST_F(HipToolchainTest, CompilesForTheSpecTargetElseTheDevicesOwn) {
  spec_.mutable_target()->set_arch("");
  auto bound = vendors::MakeToolchain(spec_, "gfx90a:sramecc+:xnack-");
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  EXPECT_EQ((*bound)->target(), "gfx90a");
  auto unbound = vendors::MakeToolchain(spec_);
  ASSERT_TRUE(unbound.ok()) << unbound.status().ToString();
  EXPECT_TRUE((*unbound)->Validate(spec_).ok());
  auto batch = (*unbound)->GenerateBatch(spec_, {}, {});
  EXPECT_EQ(batch.status().code(), Code::kFailedPrecondition);
  EXPECT_NE(batch.status().message().find("target.arch"), std::string::npos);
  v1::KernelSpec completed = spec_;
  completed.mutable_target()->set_vendor("");
  ASSERT_TRUE(vendors::CompleteTarget(&completed).ok());
  EXPECT_EQ(completed.target().vendor(), "amd");
}

}  // namespace
}  // namespace tf::amd
