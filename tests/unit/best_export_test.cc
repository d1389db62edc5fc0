#include "client/best_export.h"

#include <gtest/gtest.h>

#include "common/files.h"
#include "common/subprocess.h"
#include "kernelspec/config.h"
#include "tests/test_util.h"

namespace tf::client {
namespace {

v1::QueryBestResponse Entry(const std::string& kernel, const std::string& config) {
  v1::QueryBestResponse entry;
  entry.set_found(true);
  entry.set_kernel(kernel);
  entry.set_device_class("a100");
  *entry.mutable_problem() = *kernelspec::ParseProblem("M=64");
  *entry.mutable_config() = *kernelspec::ParseConfigKey(config);
  entry.mutable_timing()->set_median_ns(1000);
  return entry;
}

// Names a spec allows but C++ reserves (a kernel `class`, a parameter
// `register`) made a header that did not compile.
TEST(BestExportTest, AHeaderForNamesThatAreCppKeywordsCompilesAndAnswers) {
  auto header = ExportCppHeader("class", {Entry("class", "register=4,new=fast,block-size=2")});
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  testing::TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir / "best.h", *header).ok());
  ASSERT_TRUE(WriteFileAtomic(dir / "main.cc",
                              "#include <cstdio>\n#include \"best.h\"\n"
                              "int main() {\n"
                              "  const auto* c = tunefleet_best::class_::Lookup(\"a100\", {64});\n"
                              "  std::printf(\"%lld %s %lld\\n\", (long long)c->register_, "
                              "c->new_, (long long)c->block_size);\n}\n")
                  .ok());
  auto compiled =
      RunProcess({"g++", "-std=c++17", "-Wall", "-Werror", "-o", dir / "lookup", dir / "main.cc"},
                 testing::WithTimeout(120));
  ASSERT_TRUE(compiled.ok() && compiled->success())
      << (compiled.ok() ? compiled->output : compiled.status().ToString()) << *header;
  auto ran = RunProcess({dir / "lookup"}, testing::WithTimeout(30));
  ASSERT_TRUE(ran.ok() && ran->success());
  EXPECT_EQ(ran->output, "4 fast 2\n");
}

}  // namespace
}  // namespace tf::client
