#include "client/best_export.h"

#include <gtest/gtest.h>

#include <limits>

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

// What a program of `main_body` (after including the header) prints, or a
// failure naming the compiler's message. `only_check`: compiles it, no more.
Result<std::string> CompileAndRun(const std::string& header, const std::string& main_body,
                                  const std::string& standard = "c++17", bool only_check = false) {
  testing::TempDir dir;
  TF_RETURN_IF_ERROR(WriteFileAtomic(dir / "best.h", header));
  TF_RETURN_IF_ERROR(
      WriteFileAtomic(dir / "main.cc", "#include <cstdio>\n#include \"best.h\"\n" + main_body));
  std::vector<std::string> command = {"g++", "-std=" + standard, "-Wall", "-Werror"};
  if (only_check) {
    command.push_back("-fsyntax-only");
  } else {
    command.insert(command.end(), {"-o", dir / "lookup"});
  }
  command.push_back(dir / "main.cc");
  TF_ASSIGN_OR_RETURN(ProcessResult compiled, RunProcess(command, testing::WithTimeout(120)));
  if (!compiled.success()) return Status::Internal(compiled.output + header);
  if (only_check) return std::string();
  TF_ASSIGN_OR_RETURN(ProcessResult ran, RunProcess({dir / "lookup"}, testing::WithTimeout(30)));
  if (!ran.success()) return Status::Internal("the program failed: " + ran.output);
  return ran.output;
}

// Names a spec allows but C++ reserves (a kernel `class`, a parameter
// `register`) made a header that did not compile.
TEST(BestExportTest, AHeaderForNamesThatAreCppKeywordsCompilesAndAnswers) {
  auto header = ExportCppHeader("class", {Entry("class", "register=4,new=fast,block-size=2")});
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  auto printed = CompileAndRun(*header,
                               "int main() {\n"
                               "  const auto* c = tunefleet_best::class_::Lookup(\"a100\", {64});\n"
                               "  std::printf(\"%lld %s %lld\\n\", (long long)c->register_, "
                               "c->new_, (long long)c->block_size);\n"
                               "}\n");
  ASSERT_TRUE(printed.ok()) << printed.status().message();
  EXPECT_EQ(*printed, "4 fast 2\n");
}

// Names the header itself uses (a parameter `int64_t` or `Config`, a kernel
// `std`), parameters that become one identifier (`class`, `class_`), control
// characters in strings and a time that is not finite.
TEST(BestExportTest, AHeaderForAwkwardNamesAndValuesCompilesAndAnswers) {
  v1::QueryBestResponse a = Entry("std", "int64_t=1,Config=2,class=3,class_=4,s=x");
  a.set_device_class("gpu\r\tone");
  a.mutable_config()->mutable_settings(4)->mutable_value()->set_str_value(
      "a\"b\\c\x01"
      "9");
  v1::QueryBestResponse b = Entry("std", "s=y,class_=8,class=7,Config=6,int64_t=5");
  b.set_device_class("gpu/b");
  b.mutable_timing()->set_median_ns(std::numeric_limits<double>::infinity());
  auto header = ExportCppHeader("std", {a, b});
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  auto printed = CompileAndRun(
      *header,
      "int main() {\n"
      "  using namespace tunefleet_best::std_;\n"
      "  const char* devices[] = {\"gpu\\r\\tone\", \"gpu/b\"};\n"
      "  for (const char* d : devices) {\n"
      "    const Config* c = Lookup(d, {64});\n"
      "    std::printf(\"%lld %lld %lld %lld %s|\", (long long)c->int64_t_, (long long)c->Config_, "
      "(long long)c->class_, (long long)c->class__, c->s);\n"
      "  }\n}\n");
  ASSERT_TRUE(printed.ok()) << printed.status().message();
  EXPECT_EQ(*printed,
            "1 2 3 4 a\"b\\c\x01"
            "9|5 6 7 8 y|");
}

// The header measures distances as the coordinator does (BestIndexTest's
// ValuesUnderOneAreNotAlike): values under 1 apart by their difference.
TEST(BestExportTest, ValuesUnderOneAreNotAlike) {
  std::vector<v1::QueryBestResponse> entries;
  for (const auto& [m, config] : {std::pair{-4, "BM=16"}, {-900, "BM=32"}, {0, "BM=64"}}) {
    entries.push_back(Entry("k", config));
    entries.back().mutable_problem()->mutable_vars(0)->set_value(m);
  }
  auto header = ExportCppHeader("k", entries);
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  auto printed =
      CompileAndRun(*header,
                    "int main() {\n"
                    "  const long long ms[] = {-1000, -5, 2};\n"
                    "  for (long long m : ms)\n"
                    "    std::printf(\"%lld \", (long long)tunefleet_best::k::Lookup(\"\", "
                    "{m})->BM);\n"
                    "}\n");
  ASSERT_TRUE(printed.ok()) << printed.status().message();
  EXPECT_EQ(*printed, "32 16 64 ");
}

// A GEMM's problem is K, M, N in the header (by name): given by position in
// the application's M, N, K order, another problem's configuration answers.
// Designated initializers name them; out of the header's order, g++ refuses
// them (clang warns and takes each by name).
TEST(BestExportTest, AProblemByNameAnswersAndOutOfOrderDoesNotCompile) {
  v1::QueryBestResponse a = Entry("gemm", "BM=1");
  *a.mutable_problem() = *kernelspec::ParseProblem("M=256,N=512,K=128");
  v1::QueryBestResponse b = Entry("gemm", "BM=2");
  *b.mutable_problem() = *kernelspec::ParseProblem("M=128,N=256,K=512");
  auto header = ExportCppHeader("gemm", {a, b});
  ASSERT_TRUE(header.ok()) << header.status().ToString();
  EXPECT_NE(header->find("//   Lookup(\"a100\", {.K = 128, .M = 256, .N = 512})\n"),
            std::string::npos)
      << *header;
  auto printed =
      CompileAndRun(*header,
                    "using namespace tunefleet_best::gemm;\n"
                    "int main() {\n"
                    "  std::printf(\"%lld %lld %lld %s\", (long long)Lookup(\"a100\", "
                    "{.K = 128, .M = 256, .N = 512})->BM,\n"
                    "      (long long)Lookup(\"\", {.K = 512, .M = 128, .N = 256})->BM,\n"
                    "      (long long)Lookup(\"\", {128, 256, 512})->BM,\n"
                    "      kProblemVarNames[0]);\n"
                    "}\n",
                    "c++20");
  ASSERT_TRUE(printed.ok()) << printed.status().message();
  EXPECT_EQ(*printed, "1 2 1 K");
  auto misordered =
      CompileAndRun(*header,
                    "const auto* c = tunefleet_best::gemm::Lookup(\"\", {.M = 256, .N = 512, "
                    ".K = 128});\n",
                    "c++20", /*only_check=*/true);
  EXPECT_FALSE(misordered.ok()) << "a problem out of order compiled";
}

TEST(BestExportTest, AParameterOfTwoTypesIsNamed) {
  v1::QueryBestResponse a = Entry("k", "T=1");
  v1::QueryBestResponse b = Entry("k", "T=float");
  b.set_device_class("gpu/b");
  auto header = ExportCppHeader("k", {a, b});
  EXPECT_EQ(header.status().message(),
            "parameter 'T' of 'k' is an integer on a100 for M=64 and a string on gpu/b for M=64; a "
            "member of the header's Config has one type: export --format json");
}

}  // namespace
}  // namespace tf::client
