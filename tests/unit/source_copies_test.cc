#include "compiler/source_copies.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernelspec/config.h"

namespace tf::compiler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<v1::SourceFile> Sources(const std::string& main, const std::string& header = "") {
  std::vector<v1::SourceFile> files(1);
  files[0].set_path("k.cu");
  files[0].set_content(main);
  if (!header.empty()) {
    files.emplace_back().set_path("h.cuh");
    files.back().set_content(header);
  }
  return files;
}

TEST(SourceCopiesTest, MacrosAndSystemIncludesOfEveryFile) {
  SourceCopies copies = AnalyzeSources(
      Sources("#include <cuda_fp16.h>\n#include \"h.cuh\"\n  #  define WIDTH (N * 2)  // comment\n"
              "#ifndef N\n#define N 16\n#endif\n#define LDG(x, y) x[y]\n",
              "#include <cuda_fp16.h>\n#include <cstdint>\n#define HELPER 1\n"));
  EXPECT_THAT(copies.macros, ElementsAre("WIDTH", "N", "LDG", "HELPER"));
  EXPECT_THAT(copies.system_includes, ElementsAre("#include <cuda_fp16.h>", "#include <cstdint>"));
  EXPECT_EQ(copies.ungroupable, "");  // a knob's default is no include guard
}

TEST(SourceCopiesTest, IncludeGuardsAndPragmaOnceCannotBeGrouped) {
  EXPECT_THAT(AnalyzeSources(Sources("#pragma once\n__global__ void k() {}\n")).ungroupable,
              HasSubstr("k.cu has '#pragma once'"));
  EXPECT_THAT(AnalyzeSources(Sources("__global__ void k() {}\n",
                                     "// helpers\n#ifndef H_CUH\n#define H_CUH\n#if X\n#endif\n"
                                     "#endif  // H_CUH\n"))
                  .ungroupable,
              HasSubstr("h.cuh has the include guard H_CUH"));
  EXPECT_THAT(AnalyzeSources(Sources("#if !defined(K_CU)\n#define K_CU\n#endif\n")).ungroupable,
              HasSubstr("include guard K_CU"));
  // Guard-like, but the file goes on after its #endif.
  EXPECT_EQ(AnalyzeSources(Sources("#ifndef A\n#define A\n#endif\n#define B 2\n")).ungroupable, "");
}

TEST(SourceCopiesTest, EachCopyHasItsMacrosItsNamesAndUndoesThem) {
  v1::KernelSpec spec;
  spec.set_source("k.cu");
  spec.set_entry("conv");
  spec.set_param_style("define");
  spec.mutable_verify()->set_reference("conv_naive");
  std::vector<v1::Config> configs(2);
  for (int i = 0; i < 2; ++i) {
    auto* setting = configs[i].add_settings();
    setting->set_name("BX");
    *setting->mutable_value() = kernelspec::IntValue(16 << i);
  }
  SourceCopies copies = AnalyzeSources(Sources("#define W (BX + 2)\n"));
  auto text = DefineStyleCopies(spec, copies, configs);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_THAT(*text,
              HasSubstr("namespace tf_copy0 {  // BX=16\n#define BX 16\n"
                        "#define conv conv_tf_copy0\n#define conv_naive conv_naive_tf_copy0\n"
                        "#include \"k.cu\"\n#undef BX\n#undef conv\n#undef conv_naive\n"
                        "#undef W\n}  // namespace tf_copy0\n"));
  EXPECT_THAT(*text, HasSubstr("#define BX 32\n"));
  EXPECT_EQ(CopyFunction("conv", 1), "tf_copy1::conv_tf_copy1");
  EXPECT_EQ(kernelspec::CopyIndexInSymbol("_ZN8tf_copy127conv_tf_copy1EPf"), 1);
  EXPECT_EQ(kernelspec::CopyIndexInSymbol("conv_tf_copy12"), 12);
  EXPECT_EQ(kernelspec::CopyIndexInSymbol("_Z4convPf"), -1);

  *configs[1].mutable_settings(0)->mutable_value() = kernelspec::StrValue("a b");
  EXPECT_THAT(DefineStyleCopies(spec, copies, configs).status().message(),
              HasSubstr("params.BX: value 'a b' is not a macro body"));
}

}  // namespace
}  // namespace tf::compiler
