#include "kernelspec/expr.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tf::kernelspec {
namespace {

using ::testing::HasSubstr;

Scalar Eval(std::string_view text, const Bindings& vars = {}) {
  auto expr = Expr::Parse(text);
  EXPECT_TRUE(expr.ok()) << expr.status().ToString();
  if (!expr.ok()) return int64_t{-999};
  auto value = expr->Eval(vars);
  EXPECT_TRUE(value.ok()) << value.status().ToString();
  return value.ok() ? *value : Scalar{int64_t{-999}};
}

std::string EvalError(std::string_view text, const Bindings& vars = {}) {
  auto expr = Expr::Parse(text);
  if (!expr.ok()) return expr.status().message();
  auto value = expr->Eval(vars);
  EXPECT_FALSE(value.ok()) << text << " evaluated";
  return value.status().message();
}

std::string ParseError(std::string_view text) {
  auto expr = Expr::Parse(text);
  EXPECT_FALSE(expr.ok()) << text << " parsed";
  return expr.status().message();
}

TEST(ExprTest, IntegerArithmeticStaysInteger) {
  EXPECT_EQ(Eval("7 / 2"), Scalar(int64_t{3}));
  EXPECT_EQ(Eval("-7 / 2"), Scalar(int64_t{-3}));
  EXPECT_EQ(Eval("7 % 3"), Scalar(int64_t{1}));
  EXPECT_EQ(Eval("2 + 3 * 4 - 1"), Scalar(int64_t{13}));
  EXPECT_EQ(Eval("(2 + 3) * 4"), Scalar(int64_t{20}));
  EXPECT_EQ(Eval("--5"), Scalar(int64_t{5}));
}

TEST(ExprTest, DoubleOperandMakesDouble) {
  EXPECT_EQ(Eval("7 / 2.0"), Scalar(3.5));
  EXPECT_EQ(Eval("1.5 * 2"), Scalar(3.0));
  EXPECT_EQ(Eval("1e3 + 1"), Scalar(1001.0));
  EXPECT_EQ(Eval("max(1, 2.5)"), Scalar(2.5));
  EXPECT_EQ(Eval("min(1, 2.5)"), Scalar(1.0));
}

TEST(ExprTest, ComparisonsAndLogicYieldZeroOrOne) {
  EXPECT_EQ(Eval("3 < 4"), Scalar(int64_t{1}));
  EXPECT_EQ(Eval("3 >= 4"), Scalar(int64_t{0}));
  EXPECT_EQ(Eval("4 <= 4 && 5 > 4"), Scalar(int64_t{1}));
  EXPECT_EQ(Eval("0 || 7"), Scalar(int64_t{1}));
  EXPECT_EQ(Eval("!0"), Scalar(int64_t{1}));
  EXPECT_EQ(Eval("3 != 3.0"), Scalar(int64_t{0}));
}

TEST(ExprTest, PrecedenceFollowsC) {
  EXPECT_EQ(Eval("1 + 2 < 4 == 1"), Scalar(int64_t{1}));
  EXPECT_EQ(Eval("1 || 0 && 0"), Scalar(int64_t{1}));
  EXPECT_EQ(Eval("1 ? 2 : 0 ? 3 : 4"), Scalar(int64_t{2}));
  EXPECT_EQ(Eval("0 ? 2 : 0 ? 3 : 4"), Scalar(int64_t{4}));
  EXPECT_EQ(Eval("-2 * -3"), Scalar(int64_t{6}));
}

TEST(ExprTest, ShortCircuitSkipsErrors) {
  EXPECT_EQ(Eval("0 && 1 / 0"), Scalar(int64_t{0}));
  EXPECT_EQ(Eval("1 || 1 / 0"), Scalar(int64_t{1}));
  EXPECT_EQ(Eval("1 ? 5 : 1 / 0"), Scalar(int64_t{5}));
}

TEST(ExprTest, Functions) {
  EXPECT_EQ(Eval("min(4, 2, 8)"), Scalar(int64_t{2}));
  EXPECT_EQ(Eval("max(4, 2, 8)"), Scalar(int64_t{8}));
  EXPECT_EQ(Eval("ceil_div(10, 4)"), Scalar(int64_t{3}));
  EXPECT_EQ(Eval("ceil_div(8, 4)"), Scalar(int64_t{2}));
  EXPECT_EQ(Eval("ceil_div(-10, 4)"), Scalar(int64_t{-2}));
  EXPECT_EQ(Eval("log2(1024)"), Scalar(int64_t{10}));
  EXPECT_EQ(Eval("log2(1000)"), Scalar(int64_t{9}));
  EXPECT_EQ(Eval("is_pow2(64)"), Scalar(int64_t{1}));
  EXPECT_EQ(Eval("is_pow2(96)"), Scalar(int64_t{0}));
  EXPECT_EQ(Eval("is_pow2(0)"), Scalar(int64_t{0}));
  EXPECT_EQ(Eval("abs(-3)"), Scalar(int64_t{3}));
  EXPECT_EQ(Eval("abs(-2.5)"), Scalar(2.5));
}

TEST(ExprTest, VariablesIncludingDottedDeviceNames) {
  Bindings vars = {{"BM", int64_t{128}}, {"device.max_smem", int64_t{49152}}, {"DT", "f16"}};
  EXPECT_EQ(Eval("BM * 64 * 4 <= device.max_smem", vars), Scalar(int64_t{1}));
  EXPECT_EQ(Eval("DT == \"f16\" && DT != 'bf16'", vars), Scalar(int64_t{1}));
  auto expr = Expr::Parse("BM * BM + device.max_smem - BM");
  ASSERT_TRUE(expr.ok());
  EXPECT_THAT(expr->variables(), ::testing::ElementsAre("BM", "device.max_smem"));
}

TEST(ExprTest, StringNeverEqualsNumber) {
  Bindings vars = {{"BM", "auto"}};
  EXPECT_EQ(Eval("BM == 64", vars), Scalar(int64_t{0}));
  EXPECT_EQ(Eval("BM != 64", vars), Scalar(int64_t{1}));
  EXPECT_EQ(Eval("BM == 'auto' || BM <= 128", vars), Scalar(int64_t{1}));
  EXPECT_EQ(Eval("\"x\""), Scalar(std::string("x")));
}

TEST(ExprTest, ParseErrorsQuoteTextAndColumn) {
  EXPECT_EQ(ParseError("BM * "), "in 'BM * ': expected an operand at column 6");
  EXPECT_THAT(ParseError("(BM + 1"), HasSubstr("expected ')' to close the '(' at column 1"));
  EXPECT_THAT(ParseError("BM = 1"), HasSubstr("unexpected '=' (did you mean '=='?) at column 4"));
  EXPECT_THAT(ParseError("foo(1)"), HasSubstr("unknown function 'foo'"));
  EXPECT_THAT(ParseError("ceil_div(1)"), HasSubstr("ceil_div takes 2 arguments, got 1"));
  EXPECT_THAT(ParseError("'abc"), HasSubstr("unterminated string at column 1"));
  EXPECT_THAT(ParseError("99999999999999999999"), HasSubstr("does not fit in 64 bits"));
  EXPECT_THAT(ParseError("1 ? 2"), HasSubstr("expected ':'"));
  EXPECT_THAT(ParseError("12abc"), HasSubstr("unexpected 'a' at column 3"));
  EXPECT_THAT(ParseError(""), HasSubstr("expected an operand at column 1"));
  EXPECT_THAT(ParseError(std::string(500, '(') + "1" + std::string(500, ')')),
              HasSubstr("nested too deeply"));
}

TEST(ExprTest, EvaluationErrorsNameTheProblem) {
  EXPECT_EQ(EvalError("BX*2", {{"BM", int64_t{1}}}), "unknown variable 'BX' in 'BX*2' (known: BM)");
  EXPECT_EQ(EvalError("BM / X", {{"BM", int64_t{1}}, {"X", int64_t{0}}}),
            "in 'BM / X': division by zero at column 4");
  EXPECT_THAT(EvalError("5 % 0"), HasSubstr("division by zero"));
  EXPECT_THAT(EvalError("9223372036854775807 + 1"), HasSubstr("integer overflow"));
  EXPECT_THAT(EvalError("4611686018427387904 * 2"), HasSubstr("integer overflow"));
  EXPECT_THAT(EvalError("'a' + 1"), HasSubstr("'+' needs numbers, got a string"));
  EXPECT_THAT(EvalError("'a' < 'b'"), HasSubstr("'<' needs numbers"));
  EXPECT_THAT(EvalError("log2(0)"), HasSubstr("log2 needs a positive argument"));
}

TEST(ExprTest, EvaluateIntAndNumber) {
  EXPECT_EQ(*EvaluateInt("M*K", {{"M", int64_t{4096}}, {"K", int64_t{512}}}), 4096 * 512);
  EXPECT_EQ(*EvaluateInt("M / 2.0", {{"M", int64_t{8}}}), 4);
  auto fraction = EvaluateInt("M / 3.0", {{"M", int64_t{8}}});
  ASSERT_FALSE(fraction.ok());
  EXPECT_THAT(fraction.status().message(), HasSubstr("expected a whole number"));
  EXPECT_FALSE(EvaluateInt("'x'", {}).ok());
  EXPECT_DOUBLE_EQ(
      *EvaluateNumber("2*M*N*K", {{"M", int64_t{2}}, {"N", int64_t{3}}, {"K", int64_t{4}}}), 48.0);
  EXPECT_THAT(EvaluateNumber("'x'", {}).status().message(), HasSubstr("expected a number"));
}

TEST(ExprTest, EvalSlotsReadsTheSlotsItIsGiven) {
  auto expr = Expr::Parse("A * 10 + B");
  ASSERT_TRUE(expr.ok());
  // Slots in another order than the variables: B lives in slot 0, A in slot 2.
  ScalarRef slots[] = {ScalarRef::Int(3), ScalarRef::String("unused"), ScalarRef::Int(7)};
  int slot_of_variable[] = {2, 0};
  ScalarRef result;
  ASSERT_TRUE(expr->EvalSlots(slots, slot_of_variable, &result));
  EXPECT_EQ(result.kind, ScalarRef::Kind::kInt);
  EXPECT_EQ(result.i, 73);

  auto divide = Expr::Parse("A / B");
  ASSERT_TRUE(divide.ok());
  slots[0] = ScalarRef::Int(0);
  EXPECT_FALSE(divide->EvalSlots(slots, slot_of_variable, &result));
}

TEST(ExprTest, CopiedExpressionKeepsItsStrings) {
  Expr copy = *Expr::Parse("DT == 'f16'");
  {
    Expr original = *Expr::Parse("DT == 'bf16'");
    copy = original;
  }
  EXPECT_EQ(*copy.Eval({{"DT", "bf16"}}), Scalar(int64_t{1}));
}

TEST(ExprTest, PythonLogicWords) {
  EXPECT_EQ(Eval("1 and 0"), Scalar(int64_t{0}));
  EXPECT_EQ(Eval("0 or 3"), Scalar(int64_t{1}));
  EXPECT_EQ(Eval("not 0"), Scalar(int64_t{1}));
  // not is looser than ==, unlike C's !: not 1 == 2 is not (1 == 2).
  EXPECT_EQ(Eval("not 1 == 2"), Scalar(int64_t{1}));
  EXPECT_EQ(Eval("!1 == 2"), Scalar(int64_t{0}));
  EXPECT_EQ(Eval("0 and 1 / 0"), Scalar(int64_t{0}));  // short-circuit
  EXPECT_EQ(Eval("True and not False"), Scalar(int64_t{1}));
  // Words are whole words: variables may start with them.
  EXPECT_EQ(Eval("order + android + notes + inner", {{"order", int64_t{1}},
                                                     {"android", int64_t{2}},
                                                     {"notes", int64_t{3}},
                                                     {"inner", int64_t{4}}}),
            Scalar(int64_t{10}));
}

TEST(ExprTest, PythonFloorDivisionAndPower) {
  EXPECT_EQ(Eval("7 // 2"), Scalar(int64_t{3}));
  EXPECT_EQ(Eval("-7 // 2"), Scalar(int64_t{-4}));  // floors, where / truncates
  EXPECT_EQ(Eval("7 // -2"), Scalar(int64_t{-4}));
  EXPECT_EQ(Eval("7.0 // 2"), Scalar(3.0));
  EXPECT_EQ(Eval("(262144 // 32) // 2"), Scalar(int64_t{4096}));
  EXPECT_EQ(Eval("2 ** 10"), Scalar(int64_t{1024}));
  EXPECT_EQ(Eval("2 ** 3 ** 2"), Scalar(int64_t{512}));  // right-associative
  EXPECT_EQ(Eval("-2 ** 2"), Scalar(int64_t{-4}));
  EXPECT_EQ(Eval("2 ** -1"), Scalar(0.5));
  EXPECT_EQ(Eval("3 * 2 ** 2"), Scalar(int64_t{12}));
  EXPECT_THAT(EvalError("2 ** 64"), HasSubstr("integer overflow"));
  EXPECT_THAT(EvalError("1 // 0"), HasSubstr("division by zero"));
}

TEST(ExprTest, PythonChainedComparisons) {
  Bindings vars = {{"a", int64_t{16}}, {"b", int64_t{8}}};
  EXPECT_EQ(Eval("32 <= a * b <= 1024", vars), Scalar(int64_t{1}));
  EXPECT_EQ(Eval("32 <= a * b <= 64", vars), Scalar(int64_t{0}));
  EXPECT_EQ(Eval("1 < 2 < 3 < 4"), Scalar(int64_t{1}));
  // C would read 3 > 2 > 1 as (3 > 2) > 1, which is false.
  EXPECT_EQ(Eval("3 > 2 > 1"), Scalar(int64_t{1}));
  EXPECT_EQ(Eval("a == 16 == a", vars), Scalar(int64_t{1}));
  // A later link is not evaluated once an earlier one fails.
  EXPECT_EQ(Eval("2 < 1 < 1 / 0"), Scalar(int64_t{0}));
}

TEST(ExprTest, PythonMembership) {
  Bindings vars = {{"bs", int64_t{64}}, {"dt", std::string("f16")}};
  EXPECT_EQ(Eval("bs in [32, 64, 128]", vars), Scalar(int64_t{1}));
  EXPECT_EQ(Eval("bs in (32, 48)", vars), Scalar(int64_t{0}));
  EXPECT_EQ(Eval("bs not in [32, 48,]", vars), Scalar(int64_t{1}));
  EXPECT_EQ(Eval("bs * 2 in [bs + bs]", vars), Scalar(int64_t{1}));
  EXPECT_EQ(Eval("dt in ['f16', 'bf16'] and bs in [64]", vars), Scalar(int64_t{1}));
  EXPECT_EQ(Eval("bs in []", vars), Scalar(int64_t{0}));
  EXPECT_THAT(ParseError("bs in 64"), HasSubstr("expected a list [a, b, ...] after 'in'"));
  EXPECT_THAT(ParseError("bs in [1, 2"), HasSubstr("expected ',' or ']'"));
}

TEST(ExprTest, PythonConditionalExpression) {
  EXPECT_EQ(Eval("4 if 1 else 5"), Scalar(int64_t{4}));
  EXPECT_EQ(Eval("4 if 0 else 5 if 0 else 6"), Scalar(int64_t{6}));
  EXPECT_EQ(Eval("5 if 0 else 1 / 1"), Scalar(int64_t{1}));
  EXPECT_THAT(ParseError("4 if 1"), HasSubstr("expected 'else'"));
}

TEST(ExprTest, ConvolutionT1Conditions) {
  // The conditions of tests/data/spaces/convolution/convolution_milo_T1.json, verbatim.
  const char* shmem =
      "use_shmem == 0 or (((block_size_x*tile_size_x+(filter_width-1)))*((block_size_y*"
      "tile_size_y+(filter_height-1)))) < 12*1024";
  Bindings vars = {{"use_shmem", int64_t{1}},      {"block_size_x", int64_t{64}},
                   {"tile_size_x", int64_t{2}},    {"filter_width", int64_t{15}},
                   {"block_size_y", int64_t{8}},   {"tile_size_y", int64_t{4}},
                   {"filter_height", int64_t{15}}, {"use_padding", int64_t{1}}};
  // (128 + 14) * (32 + 14) = 6532 < 12288
  EXPECT_EQ(Eval(shmem, vars), Scalar(int64_t{1}));
  vars["tile_size_y"] = int64_t{16};  // (128 + 14) * (128 + 14) = 20164
  EXPECT_EQ(Eval(shmem, vars), Scalar(int64_t{0}));
  EXPECT_EQ(Eval("use_padding==0 or block_size_x % 32 != 0", vars), Scalar(int64_t{0}));
}

TEST(ExprTest, IsTrue) {
  EXPECT_TRUE(IsTrue(Scalar(int64_t{2})));
  EXPECT_FALSE(IsTrue(Scalar(int64_t{0})));
  EXPECT_TRUE(IsTrue(Scalar(0.5)));
  EXPECT_FALSE(IsTrue(Scalar(0.0)));
  EXPECT_TRUE(IsTrue(Scalar(std::string("x"))));
  EXPECT_FALSE(IsTrue(Scalar(std::string())));
}

}  // namespace
}  // namespace tf::kernelspec
