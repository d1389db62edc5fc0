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

}  // namespace
}  // namespace tf::compiler
