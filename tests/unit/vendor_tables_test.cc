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

TEST(ToolchainTableTest, NamesLanguagesItCannotBuild) {
  v1::KernelSpec spec;
  spec.set_language("hip");
  auto hip = MakeToolchain(spec);
  EXPECT_EQ(hip.status().code(), Code::kUnavailable);
  EXPECT_NE(hip.status().message().find("hip"), std::string::npos);
  spec.set_language("fortran");
  auto fortran = MakeToolchain(spec);
  EXPECT_EQ(fortran.status().code(), Code::kInvalidArgument);
  EXPECT_NE(fortran.status().message().find("'fortran' is not one of cpp, cuda, hip"),
            std::string::npos)
      << fortran.status().message();
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
