// The expression language of kernel specs: constraints, buffer counts, launch
// geometry and flops.
//
// C-like syntax: integer and decimal literals (42, 1.5), string literals
// ("f16" or 'f16'), variables (BM, device.max_shared_mem), parentheses,
// unary - !, binary * / % + -, < <= > >= == !=, && || (short-circuit),
// c ? a : b, and the functions min(a, ...), max(a, ...), ceil_div(a, b),
// log2(a), is_pow2(a), abs(a).
//
// Python's condition syntax too, as Kernel Tuner and T1 files write it: and,
// or, not (looser than comparisons), // (floor division), ** (power), x in
// [a, b] and x not in (a, b), a if c else b, True and False. Comparisons of
// one level chain as in Python: 32 <= a * b <= 1024 is 32 <= a * b && a * b
// <= 1024. What stays C: / and % on integers truncate (Python's / gives a
// float; the T1 importer translates it).
//
// Integers stay int64: division truncates, and division by zero or overflow is
// an error rather than a wrong configuration. An operation with a double operand
// is done in double. Strings support only ==, != and in (a string never equals
// a number, so a parameter may mix both). Comparisons and logic yield 0 or 1.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "common/status.h"

namespace tf::spec {

using Scalar = std::variant<int64_t, double, std::string>;
using Bindings = std::unordered_map<std::string, Scalar>;

// A Scalar whose string is borrowed, so that evaluating never allocates.
struct ScalarRef {
  enum class Kind : uint8_t { kInt, kDouble, kString };
  Kind kind = Kind::kInt;
  int64_t i = 0;
  double d = 0;
  std::string_view s;

  static ScalarRef Int(int64_t v) { return {Kind::kInt, v, 0, {}}; }
  static ScalarRef Double(double v) { return {Kind::kDouble, 0, v, {}}; }
  static ScalarRef String(std::string_view v) { return {Kind::kString, 0, 0, v}; }
};

// `value` must outlive the returned reference when it is a string.
ScalarRef RefOf(const Scalar& value);
Scalar ToScalar(const ScalarRef& value);

class Expr {
 public:
  // Errors quote the text and give the column: "in 'BM * ': expected an
  // operand at column 6".
  static Result<Expr> Parse(std::string_view text);

  const std::string& text() const { return text_; }
  // Distinct variable names, in order of first use.
  const std::vector<std::string>& variables() const { return variables_; }

  // Errors name an unknown variable or the operation that failed.
  Result<Scalar> Eval(const Bindings& vars) const;

  // The path enumeration uses: variables()[k] has the value
  // slots[slot_of_variable[k]]. Returns false, without saying why, when the
  // expression cannot be evaluated (division by zero, a string in arithmetic);
  // Eval(Bindings) gives the reason.
  bool EvalSlots(const ScalarRef* slots, const int* slot_of_variable, ScalarRef* result) const;

 private:
  friend class ExprParser;
  friend class ExprEvaluator;

  // Parsed form: a flat node array, so that evaluation walks contiguous memory.
  enum class Op : uint8_t {
    kInt,
    kDouble,
    kString,
    kVariable,  // leaves: value, strings_ or variables_ index
    kNeg,
    kNot,
    kMul,
    kDiv,
    kFloorDiv,
    kMod,
    kPow,
    kAdd,
    kSub,
    kLt,
    kLe,
    kGt,
    kGe,
    kEq,
    kNe,
    kAnd,
    kOr,
    kIn,  // children: the needle, then the list
    kCond,
    kMin,
    kMax,
    kCeilDiv,
    kLog2,
    kIsPow2,
    kAbs,
  };
  struct Node {
    Op op;
    int column;       // 1-based, for messages
    int first_child;  // operands are children_[first_child, first_child + num_children)
    int num_children;
    int64_t i;  // kInt value, or the index for kString and kVariable
    double d;   // kDouble value
  };

  std::string text_;
  std::vector<std::string> variables_;
  std::vector<std::string> strings_;
  std::vector<Node> nodes_;  // the root is the last node
  std::vector<int> children_;
};

// Evaluates `text` once; an error if the result is not a whole number.
Result<int64_t> EvaluateInt(std::string_view text, const Bindings& vars);
Result<double> EvaluateNumber(std::string_view text, const Bindings& vars);

// Non-zero numbers and non-empty strings are true.
bool IsTrue(const Scalar& value);
bool IsTrue(const ScalarRef& value);

}  // namespace tf::spec
