#include "spec/python_eval.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tf::spec {
namespace {

using ::testing::HasSubstr;

std::string Repr(std::string_view text, const PyEnv& env = {}) {
  auto value = EvaluatePython(text, env);
  if (!value.ok()) return "error: " + value.status().message();
  return value->Repr();
}

TEST(PythonEvalTest, ValuesAsKernelTunerFilesWriteThem) {
  EXPECT_EQ(Repr("[16, 32, 48]"), "[16, 32, 48]");
  EXPECT_EQ(Repr("range(4)"), "[0, 1, 2, 3]");
  EXPECT_EQ(Repr("range(1, 9, 3)"), "[1, 4, 7]");
  EXPECT_EQ(Repr("range(8, 0, -3)"), "[8, 5, 2]");
  EXPECT_EQ(Repr("list(range(2, 4))"), "[2, 3]");
  EXPECT_EQ(Repr("[2**i for i in range(5)]"), "[1, 2, 4, 8, 16]");
  EXPECT_EQ(Repr("[32*i for i in range(1, 9) if i % 2 == 0]"), "[64, 128, 192, 256]");
  EXPECT_EQ(Repr("[1, 2] + [4, 8] + list(range(16, 33, 16))"), "[1, 2, 4, 8, 16, 32]");
  EXPECT_EQ(Repr("[a*b for a in [1, 2] for b in [10, 100]]"), "[10, 100, 20, 200]");
  EXPECT_EQ(Repr("[x for x in range(1, 33) if x * x <= 32 and x != 3]"), "[1, 2, 4, 5]");
  EXPECT_EQ(Repr("sum([[1], [2, 3]], [])"), "[1, 2, 3]");
  EXPECT_EQ(Repr("[0] * 3"), "[0, 0, 0]");
  EXPECT_EQ(Repr("['float', 'half']"), "['float', 'half']");
  EXPECT_EQ(Repr("(1, 2,)"), "[1, 2]");
  EXPECT_EQ(Repr("[True, False]"), "[1, 0]");
  EXPECT_EQ(Repr("[0.5, 1e3]"), "[0.5, 1000.0]");
}

TEST(PythonEvalTest, ArithmeticHasPythonsMeaning) {
  EXPECT_EQ(Repr("7 / 2"), "3.5");
  EXPECT_EQ(Repr("-7 // 2"), "-4");
  EXPECT_EQ(Repr("-7 % 3"), "2");
  EXPECT_EQ(Repr("2 ** 3 ** 2"), "512");
  EXPECT_EQ(Repr("-2 ** 2"), "-4");
  EXPECT_EQ(Repr("2 ** -1"), "0.5");
  EXPECT_EQ(Repr("1 < 2 < 3"), "1");
  EXPECT_EQ(Repr("3 > 2 > 2"), "0");
  EXPECT_EQ(Repr("2 in [1, 2] and 5 not in (1, 2)"), "1");
  EXPECT_EQ(Repr("0 or 5"), "5");
  EXPECT_EQ(Repr("1 if 0 else 2"), "2");
  EXPECT_EQ(Repr("sum(x for x in range(5))"), "10");
  EXPECT_EQ(Repr("max(3, 9, 4) + min([5, 2]) + len([1, 1])"), "13");
  EXPECT_EQ(Repr("int(7 / 2) + abs(-2)"), "5");
}

TEST(PythonEvalTest, NamesComeFromTheEnvironment) {
  PyEnv env = {{"ProblemSize", PyValue::List({PyValue::Int(4096), PyValue::Int(2048)})},
               {"filter_width", PyValue::List({PyValue::Int(3), PyValue::Int(15)})}};
  EXPECT_EQ(Repr("(ProblemSize[0] + max(filter_width) - 1) * ProblemSize[1]", env),
            std::to_string((4096 + 15 - 1) * 2048));
  EXPECT_EQ(Repr("ProblemSize[-1]", env), "2048");
  // A comprehension variable shadows, and ends with its comprehension.
  EXPECT_EQ(Repr("[filter_width for filter_width in [1]] + filter_width", env), "[1, 3, 15]");
}

TEST(PythonEvalTest, ErrorsSayWhat) {
  EXPECT_THAT(Repr("range(n)"), HasSubstr("unknown name 'n' at column 7"));
  EXPECT_THAT(Repr("numpy.arange(4)"), HasSubstr("unexpected '.'"));
  EXPECT_THAT(Repr("foo(4)"), HasSubstr("unknown function 'foo'"));
  EXPECT_THAT(Repr("[1, 2"), HasSubstr("expected ',' or ']'"));
  EXPECT_THAT(Repr("1 // 0"), HasSubstr("division by zero"));
  EXPECT_THAT(Repr("2 ** 64"), HasSubstr("integer overflow"));
  EXPECT_THAT(Repr("range(0, 5, 0)"), HasSubstr("step must not be zero"));
  EXPECT_THAT(Repr("range(1 << 30)"), HasSubstr("expected a value at column 10"));
  EXPECT_THAT(Repr("range(100000000)"), HasSubstr("range too long"));
  EXPECT_THAT(Repr("range(-9223372036854775807, 9223372036854775807)"),
              HasSubstr("range too long"));
  EXPECT_THAT(Repr("[1][3]"), HasSubstr("index 3 out of range"));
  EXPECT_THAT(Repr("[1 for a in range(1000) for b in range(1000) for c in range(1000) if 0]"),
              HasSubstr("too much to evaluate"));
  EXPECT_THAT(Repr("'a' - 1"), HasSubstr("'-' needs numbers"));
  EXPECT_THAT(EvaluatePythonList("4").status().message(), HasSubstr("expected a list, got 4"));
  EXPECT_THAT(EvaluatePythonList("[[1]]").status().message(),
              HasSubstr("expected a list of numbers or strings"));
}

}  // namespace
}  // namespace tf::spec
