#include "kernelspec/validate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernelspec/spec_loader.h"

namespace tf::kernelspec {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kGemm = R"yaml(kernel: gemm
language: cuda
source: gemm.cuh
entry: "gemm<{BM},{BN},{DT}>"
params:
  BM: [64, 128]
  BN: {from: 32, to: 256, times: 2}
  DT: [half, float]
  THREADS: [128, 256]
constraints:
  - "BM * BN * 2 <= device.max_shared_mem && (DT == 'half' || BM <= 64)"
problems:
  - {M: 4096, N: 4096}
  - {M: 1024, N: 512}
buffers:
  A: {dtype: f16, count: "M*N"}
  C: {dtype: f32, count: "M*N", output: true}
launch: {grid: ["ceil_div(N, BN)", "ceil_div(M, BM)"], block: [THREADS]}
objective: {flops: "2*M*N"}
)yaml";

class ValidateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto parsed = ParseSpecYaml(kGemm, "gemm.yaml");
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    spec_ = *parsed;
    sources_.emplace_back().set_path("gemm.cuh");
    sources_.back().set_content("template <int BM, int BN, typename T> void gemm() {}");
  }

  std::string Error() {
    Status status = ValidateSpec(spec_, sources_, limits_);
    EXPECT_FALSE(status.ok()) << "spec was accepted";
    return status.message();
  }

  v1::KernelSpec spec_;
  std::vector<v1::SourceFile> sources_;
  SpecLimits limits_;
};

TEST_F(ValidateTest, OversizedSpecIsRefusedBeforeAnyOtherCheck) {
  limits_.max_spec_bytes = 1000;
  spec_.add_constraints(std::string(2000, '1'));
  spec_.set_language("cobol");  // not reported: the size is checked first
  std::string error = Error();
  EXPECT_THAT(error, HasSubstr("spec: "));
  EXPECT_THAT(error, HasSubstr("bytes, above the limit of 1000"));
  EXPECT_THAT(error, Not(HasSubstr("cobol")));
}

TEST_F(ValidateTest, TooManySourceFilesAreNamed) {
  limits_.max_source_files = 3;
  for (int i = 0; i < 3; ++i) sources_.emplace_back().set_path("extra" + std::to_string(i) + ".h");
  EXPECT_THAT(Error(), HasSubstr("sources: 4 files, above the limit of 3"));
}

TEST(ProblemBufferBytesTest, SumsEveryBufferAndSaturates) {
  auto spec = ParseSpecYaml(kGemm, "gemm.yaml");
  ASSERT_TRUE(spec.ok());
  auto bytes = ProblemBufferBytes(*spec, spec->problems(1));  // M=1024, N=512: f16 + f32
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, 1024 * 512 * (2 + 4));
  spec->mutable_buffers(0)->set_count("M*N*M*N*M*4");  // 2^62 elements of 2 bytes
  bytes = ProblemBufferBytes(*spec, spec->problems(0));
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, INT64_MAX);
  spec->mutable_buffers(0)->set_count("M*N*M*N*M*N");
  bytes = ProblemBufferBytes(*spec, spec->problems(0));
  EXPECT_FALSE(bytes.ok());  // the count itself overflows int64: named
  EXPECT_THAT(bytes.status().message(), HasSubstr("buffers.A.count"));
}

TEST_F(ValidateTest, AcceptsAGoodSpec) {
  Status status = ValidateSpec(spec_, sources_, limits_);
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST_F(ValidateTest, DefineStyleParamsNeedNoPlaceholderButEntryIsAName) {
  spec_.set_param_style("define");
  EXPECT_THAT(Error(), HasSubstr("entry: 'gemm<{BM},{BN},{DT}>' must be the kernel's name"));
  spec_.set_entry("gemm");
  // THREADS and DT reach the kernel as macros: no "is used neither" error.
  EXPECT_TRUE(ValidateSpec(spec_, sources_, limits_).ok())
      << ValidateSpec(spec_, sources_, limits_).message();
  spec_.set_param_style("macros");
  EXPECT_THAT(Error(), HasSubstr("param_style: 'macros' is not one of"));
  EXPECT_THAT(Error(), Not(HasSubstr("is used neither")));  // that error alone
}

TEST_F(ValidateTest, ConstantMemoryIsForGpuKernels) {
  spec_.mutable_buffers(0)->set_memory("constant");
  EXPECT_TRUE(ValidateSpec(spec_, sources_, limits_).ok());
  spec_.mutable_buffers(0)->set_memory("texture");
  EXPECT_THAT(Error(), HasSubstr("buffers.A.memory: 'texture' is not one of"));
  spec_.mutable_buffers(0)->set_memory("constant");
  spec_.set_language("cpp");
  EXPECT_THAT(Error(), HasSubstr("buffers.A.memory: constant memory is a GPU module's"));
}

TEST_F(ValidateTest, NameAndLanguage) {
  spec_.set_name("gemm f16");
  spec_.clear_language();  // which languages exist is the toolchain table's (vendor_tables_test)
  std::string error = Error();
  EXPECT_THAT(error, HasSubstr("kernel: 'gemm f16' must be an identifier"));
  EXPECT_THAT(error, HasSubstr("language: is empty"));
}

TEST_F(ValidateTest, EntryPlaceholdersMustBeParams) {
  spec_.set_entry("gemm<{BM},{BX},{BN},{DT}>");
  EXPECT_THAT(Error(),
              HasSubstr("entry: {BX} is not a parameter (parameters: BM, BN, DT, THREADS)"));
  spec_.set_entry("gemm<{BM},{BN},{DT");
  EXPECT_THAT(Error(), HasSubstr("entry: '{' at column 16 is not closed"));
}

TEST_F(ValidateTest, EveryParamMustReachTheKernel) {
  spec_.mutable_launch()->set_block(0, "128");
  EXPECT_THAT(Error(), HasSubstr("params.THREADS: is used neither in entry nor in launch"));
}

TEST_F(ValidateTest, ParamNamesAndRanges) {
  *spec_.add_params() = spec_.params(0);
  spec_.mutable_params(1)->mutable_range()->set_factor(1);
  spec_.mutable_params(2)->add_values()->set_str_value("half");
  std::string error = Error();
  EXPECT_THAT(error, HasSubstr("params.BM: defined twice"));
  EXPECT_THAT(error, HasSubstr("params.BN: range times must be > 1, got 1"));
  EXPECT_THAT(error, HasSubstr("params.DT: value 'half' appears twice"));
}

TEST_F(ValidateTest, ArithmeticRangeNeedsPositiveStepAndOrder) {
  v1::Range* range = spec_.mutable_params(1)->mutable_range();
  range->set_factor(0);
  range->set_step(0);
  EXPECT_THAT(Error(), HasSubstr("params.BN: range step must be > 0, got 0"));
  range->set_step(32);
  range->set_start(512);
  EXPECT_THAT(Error(), HasSubstr("params.BN: range from 512 is after to 256"));
}

TEST_F(ValidateTest, ExpressionsUseOnlyKnownNames) {
  spec_.set_constraints(0, "BM * BX <= 4");
  spec_.mutable_buffers(0)->set_count("M * BM");
  spec_.mutable_objective()->set_flops("2 * M * N *");
  std::string error = Error();
  EXPECT_THAT(error, HasSubstr("constraints[0]: 'BM * BX <= 4' uses 'BX', which is none of the "
                               "parameters, problem variables and device.*"));
  EXPECT_THAT(error, HasSubstr("buffers.A.count: 'M * BM' uses 'BM', which is none of the "
                               "problem variables"));
  EXPECT_THAT(error, HasSubstr("objective.flops: in '2 * M * N *': expected an operand"));
}

TEST_F(ValidateTest, ProblemsShareVariables) {
  spec_.mutable_problems(1)->mutable_vars(1)->set_name("K");
  *spec_.add_problems() = spec_.problems(0);
  std::string error = Error();
  EXPECT_THAT(error, HasSubstr("problems[1]: has variables K, M but problems[0] has M, N"));
  EXPECT_THAT(error, HasSubstr("problems[2]: repeats an earlier problem"));
  spec_.clear_problems();
  EXPECT_THAT(Error(), HasSubstr("problems: at least one problem is needed"));
}

TEST_F(ValidateTest, ProblemVariableMayNotShadowAParam) {
  v1::ProblemVar* var = spec_.mutable_problems(0)->add_vars();
  var->set_name("BM");
  EXPECT_THAT(Error(), HasSubstr("'BM' is both a parameter and a problem variable"));
}

TEST_F(ValidateTest, Buffers) {
  spec_.mutable_buffers(0)->set_dtype("f8");
  spec_.mutable_buffers(1)->set_output(false);
  spec_.mutable_buffers(1)->set_count("M - 1024");
  std::string error = Error();
  EXPECT_THAT(error, HasSubstr("buffers.A.dtype: 'f8' is not one of f32, f64"));
  EXPECT_THAT(error, HasSubstr("buffers: at least one buffer needs output: true"));
  EXPECT_THAT(error, HasSubstr("buffers.C.count: 'M - 1024' is 0 for problem M=1024,N=512"));
}

// A random range the runner can draw from: finite, ordered, held by the dtype,
// and with an integer in it for an integer dtype.
TEST_F(ValidateTest, RandomRangesTheDtypeCannotHoldAreRefused) {
  auto error_for = [this](const std::string& dtype, double min, double max) {
    v1::Buffer* a = spec_.mutable_buffers(0);
    a->set_dtype(dtype);
    a->set_random_min(min);
    a->set_random_max(max);
    return ValidateSpec(spec_, sources_, limits_).message();
  };
  EXPECT_EQ(error_for("u8", 0, 255), "");
  EXPECT_EQ(error_for("i64", -1e15, 1e15), "");
  EXPECT_EQ(error_for("f16", -65504, 65504), "");
  EXPECT_THAT(error_for("u8", -5, 300),
              HasSubstr("buffers.A: [-5, 300] is outside what u8 inputs may hold, [0, 255]"));
  EXPECT_THAT(error_for("u32", 0, 5e9), HasSubstr("[0, 4294967295]"));
  EXPECT_THAT(error_for("f16", 0, 1e5),
              HasSubstr("[0, 100000] is outside what f16 inputs may hold, [-65504, 65504]"));
  EXPECT_THAT(error_for("i32", 0.25, 0.75),
              HasSubstr("buffers.A: [0.25, 0.75] holds no integer for i32 inputs"));
  EXPECT_THAT(error_for("f32", 2, 1), HasSubstr("buffers.A: min 2 is above max 1"));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_THAT(error_for("f32", nan, 1), HasSubstr("buffers.A.min: must be a finite number"));
  EXPECT_THAT(error_for("f32", 0, inf), HasSubstr("buffers.A.max: must be a finite number"));
  EXPECT_THAT(error_for("f64", -1.5e308, 1.5e308), HasSubstr("as one range"));
}

TEST_F(ValidateTest, BufferBytesLimit) {
  limits_.max_buffer_bytes = 4096LL * 4096 * 4 - 1;
  EXPECT_THAT(Error(), HasSubstr("buffers.C: 16777216 elements of f32 exceed the 67108863-byte "
                                 "buffer limit for problem M=4096,N=4096"));
}

// How many dimensions a launch needs is the toolchain's (grid_launch_test);
// none takes more than three, and each is an expression checked here.
TEST_F(ValidateTest, LaunchGeometryHasAtMostThreeDimensions) {
  for (const char* extra : {"1", "1"}) spec_.mutable_launch()->add_grid(extra);
  EXPECT_THAT(Error(), HasSubstr("launch.grid: 4 dimensions; at most 3"));
}

TEST_F(ValidateTest, ReferenceLaunchGeometryUsesProblemVariablesOnly) {
  spec_.mutable_verify()->set_reference("gemm_reference");
  spec_.mutable_verify()->add_grid("ceil_div(N, 16)");
  spec_.mutable_verify()->add_block("BM");
  EXPECT_THAT(Error(), HasSubstr("verify.block[0]: 'BM' uses 'BM', which is none of the problem "
                                 "variables"));
  spec_.mutable_verify()->set_block(0, "256");
  EXPECT_TRUE(ValidateSpec(spec_, sources_, limits_).ok());
}

TEST_F(ValidateTest, TensorMaps) {
  auto parsed = ParseSpecYaml(std::string(kGemm) + R"yaml(tensor_maps:
  - {buffer: A, dims: [N, M], box: [64, BM], swizzle: 128}
)yaml",
                              "gemm.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  spec_ = *parsed;
  Status good = ValidateSpec(spec_, sources_, limits_);
  EXPECT_TRUE(good.ok()) << good.message();

  v1::TensorMap* map = spec_.mutable_tensor_maps(0);
  map->set_buffer("B");
  map->set_swizzle_bytes(96);
  map->add_box("BN");
  map->set_dims(1, "THREADS");
  std::string error = Error();
  EXPECT_THAT(error, HasSubstr("tensor_maps[0].buffer: 'B' is not a buffer"));
  EXPECT_THAT(error, HasSubstr("tensor_maps[0].swizzle: 96 is not 0, 32, 64 or 128"));
  EXPECT_THAT(error, HasSubstr("tensor_maps[0].box: has 3 dimensions, dims has 2"));
  EXPECT_THAT(error, HasSubstr("tensor_maps[0].dims[1]: 'THREADS' uses 'THREADS'"));

  // Extents are checked against the buffer for every problem.
  map->set_buffer("A");
  map->set_swizzle_bytes(128);
  map->clear_box();
  map->add_box("64");
  map->add_box("BM");
  map->set_dims(0, "N");
  map->set_dims(1, "2 * M");
  EXPECT_THAT(Error(), HasSubstr("tensor_maps[0].dims: cover more than buffer 'A' holds"));
  map->set_dims(0, "3");
  map->set_dims(1, "M");
  EXPECT_THAT(Error(), HasSubstr("rows of 6 bytes are not a multiple of 16"));
}

TEST_F(ValidateTest, SettingsRanges) {
  spec_.mutable_verify()->set_rtol(-1);
  spec_.mutable_benchmark()->set_min_time_ms(0);
  spec_.mutable_benchmark()->set_max_repeats(2);
  spec_.mutable_benchmark()->set_rest(-1);
  std::string error = Error();
  EXPECT_THAT(error, HasSubstr("verify.rtol: must be a finite number >= 0"));
  EXPECT_THAT(error, HasSubstr("benchmark.min_time_ms: must be > 0"));
  EXPECT_THAT(error, HasSubstr("benchmark.max_repeats: 2 is below min_repeats 5"));
  EXPECT_THAT(error, HasSubstr("benchmark.rest: must be a finite number >= 0"));
  // Durations are bounded: infinity or 1e20 s would overflow the clocks.
  spec_.mutable_benchmark()->set_timeout_s(std::numeric_limits<double>::infinity());
  spec_.mutable_benchmark()->set_warmup_ms(1e20);
  spec_.mutable_search()->set_max_seconds(std::nan(""));
  error = Error();
  EXPECT_THAT(error, HasSubstr("benchmark.timeout_s: must be > 0 and at most 86400 (a day), "
                               "got inf"));
  EXPECT_THAT(error, HasSubstr("benchmark.warmup_ms: must be >= 0 and at most 3.6e+06 (an "
                               "hour), got 1e+20"));
  EXPECT_THAT(error, HasSubstr("search.max_seconds: must be >= 0 and at most 3.16224e+07 (a "
                               "year), got nan"));
  // target.vendor and compile_options are the toolchain's to check
  // (vendor_tables_test, compile_policy_test).
}

TEST_F(ValidateTest, SpaceSizeLimitUnlessSampled) {
  limits_.max_space_size = 10;  // the space has 2 * 4 * 2 * 2 = 32
  EXPECT_THAT(Error(), HasSubstr("params: the space has 32 configurations, above the limit of 10"));
  spec_.mutable_search()->set_strategy("random");
  EXPECT_THAT(Error(), HasSubstr("params: the space has 32 configurations"))
      << "random without a budget enumerates the space";
  spec_.mutable_search()->set_max_candidates(8);
  EXPECT_TRUE(ValidateSpec(spec_, sources_, limits_).ok());
  spec_.mutable_search()->set_strategy("bayesian");
  EXPECT_THAT(Error(), HasSubstr("search.strategy: 'bayesian' is not one of auto, exhaustive, "
                                 "random, bayes, evolutionary, local"));
}

TEST_F(ValidateTest, SearchBudgets) {
  spec_.mutable_search()->set_max_seconds(-1);
  spec_.mutable_search()->set_patience(-2);
  spec_.mutable_search()->set_min_improvement_percent(100);
  spec_.mutable_search()->set_early_stop(0.5);
  std::string error = Error();
  EXPECT_THAT(error, HasSubstr("search.early_stop: must be 0 (off) or a factor >= 1"));
  EXPECT_THAT(error, HasSubstr("search.max_seconds: must be >= 0"));
  EXPECT_THAT(error, HasSubstr("search.patience: must be >= 0"));
  EXPECT_THAT(error, HasSubstr("search.min_improvement_percent: must be in [0, 100)"));
}

TEST_F(ValidateTest, Sources) {
  sources_[0].set_path("other.cuh");
  sources_.emplace_back().set_path("../etc/passwd");
  sources_.emplace_back().set_path("/abs.h");
  limits_.max_source_bytes = 10;
  std::string error = Error();
  EXPECT_THAT(error, HasSubstr("source: 'gemm.cuh' is not among the files sent"));
  EXPECT_THAT(
      error,
      HasSubstr("sources: '../etc/passwd' must be a relative path without empty, '.' or '..'"));
  EXPECT_THAT(error, HasSubstr("sources: '/abs.h' must be a relative path"));
  EXPECT_THAT(error, HasSubstr("bytes, above the limit of 10"));
}

TEST(ValidateHelpersTest, DtypeSize) {
  EXPECT_EQ(DtypeSize("f32"), 4u);
  EXPECT_EQ(DtypeSize("bf16"), 2u);
  EXPECT_EQ(DtypeSize("i64"), 8u);
  EXPECT_EQ(DtypeSize("u8"), 1u);
  EXPECT_EQ(DtypeSize("f128"), 0u);
}

TEST(ValidateHelpersTest, IsSafeRelativePath) {
  EXPECT_TRUE(IsSafeRelativePath("a.cu"));
  EXPECT_TRUE(IsSafeRelativePath("detail/a..b.h"));
  EXPECT_FALSE(IsSafeRelativePath(""));
  EXPECT_FALSE(IsSafeRelativePath("/a.cu"));
  EXPECT_FALSE(IsSafeRelativePath(".."));
  EXPECT_FALSE(IsSafeRelativePath("a/../../b"));
  // What the build's source tree refuses is refused at submission too.
  EXPECT_FALSE(IsSafeRelativePath("a//b.h"));
  EXPECT_FALSE(IsSafeRelativePath("./a.cu"));
  EXPECT_FALSE(IsSafeRelativePath("a\"b.h"));
  EXPECT_FALSE(IsSafeRelativePath("a\\b.h"));
}

TEST(ValidateHelpersTest, CartesianSizeSaturates) {
  v1::KernelSpec spec;
  for (int k = 0; k < 5; ++k) {
    v1::Param* param = spec.add_params();
    param->set_name("P" + std::to_string(k));
    param->mutable_range()->set_start(1);
    param->mutable_range()->set_stop(1'000'000);
    param->mutable_range()->set_step(1);
  }
  EXPECT_EQ(CartesianSize(spec), UINT64_MAX);
  spec.mutable_params()->DeleteSubrange(2, 3);
  EXPECT_EQ(CartesianSize(spec), 1'000'000'000'000u);
}

}  // namespace
}  // namespace tf::kernelspec
