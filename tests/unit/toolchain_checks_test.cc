// What every toolchain's Validate checks the same way
// (compiler/toolchain_checks.h).
#include "compiler/toolchain_checks.h"

#include <gtest/gtest.h>

#include <regex>

namespace tf::compiler {
namespace {

TEST(CheckMainSourceTest, NeedsASafeMainSource) {
  ::tunefleet::v1::KernelSpec spec;
  EXPECT_EQ(CheckMainSource(spec).code(), Code::kInvalidArgument);
  EXPECT_EQ(CheckMainSource(spec).message(),
            "source is empty: name the main source file to compile");
  spec.set_source("/etc/passwd");
  EXPECT_EQ(CheckMainSource(spec).code(), Code::kInvalidArgument);
  EXPECT_NE(CheckMainSource(spec).message().find("must be relative to the spec"),
            std::string::npos);
  spec.set_source("../outside.cu");
  EXPECT_EQ(CheckMainSource(spec).code(), Code::kInvalidArgument);
  spec.set_source("kernels/transpose.cu");
  EXPECT_TRUE(CheckMainSource(spec).ok()) << CheckMainSource(spec).ToString();
}

TEST(DefineFlagsTest, MacrosWithPlainValuesOnly) {
  const std::regex pattern(kDefineFlagsPattern);
  for (const char* ok : {"-DTILE", "-DTILE=32", "-D_X=1.5e+3", "-DNAME=a-b_c", "-UNDEBUG"}) {
    EXPECT_TRUE(std::regex_match(ok, pattern)) << ok;
  }
  for (const char* bad : {"-D", "-D1X", "-DX=$(id)", "-DX=\"s\"", "-DX=a b", "-DX=a;b", "-UX=1",
                          "-include", "-DX=`id`"}) {
    EXPECT_FALSE(std::regex_match(bad, pattern)) << bad;
  }
}

}  // namespace
}  // namespace tf::compiler
