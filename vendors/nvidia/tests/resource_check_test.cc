// Pruning by resource use: what exceeds a device's limits never runs.
#include "vendors/nvidia/resource_check.h"

#include <gtest/gtest.h>

#include "kernelspec/config.h"

namespace tf::nvidia {
namespace {

class ResourceCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_.add_params()->set_name("BM");
    spec_.mutable_launch()->add_block("128 * WARPS");
    spec_.mutable_launch()->set_shared_mem_bytes("BM * 1024");
    auto* s = config_.add_settings();
    s->set_name("BM");
    *s->mutable_value() = kernelspec::IntValue(64);
    auto* w = config_.add_settings();
    w->set_name("WARPS");
    *w->mutable_value() = kernelspec::IntValue(2);
    problem_ = *kernelspec::ParseProblem("M=1024");
    resources_.set_vector_registers(128);
    resources_.set_shared_bytes(1024);
  }

  Status Check() { return CheckResources(spec_, config_, problem_, resources_, device_); }

  v1::KernelSpec spec_;
  v1::Config config_;
  v1::Problem problem_;
  v1::ResourceUsage resources_;
  std::map<std::string, int64_t> device_ = {{"max_threads_per_block", 1024},
                                            {"regs_per_block", 65536},
                                            {"max_shared_mem_per_block_optin", 232448}};
};

TEST_F(ResourceCheckTest, WithinLimitsPasses) { EXPECT_TRUE(Check().ok()) << Check().ToString(); }

TEST_F(ResourceCheckTest, TooManyRegistersForTheBlockIsPruned) {
  resources_.set_vector_registers(255);
  EXPECT_TRUE(Check().ok());  // x 256 threads = 65280, just fits
  *config_.mutable_settings(1)->mutable_value() = kernelspec::IntValue(4);
  Status s = Check();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("255 registers x 512 threads"), std::string::npos) << s.message();
}

TEST_F(ResourceCheckTest, SharedMemoryCountsStaticAndDynamic) {
  *config_.mutable_settings(0)->mutable_value() = kernelspec::IntValue(227);  // 232448 dynamic
  Status s = Check();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("1024 static + 232448 dynamic"), std::string::npos) << s.message();
}

TEST_F(ResourceCheckTest, SpillsArePrunedOnlyWhenForbidden) {
  resources_.set_spill_store_bytes(64);
  EXPECT_TRUE(Check().ok());
  spec_.set_forbid_spills(true);
  Status s = Check();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("spills"), std::string::npos);
}

TEST_F(ResourceCheckTest, PerformanceWarningsArePrunedOnlyWhenForbidden) {
  resources_.add_performance_warnings(
      "C7512: wgmma.mma_async instructions are serialized due to insufficient register "
      "resources");
  EXPECT_TRUE(Check().ok());
  spec_.set_forbid_performance_warnings(true);
  Status s = Check();
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_NE(s.message().find("C7512: wgmma.mma_async instructions are serialized"),
            std::string::npos)
      << s.message();
  resources_.clear_performance_warnings();
  EXPECT_TRUE(Check().ok());
}

TEST_F(ResourceCheckTest, LaunchBoundsBelowTheBlockArePruned) {
  resources_.set_max_threads_per_block(128);
  EXPECT_FALSE(Check().ok());
}

TEST_F(ResourceCheckTest, CpuBuildsWithoutResourceDataPass) {
  resources_.Clear();
  device_.clear();
  EXPECT_TRUE(Check().ok());
}

}  // namespace
}  // namespace tf::nvidia
