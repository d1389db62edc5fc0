// A small evaluator of Python expressions, for the values Kernel Tuner and T1
// files write as Python: "[16, 32, 64]", "range(1, 9)", "[2**i for i in
// range(5)]", "[1, 2] + list(range(4, 17, 4))", and argument sizes such as
// "(ProblemSize[0] + max(filter_width) - 1) * ProblemSize[1]".
//
// It evaluates; it runs nothing. Supported: int, float, string, True/False
// literals; lists and tuples; list comprehensions (for ... in ... if ...,
// nested); + - * / // % ** with Python's meaning (/ is true division, // and %
// floor); comparisons (chained), in, not in, and, or, not, x if c else y;
// subscripts; and the functions range, list, tuple, sum, len, min, max, abs,
// int, float, str. Anything else is an error naming it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tf::spec {

struct PyValue {
  enum class Kind : uint8_t { kInt, kFloat, kString, kList };
  Kind kind = Kind::kInt;
  int64_t i = 0;  // kInt (True and False are 1 and 0)
  double f = 0;   // kFloat
  std::string s;  // kString
  std::vector<PyValue> list;

  static PyValue Int(int64_t v);
  static PyValue Float(double v);
  static PyValue String(std::string v);
  static PyValue List(std::vector<PyValue> v);

  // Python's repr: 3, 2.5, 'x', [1, 2].
  std::string Repr() const;
};

using PyEnv = std::map<std::string, PyValue, std::less<>>;

// Errors quote the text: "in 'range(a)': unknown name 'a'".
Result<PyValue> EvaluatePython(std::string_view text, const PyEnv& env = {});

// The value must be a list (or a range) of numbers or strings.
Result<std::vector<PyValue>> EvaluatePythonList(std::string_view text, const PyEnv& env = {});

}  // namespace tf::spec
