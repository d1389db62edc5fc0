// The two vendor tables: each language and device kind this build knows is
// found there, and anything else is refused with the known ones named.
#include <gtest/gtest.h>

#include "vendors/device_kinds.h"
#include "vendors/toolchains.h"
#include "worker/devices.h"

namespace tf::vendors {
namespace {

namespace v1 = ::tunefleet::v1;

TEST(ToolchainTableTest, PicksTheHostCompilerForCpp) {
  v1::KernelSpec spec;
  spec.set_language("cpp");
  auto toolchain = MakeToolchain(spec);
  ASSERT_TRUE(toolchain.ok()) << toolchain.status().ToString();
  EXPECT_EQ((*toolchain)->name(), "host-g++");
}

TEST(ToolchainTableTest, RefusesUnknownLanguagesNamingTheKnown) {
  v1::KernelSpec spec;
  spec.set_language("fortran");
  auto fortran = MakeToolchain(spec);
  EXPECT_EQ(fortran.status().code(), Code::kInvalidArgument);
  EXPECT_NE(fortran.status().message().find("'fortran' is not one of cpp, cuda, hip"),
            std::string::npos)
      << fortran.status().message();
}

TEST(ToolchainTableTest, ListsEveryLanguageItKnows) {
  const std::vector<std::string> languages = Languages();
  EXPECT_EQ(std::vector<std::string>(languages.begin(), languages.begin() + 3),
            (std::vector<std::string>{"cpp", "cuda", "hip"}));
  for (const std::string& language : languages) {
    v1::KernelSpec spec;
    spec.set_language(language);
    EXPECT_TRUE(CompleteTarget(&spec).ok()) << language;
  }
}

TEST(ToolchainTableTest, CompletesTheTargetFromTheLanguage) {
  v1::KernelSpec cpp;
  cpp.set_language("cpp");
  ASSERT_TRUE(CompleteTarget(&cpp).ok());
  EXPECT_EQ(cpp.target().vendor(), "cpu");
  EXPECT_EQ(cpp.target().arch(), "host");

  v1::KernelSpec cuda;
  cuda.set_language("cuda");
  ASSERT_TRUE(CompleteTarget(&cuda).ok());
  EXPECT_EQ(cuda.target().vendor(), "nvidia");
  EXPECT_EQ(cuda.target().arch(), "");  // the bound device's

  v1::KernelSpec wrong;
  wrong.set_language("cpp");
  wrong.mutable_target()->set_vendor("intel");
  Status status = CompleteTarget(&wrong);
  EXPECT_EQ(status.code(), Code::kInvalidArgument);
  EXPECT_NE(status.message().find("target.vendor: 'intel' devices do not run cpp kernels; cpu"),
            std::string::npos)
      << status.message();
  EXPECT_EQ(wrong.target().arch(), "") << "a refused target is left as it was";

  wrong.set_language("fortran");
  wrong.clear_target();
  EXPECT_NE(CompleteTarget(&wrong).message().find("'fortran' is not one of cpp, cuda, hip"),
            std::string::npos);
}

TEST(ToolchainTableTest, CodeRunsOnItsOwnArchitecture) {
  v1::KernelSpec cpp;
  cpp.set_language("cpp");
  EXPECT_TRUE(CodeRunsOn(cpp, "host", "host"));
  EXPECT_TRUE(CodeRunsOn(cpp, "", "host"));
  EXPECT_FALSE(CodeRunsOn(cpp, "hosta", "host"));
  // A vendor's own rule is tested in its folder (nvrtc_toolchain_test).
}

TEST(DeviceKindTableTest, FindsTheHostAndRefusesUnknownKindsNamingTheKnown) {
  auto cpu = FindDeviceKind("cpu");
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  EXPECT_STREQ((*cpu)->name, "cpu");
  auto devices = (*cpu)->discover({}, 0, "");
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 1u);
  auto backend = (*cpu)->make_backend(devices->front().info, 0);
  EXPECT_TRUE(backend.ok()) << backend.status().ToString();
  EXPECT_TRUE((*cpu)->shares_host_memory);
  sandbox::Policy policy;
  (*cpu)->confine_runner(1 << 30, policy);
  EXPECT_EQ(policy.max_address_space_bytes, uint64_t{1} << 30);
  EXPECT_FALSE(policy.allow_processes);
  EXPECT_NE(DeviceKindsUsage().find("cpu:N"), std::string::npos);

  auto unknown = FindDeviceKind("tpu");
  EXPECT_EQ(unknown.status().code(), Code::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("unknown device kind 'tpu'; known kinds: cpu"),
            std::string::npos)
      << unknown.status().message();
  // The worker's flag goes through the same table.
  auto flag = worker::DiscoverDevices("cpu:1,tpu", "");
  EXPECT_NE(flag.status().message().find("known kinds: cpu"), std::string::npos)
      << flag.status().message();
}

}  // namespace
}  // namespace tf::vendors
