#include "kernelspec/spec_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/files.h"
#include "kernelspec/config.h"
#include "tests/test_util.h"

namespace tf::kernelspec {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

constexpr const char* kMinimal = R"(kernel: saxpy
source: saxpy.cc
entry: "saxpy<{UNROLL}>"
params:
  UNROLL: [1, 2, 4]
problems:
  - {N: 1024}
buffers:
  X: {dtype: f32, count: N}
  Y: {dtype: f32, count: N, output: true}
)";

std::string ParseError(const std::string& yaml) {
  auto spec = ParseSpecYaml(yaml, "gemm.yaml");
  EXPECT_FALSE(spec.ok()) << "parsed:\n" << yaml;
  return spec.status().message();
}

TEST(SpecLoaderTest, ReadsEveryKey) {
  auto spec = ParseSpecYaml(R"yaml(kernel: gemm_f16
language: cuda
source: gemm.cuh
includes: [common.cuh]
entry: "gemm<{BM},{BK},{DT},{WS}>"
params:
  BM: [64, 128]
  BK: {from: 16, to: 64, times: 2}
  DT: [half, "64"]
  WS: {from: 0, to: 4, step: 2}
constraints:
  - "BM * BK <= device.max_smem"
problems:
  - {M: 4096, K: 512}
  - {K: 128, M: 64}
scalars: [M, K]
buffers:
  A: {dtype: f16, count: "M*K", init: iota, min: 0, max: 4}
  C: {dtype: f16, count: M, output: true}
launch: {grid: ["ceil_div(M, BM)", 1], block: 128, shared_mem: "BM*BK*2"}
verify: {reference: gemm_ref, rtol: 0.05, atol: 0.01, grid: ["ceil_div(M, 16)"], block: [256]}
objective: {minimize: time, flops: "2*M*K"}
benchmark: {warmup_ms: 25, min_time_ms: 100, min_repeats: 3, max_repeats: 50, flush_l2: false, timeout_s: 4, rest: 0}
target: {vendor: nvidia, arch: sm_90, device_class: "NVIDIA H200", label: fast}
search: {strategy: random, max_candidates: 20, seed: 7, max_seconds: 30, patience: 40,
         min_improvement_percent: 0.5, early_stop: 2}
compile_options: [-O3, --use_fast_math]
forbid_spills: true
forbid_performance_warnings: true
)yaml",
                            "gemm.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->name(), "gemm_f16");
  EXPECT_EQ(spec->language(), "cuda");
  EXPECT_EQ(spec->source(), "gemm.cuh");
  ASSERT_EQ(spec->params_size(), 4);
  EXPECT_EQ(spec->params(0).values(1).int_value(), 128);
  EXPECT_EQ(spec->params(1).range().start(), 16);
  EXPECT_EQ(spec->params(1).range().stop(), 64);
  EXPECT_EQ(spec->params(1).range().factor(), 2);
  EXPECT_EQ(spec->params(2).values(0).str_value(), "half");
  EXPECT_EQ(spec->params(2).values(1).str_value(), "64") << "a quoted number stays a string";
  EXPECT_EQ(spec->params(3).range().step(), 2);
  EXPECT_EQ(spec->constraints(0), "BM * BK <= device.max_smem");
  EXPECT_EQ(ProblemText(spec->problems(1)), "K=128,M=64") << "order kept";
  EXPECT_THAT(spec->scalars(), ::testing::ElementsAre("M", "K"));
  EXPECT_EQ(spec->buffers(0).init(), "iota");
  EXPECT_EQ(spec->buffers(0).random_max(), 4);
  EXPECT_TRUE(spec->buffers(1).output());
  EXPECT_THAT(spec->launch().grid(), ::testing::ElementsAre("ceil_div(M, BM)", "1"));
  EXPECT_THAT(spec->launch().block(), ::testing::ElementsAre("128"));
  EXPECT_EQ(spec->launch().shared_mem_bytes(), "BM*BK*2");
  EXPECT_EQ(spec->verify().reference(), "gemm_ref");
  EXPECT_DOUBLE_EQ(spec->verify().rtol(), 0.05);
  EXPECT_THAT(spec->verify().grid(), ::testing::ElementsAre("ceil_div(M, 16)"));
  EXPECT_THAT(spec->verify().block(), ::testing::ElementsAre("256"));
  EXPECT_TRUE(spec->forbid_spills());
  EXPECT_TRUE(spec->forbid_performance_warnings());
  EXPECT_EQ(spec->objective().flops(), "2*M*K");
  EXPECT_EQ(spec->benchmark().max_repeats(), 50);
  EXPECT_FALSE(spec->benchmark().flush_l2());
  EXPECT_EQ(spec->benchmark().rest(), 0);  // explicitly none, not the default
  EXPECT_EQ(spec->target().device_class(), "NVIDIA H200");
  EXPECT_EQ(spec->search().seed(), 7u);
  EXPECT_EQ(spec->search().max_seconds(), 30);
  EXPECT_EQ(spec->search().patience(), 40);
  EXPECT_EQ(spec->search().min_improvement_percent(), 0.5);
  EXPECT_EQ(spec->search().early_stop(), 2);
  EXPECT_THAT(spec->compile_options(), ::testing::ElementsAre("-O3", "--use_fast_math"));
}

TEST(SpecLoaderTest, FillsDefaults) {
  auto spec = ParseSpecYaml(kMinimal, "saxpy.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->language(), "cpp");
  // The target the language implies is the toolchain table's to fill, at
  // submit (vendor_tables_test).
  EXPECT_EQ(spec->target().vendor(), "");
  EXPECT_EQ(spec->buffers(0).init(), "random");
  EXPECT_DOUBLE_EQ(spec->verify().rtol(), 1e-3);
  EXPECT_DOUBLE_EQ(spec->verify().atol(), 1e-3);
  EXPECT_EQ(spec->objective().minimize(), "time");
  EXPECT_EQ(spec->benchmark().warmup_ms(), 10);
  EXPECT_EQ(spec->benchmark().min_time_ms(), 50);
  EXPECT_EQ(spec->benchmark().min_repeats(), 5);
  EXPECT_EQ(spec->benchmark().max_repeats(), 1000);
  EXPECT_EQ(spec->benchmark().timeout_s(), 10);
  EXPECT_TRUE(spec->benchmark().flush_l2());
  EXPECT_EQ(spec->benchmark().rest(), 2);
  EXPECT_EQ(spec->search().strategy(), "auto");
}

TEST(SpecLoaderTest, DefaultToleranceFollowsTheOutputType) {
  std::string yaml = kMinimal;
  yaml += "language: cuda\n";
  yaml.replace(yaml.find("Y: {dtype: f32"), 14, "Y: {dtype: f16");
  auto spec = ParseSpecYaml(yaml, "saxpy.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_DOUBLE_EQ(spec->verify().rtol(), 1e-2);
}

TEST(SpecLoaderTest, ErrorsNameFileLineAndField) {
  std::string bad_param = kMinimal;
  bad_param.replace(bad_param.find("[1, 2, 4]"), 9, "4");
  EXPECT_EQ(ParseError(bad_param),
            "gemm.yaml:5: params.UNROLL: expected a list of values or a range {from, to, step}");

  EXPECT_EQ(ParseError(std::string(kMinimal) + "benchmark: {timeout_s: soon}\n"),
            "gemm.yaml:11: benchmark.timeout_s: expected a number");

  EXPECT_THAT(ParseError(std::string(kMinimal) + "kernal: x\n"),
              HasSubstr("gemm.yaml:11: unknown key 'kernal' (known: kernel, language,"));

  EXPECT_THAT(
      ParseError(std::string(kMinimal) + "verify: {rtl: 1}\n"),
      HasSubstr(
          "gemm.yaml:11: verify: unknown key 'rtl' (known: reference, rtol, atol, grid, block)"));

  std::string no_output = kMinimal;
  no_output.replace(no_output.find("output: true"), 12, "output: maybe");
  EXPECT_EQ(ParseError(no_output), "gemm.yaml:10: buffers.Y.output: expected true or false");

  std::string bad_problem = kMinimal;
  bad_problem.replace(bad_problem.find("N: 1024"), 7, "N: big");
  EXPECT_EQ(ParseError(bad_problem), "gemm.yaml:7: problems[0].N: expected an integer");

  EXPECT_THAT(ParseError(std::string(kMinimal) + "kernel: again\n"),
              HasSubstr("gemm.yaml:11: key 'kernel' repeated"));

  std::string no_entry = kMinimal;
  no_entry.erase(no_entry.find("entry:"), no_entry.find("params:") - no_entry.find("entry:"));
  EXPECT_EQ(ParseError(no_entry), "gemm.yaml: missing required key 'entry'");

  // yaml-cpp's own words ("end of sequence flow not found") do not say they are about syntax.
  EXPECT_THAT(ParseError("kernel: [unclosed\n"),
              MatchesRegex("gemm.yaml:2:[0-9]+: YAML syntax error: .+"));
  EXPECT_THAT(ParseError("- a list\n"), HasSubstr("gemm.yaml:1: expected a map of spec keys"));
}

// An alias that refers to itself made the loader recurse until it crashed,
// and nested aliases made it walk 10^9 entries; an anchor used once is fine.
TEST(SpecLoaderTest, AliasesThatLoopOrExplodeAreRefusedAndOrdinaryOnesServe) {
  EXPECT_THAT(ParseError("kernel: &a [*a]\n"),
              MatchesRegex("gemm.yaml: kernel(\\[0\\])+: the spec nests deeper than 64 levels "
                           "or holds more than 200000 keys and items \\(a YAML alias .*"));
  std::string laughs = "a: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int level = 1; level <= 9; ++level) {
    std::string item = "*l" + std::to_string(level - 1);
    laughs += "b" + std::to_string(level) + ": &l" + std::to_string(level) + " [" + item;
    for (int k = 1; k < 10; ++k) laughs += ", " + item;
    laughs += "]\n";
  }
  EXPECT_THAT(ParseError(laughs), HasSubstr("holds more than 200000 keys and items"));

  std::string anchored = kMinimal;
  anchored.replace(anchored.find("[1, 2, 4]"), 9, "&unrolls [1, 2, 4]\n  VEC: *unrolls");
  auto spec = ParseSpecYaml(anchored, "gemm.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  ASSERT_EQ(spec->params_size(), 2);
  EXPECT_EQ(spec->params(1).values_size(), 3);
}

TEST(SpecLoaderTest, RangeErrors) {
  std::string both = kMinimal;
  both.replace(both.find("[1, 2, 4]"), 9, "{from: 1, to: 8, step: 1, times: 2}");
  EXPECT_EQ(ParseError(both),
            "gemm.yaml:5: params.UNROLL: a range has either 'step' or 'times', "
            "not both");
  std::string no_to = kMinimal;
  no_to.replace(no_to.find("[1, 2, 4]"), 9, "{from: 1}");
  EXPECT_EQ(ParseError(no_to), "gemm.yaml:5: params.UNROLL: a range needs both 'from' and 'to'");
  std::string unknown = kMinimal;
  unknown.replace(unknown.find("[1, 2, 4]"), 9, "{from: 1, upto: 4}");
  EXPECT_THAT(ParseError(unknown), HasSubstr("params.UNROLL: unknown key 'upto'"));
}

// The message's 0 means "no limit"; a spec that writes 0 out means something else, or a
// mistake, and says "no limit" by leaving the field out.
TEST(SpecLoaderTest, ZeroBudgetsAreRefusedNotTakenAsNoLimit) {
  EXPECT_EQ(ParseError(std::string(kMinimal) + "search: {max_candidates: 0}\n"),
            "gemm.yaml:11: search.max_candidates: 0 is not allowed: give at least 1 evaluation "
            "per problem, or leave search.max_candidates out for no limit");
  EXPECT_EQ(ParseError(std::string(kMinimal) + "search: {max_candidates: -5}\n"),
            "gemm.yaml:11: search.max_candidates: -5 is not allowed: give at least 1 evaluation "
            "per problem, or leave search.max_candidates out for no limit");
  EXPECT_EQ(ParseError(std::string(kMinimal) + "search: {max_seconds: 0}\n"),
            "gemm.yaml:11: search.max_seconds: 0 is not allowed: give a number of seconds above "
            "0, or leave search.max_seconds out for no limit");
  EXPECT_EQ(ParseError(std::string(kMinimal) + "search: {patience: 0}\n"),
            "gemm.yaml:11: search.patience: 0 is not allowed: give at least 1 evaluation, or "
            "leave search.patience out never to stop for it");
  // times: 0 read as a range by steps of 1.
  std::string times_zero = kMinimal;
  times_zero.replace(times_zero.find("[1, 2, 4]"), 9, "{from: 1, to: 1024, times: 0}");
  EXPECT_EQ(ParseError(times_zero), "gemm.yaml:5: params.UNROLL: range times must be > 1, got 0");

  // Where 0 is documented as a setting of its own, it stays one.
  auto spec = ParseSpecYaml(std::string(kMinimal) +
                                "search: {finalists: 0, early_stop: 0, seed: 0, "
                                "min_improvement_percent: 0}\n",
                            "gemm.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->search().finalists(), 0);
  auto budgets = ParseSpecYaml(
      std::string(kMinimal) + "search: {max_candidates: 1, max_seconds: 0.5, patience: 1}\n",
      "gemm.yaml");
  ASSERT_TRUE(budgets.ok()) << budgets.status().ToString();
  EXPECT_EQ(budgets->search().max_candidates(), 1);
  EXPECT_EQ(budgets->search().max_seconds(), 0.5);
  EXPECT_EQ(budgets->search().patience(), 1);
}

TEST(SpecLoaderTest, IntegersOutOfRangeSayRangeNotType) {
  EXPECT_EQ(ParseError(std::string(kMinimal) + "search: {max_candidates: 12345678901234567890}\n"),
            "gemm.yaml:11: search.max_candidates: 12345678901234567890 is out of range: an "
            "integer from -9223372036854775808 to 9223372036854775807");
  EXPECT_EQ(ParseError(std::string(kMinimal) + "benchmark: {min_repeats: 3000000000}\n"),
            "gemm.yaml:11: benchmark.min_repeats: 3000000000 is out of range: an integer from "
            "-2147483648 to 2147483647");
  EXPECT_EQ(ParseError(std::string(kMinimal) + "search: {seed: -1}\n"),
            "gemm.yaml:11: search.seed: -1 is out of range: an integer from 0 to "
            "18446744073709551615");
  std::string problem = kMinimal;
  problem.replace(problem.find("N: 1024"), 7, "N: 99999999999999999999");
  EXPECT_EQ(ParseError(problem),
            "gemm.yaml:7: problems[0].N: 99999999999999999999 is out of range: an integer from "
            "-9223372036854775808 to 9223372036854775807");
  std::string range = kMinimal;
  range.replace(range.find("[1, 2, 4]"), 9, "{from: 1, to: 99999999999999999999}");
  EXPECT_EQ(ParseError(range),
            "gemm.yaml:5: params.UNROLL.to: 99999999999999999999 is out of range: an integer "
            "from -9223372036854775808 to 9223372036854775807");
  // Not a string of digits behind the user's back; quoted, it is one.
  std::string value = kMinimal;
  value.replace(value.find("[1, 2, 4]"), 9, "[1, 99999999999999999999]");
  EXPECT_EQ(ParseError(value),
            "gemm.yaml:5: params.UNROLL: 99999999999999999999 is out of range: an integer from "
            "-9223372036854775808 to 9223372036854775807");
  std::string quoted = kMinimal;
  quoted.replace(quoted.find("[1, 2, 4]"), 9, "[1, \"99999999999999999999\"]");
  auto spec = ParseSpecYaml(quoted, "gemm.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->params(0).values(1).str_value(), "99999999999999999999");
  // A decimal was taken as the string "2.5", which compares with no integer:
  // every constraint comparing it dropped its configurations silently.
  std::string decimal = kMinimal;
  decimal.replace(decimal.find("[1, 2, 4]"), 9, "[1, 2.5, 4]");
  EXPECT_EQ(ParseError(decimal),
            "gemm.yaml:5: params.UNROLL: 2.5 is not an integer: a value is an integer or a string "
            "(quoted, \"2.5\", to mean the text)");
  decimal.replace(decimal.find("2.5"), 3, "\"2.5\"");
  ASSERT_TRUE(ParseSpecYaml(decimal, "gemm.yaml").ok());
  // Still not an integer at all.
  EXPECT_EQ(ParseError(std::string(kMinimal) + "search: {max_candidates: 12.5}\n"),
            "gemm.yaml:11: search.max_candidates: expected an integer");
}

TEST(SpecLoaderTest, NumbersADoubleCannotHoldSayRangeNotType) {
  EXPECT_EQ(ParseError(std::string(kMinimal) + "search: {max_seconds: 1e400}\n"),
            "gemm.yaml:11: search.max_seconds: 1e400 is out of range: a number up to about "
            "1.8e308 in size");
  EXPECT_EQ(ParseError(std::string(kMinimal) + "search: {early_stop: -2e308}\n"),
            "gemm.yaml:11: search.early_stop: -2e308 is out of range: a number up to about "
            "1.8e308 in size");
  EXPECT_EQ(ParseError(std::string(kMinimal) + "search: {max_seconds: 1e3x}\n"),
            "gemm.yaml:11: search.max_seconds: expected a number");
}

TEST(SpecLoaderTest, LoadSpecFileReadsSourceAndIncludes) {
  testing::TempDir dir;
  ASSERT_TRUE(MakeDirs(dir / "detail").ok());
  ASSERT_TRUE(WriteFileAtomic(dir / "saxpy.cc", "// kernel\n").ok());
  ASSERT_TRUE(WriteFileAtomic(dir / "detail/util.h", "// util\n").ok());
  ASSERT_TRUE(
      WriteFileAtomic(dir / "saxpy.yaml", std::string(kMinimal) + "includes: [detail/util.h]\n")
          .ok());
  auto loaded = LoadSpecFile(dir / "saxpy.yaml");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->path, dir / "saxpy.yaml");
  ASSERT_EQ(loaded->sources.size(), 2u);
  EXPECT_EQ(loaded->sources[0].path(), "saxpy.cc");
  EXPECT_EQ(loaded->sources[0].content(), "// kernel\n");
  EXPECT_EQ(loaded->sources[1].path(), "detail/util.h");
  EXPECT_EQ(loaded->sources[1].content(), "// util\n");
}

TEST(SpecLoaderTest, LoadSpecFileRejectsMissingAndEscapingSources) {
  testing::TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir / "saxpy.yaml", kMinimal).ok());
  auto missing = LoadSpecFile(dir / "saxpy.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(),
              HasSubstr(dir / "saxpy.yaml:2: source: cannot read " + dir / "saxpy.cc"));

  ASSERT_TRUE(WriteFileAtomic(dir / "saxpy.cc", "").ok());
  ASSERT_TRUE(
      WriteFileAtomic(dir / "saxpy.yaml", std::string(kMinimal) + "includes: [../secret.h]\n")
          .ok());
  auto escaping = LoadSpecFile(dir / "saxpy.yaml");
  ASSERT_FALSE(escaping.ok());
  EXPECT_EQ(escaping.status().message(),
            dir /
                "saxpy.yaml:11: includes[0]: '../secret.h' must be a relative path inside the "
                "spec's folder");
}

// ValidateSpec names fields only; a person reading it wants the line too. A
// field the file leaves to its default gets the line of the one around it.
TEST(SpecLoaderTest, LocateErrorsPutsEachFieldsLineBeforeIt) {
  LoadedSpec spec;
  spec.path = "saxpy.yaml";
  spec.field_lines = {{"constraints[1]", 13}, {"benchmark", 14}, {"problems[0]", 7}};
  EXPECT_EQ(LocateErrors(spec,
                         "constraints[1]: 'UNROL > 0' uses 'UNROL'\n"
                         "benchmark.timeout_s: must be > 0\n"
                         "problems[0].N: below 1\n"
                         "sources: 2 files"),
            "saxpy.yaml:13: constraints[1]: 'UNROL > 0' uses 'UNROL'\n"
            "saxpy.yaml:14: benchmark.timeout_s: must be > 0\n"
            "saxpy.yaml:7: problems[0].N: below 1\n"
            "saxpy.yaml: sources: 2 files");
}

TEST(SpecLoaderTest, RecordsTheLineOfEveryKeyAndListItem) {
  testing::TempDir dir;
  ASSERT_TRUE(WriteFileAtomic(dir / "saxpy.cc", "").ok());
  ASSERT_TRUE(WriteFileAtomic(dir / "saxpy.yaml", std::string(kMinimal) +
                                                      "constraints:\n"
                                                      "  - \"UNROLL <= 4\"\n"
                                                      "  - \"UNROL > 0\"\n"
                                                      "benchmark: {warmup_ms: 1}\n")
                  .ok());
  auto loaded = LoadSpecFile(dir / "saxpy.yaml");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const std::map<std::string, int>& lines = loaded->field_lines;
  EXPECT_EQ(lines.at("kernel"), 1);
  EXPECT_EQ(lines.at("params.UNROLL"), 5);
  EXPECT_EQ(lines.at("problems[0]"), 7);
  EXPECT_EQ(lines.at("problems[0].N"), 7);
  EXPECT_EQ(lines.at("buffers.Y.output"), 10);
  EXPECT_EQ(lines.at("constraints[1]"), 13);
  EXPECT_EQ(lines.at("benchmark.warmup_ms"), 14);
  EXPECT_EQ(LocateErrors(*loaded, "constraints[1]: 'UNROL > 0' uses 'UNROL'"),
            dir / "saxpy.yaml:13: constraints[1]: 'UNROL > 0' uses 'UNROL'");
}

}  // namespace
}  // namespace tf::kernelspec
