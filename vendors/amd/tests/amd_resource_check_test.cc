#include <gtest/gtest.h>

#include "kernelspec/config.h"
#include "vendors/amd/resource_check.h"

namespace tf::amd {
namespace {

v1::KernelSpec Spec(const std::string& block, const std::string& shared_mem = "") {
  v1::KernelSpec spec;
  spec.mutable_launch()->add_block(block);
  spec.mutable_launch()->set_shared_mem_bytes(shared_mem);
  return spec;
}

v1::ResourceUsage Usage(int vgprs, int agprs, int64_t lds, int wave) {
  v1::ResourceUsage usage;
  usage.set_vector_registers(vgprs);
  usage.set_accumulator_registers(agprs);
  usage.set_shared_bytes(lds);
  usage.set_wave_size(wave);
  usage.set_max_threads_per_block(1024);
  return usage;
}

Status Check(const char* arch, const v1::KernelSpec& spec, const v1::ResourceUsage& usage,
             const std::map<std::string, int64_t>& device = {}) {
  return CheckResources(*FindGfxTarget(arch), spec, v1::Config(), v1::Problem(), usage, device);
}

TEST(AmdResourceCheckTest, PrunesLdsOverTheWorkgroupLimitNamingBothParts) {
  EXPECT_TRUE(Check("gfx942", Spec("256", "32768"), Usage(32, 0, 32768, 64)).ok());
  Status pruned = Check("gfx942", Spec("256", "32768"), Usage(32, 0, 32769, 64));
  EXPECT_EQ(pruned.code(), Code::kFailedPrecondition);
  EXPECT_NE(pruned.message().find("65537 bytes of LDS (32769 static + 32768 dynamic) > 65536"),
            std::string::npos)
      << pruned.message();
  // The device's own figure wins over the target's.
  EXPECT_FALSE(
      Check("gfx942", Spec("256"), Usage(32, 0, 40000, 64), {{"max_shared_mem_per_block", 32768}})
          .ok());
}

TEST(AmdResourceCheckTest, PrunesRegistersTheWorkgroupsWavesCannotHave) {
  // gfx90a: 1024 threads are 16 waves, 4 on each SIMD of 512 registers: 128 each.
  EXPECT_TRUE(Check("gfx90a", Spec("1024"), Usage(96, 32, 0, 64)).ok());
  Status pruned = Check("gfx90a", Spec("1024"), Usage(96, 40, 0, 64));
  EXPECT_EQ(pruned.code(), Code::kFailedPrecondition);
  EXPECT_NE(pruned.message().find("136 VGPRs (with 40 AGPRs) x 4 waves"), std::string::npos)
      << pruned.message();
  EXPECT_TRUE(Check("gfx90a", Spec("256"), Usage(96, 40, 0, 64)).ok());  // one wave per SIMD
  // gfx1100: AGPRs are not in the file; 1024 threads are 32 wave32s, 8 per SIMD of 1536.
  EXPECT_TRUE(Check("gfx1100", Spec("1024"), Usage(192, 0, 0, 32)).ok());
  EXPECT_FALSE(Check("gfx1100", Spec("1024"), Usage(200, 0, 0, 32)).ok());
}

TEST(AmdResourceCheckTest, PrunesThreadsOverTheLimitsAndPassesCandidatesWithoutData) {
  Status pruned = Check("gfx942", Spec("2048"), Usage(8, 0, 0, 64));
  EXPECT_NE(pruned.message().find("2048 threads per workgroup > device limit 1024"),
            std::string::npos)
      << pruned.message();
  v1::ResourceUsage bounded = Usage(8, 0, 0, 64);
  bounded.set_max_threads_per_block(256);
  EXPECT_NE(Check("gfx942", Spec("512"), bounded).message().find("launch bounds 256"),
            std::string::npos);
  EXPECT_TRUE(Check("gfx942", Spec("4096"), v1::ResourceUsage()).ok());
}

TEST(AmdResourceCheckTest, PrunesScratchAndSpillsOnlyWhenTheJobForbidsSpills) {
  v1::KernelSpec spec = Spec("256");
  v1::ResourceUsage scratch = Usage(32, 0, 0, 64);
  scratch.set_scratch_bytes(64);
  EXPECT_TRUE(Check("gfx942", spec, scratch).ok());
  spec.set_forbid_spills(true);
  EXPECT_NE(Check("gfx942", spec, scratch).message().find("forbids spills"), std::string::npos);
}

}  // namespace
}  // namespace tf::amd
