// GPU toolchains' launch rule: a grid kernel and its reference kernel each
// need 1 to 3 dimensions of grid and block.
#include "compiler/grid_launch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tf::compiler {
namespace {

namespace v1 = ::tunefleet::v1;
using ::testing::HasSubstr;

v1::KernelSpec GridSpec() {
  v1::KernelSpec spec;
  spec.set_language("cuda");
  spec.mutable_launch()->add_grid("ceil_div(N, BN)");
  spec.mutable_launch()->add_block("THREADS");
  return spec;
}

TEST(GridLaunchTest, AcceptsOneToThreeDimensions) {
  v1::KernelSpec spec = GridSpec();
  EXPECT_TRUE(CheckGridLaunch(spec).ok());
  spec.mutable_launch()->add_grid("2");
  spec.mutable_launch()->add_grid("3");
  EXPECT_TRUE(CheckGridLaunch(spec).ok());
}

TEST(GridLaunchTest, KernelsNeedLaunchGeometry) {
  v1::KernelSpec spec = GridSpec();
  spec.mutable_launch()->clear_grid();
  Status status = CheckGridLaunch(spec);
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("launch.grid: a cuda kernel needs 1 to 3 dimensions, got 0"));
  spec = GridSpec();
  for (int k = 0; k < 3; ++k) spec.mutable_launch()->add_block("1");
  EXPECT_THAT(CheckGridLaunch(spec).message(), HasSubstr("launch.block: a cuda kernel needs 1 to 3 "
                                                         "dimensions, got 4"));
}

TEST(GridLaunchTest, AReferenceKernelNeedsItsOwnLaunchGeometry) {
  v1::KernelSpec spec = GridSpec();
  spec.mutable_verify()->set_reference("gemm_reference");
  EXPECT_THAT(CheckGridLaunch(spec).message(),
              HasSubstr("verify.grid: the cuda reference kernel needs 1 to 3 dimensions, got 0"));
  spec.mutable_verify()->add_grid("ceil_div(N, 16)");
  EXPECT_THAT(CheckGridLaunch(spec).message(), HasSubstr("verify.block"));
  spec.mutable_verify()->add_block("256");
  EXPECT_TRUE(CheckGridLaunch(spec).ok());
}

TEST(GridLaunchTest, BlockSizeUsesParametersProblemAndDevice) {
  v1::KernelSpec spec = GridSpec();
  spec.mutable_launch()->add_block("WARPS * 32");
  spec.mutable_launch()->set_shared_mem_bytes(
      "min(STAGES * BN * 2 * (DT == \"f16\" ? 2 : 4), device.max_shared_mem_per_block_optin)");
  v1::Config config;
  auto set = [&config](const std::string& name, v1::Value value) {
    v1::ParamSetting* setting = config.add_settings();
    setting->set_name(name);
    *setting->mutable_value() = std::move(value);
  };
  v1::Value v;
  v.set_int_value(128);
  set("THREADS", v);
  v.set_int_value(2);
  set("WARPS", v);
  v.set_int_value(4);
  set("STAGES", v);
  v.set_str_value("f16");
  set("DT", v);
  v1::Problem problem;
  v1::ProblemVar* bn = problem.add_vars();
  bn->set_name("BN");
  bn->set_value(1024);

  Result<BlockSize> block =
      EvaluateBlockSize(spec, config, problem, {{"max_shared_mem_per_block_optin", 232448}});
  ASSERT_TRUE(block.ok()) << block.status().message();
  EXPECT_EQ(block->threads, 128 * 64);
  EXPECT_EQ(block->dynamic_shared_bytes, 4 * 1024 * 2 * 2);
  EXPECT_EQ(EvaluateBlockSize(spec, config, problem, {{"max_shared_mem_per_block_optin", 1000}})
                ->dynamic_shared_bytes,
            1000);
  Status missing = EvaluateBlockSize(spec, config, problem, {}).status();
  EXPECT_THAT(missing.message(), HasSubstr("device.max_shared_mem_per_block_optin"));
}

}  // namespace
}  // namespace tf::compiler
