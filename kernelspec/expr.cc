#include "kernelspec/expr.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "kernelspec/scanner.h"

namespace tf::kernelspec {

ScalarRef RefOf(const Scalar& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return ScalarRef::Int(*i);
  if (const auto* d = std::get_if<double>(&value)) return ScalarRef::Double(*d);
  return ScalarRef::String(std::get<std::string>(value));
}

Scalar ToScalar(const ScalarRef& value) {
  switch (value.kind) {
    case ScalarRef::Kind::kInt:
      return value.i;
    case ScalarRef::Kind::kDouble:
      return value.d;
    case ScalarRef::Kind::kString:
      return std::string(value.s);
  }
  return int64_t{0};
}

bool IsTrue(const ScalarRef& value) {
  switch (value.kind) {
    case ScalarRef::Kind::kInt:
      return value.i != 0;
    case ScalarRef::Kind::kDouble:
      return value.d != 0;
    case ScalarRef::Kind::kString:
      return !value.s.empty();
  }
  return false;
}

bool IsTrue(const Scalar& value) { return IsTrue(RefOf(value)); }

namespace {

std::string Quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

}  // namespace

// Recursive descent, one function per precedence level, lowest first.
class ExprParser : Scanner {
 public:
  explicit ExprParser(std::string_view text) : Scanner(text) { expr_.text_ = std::string(text); }

  Result<Expr> Parse() {
    TF_ASSIGN_OR_RETURN(int root, ParseConditional(0));
    SkipSpace();
    if (pos_ < text_.size()) return Unexpected();
    // Every rule adds its own node after its operands, so the root is last.
    if (root != static_cast<int>(expr_.nodes_.size()) - 1) return Error("internal parser error");
    return std::move(expr_);
  }

 private:
  using Op = Expr::Op;
  // A rule's result: the index of the node it built.
  using Parsed = Result<int>;

  // Bounds recursion: specs come from remote users.
  static constexpr int kMaxDepth = 100;

  struct Function {
    std::string_view name;
    Op op;
    int min_args;
    int max_args;
  };
  static constexpr Function kFunctions[] = {
      {"min", Op::kMin, 1, 1 << 20},    {"max", Op::kMax, 1, 1 << 20},
      {"ceil_div", Op::kCeilDiv, 2, 2}, {"log2", Op::kLog2, 1, 1},
      {"is_pow2", Op::kIsPow2, 1, 1},   {"abs", Op::kAbs, 1, 1},
  };

  Status Unexpected() const {
    std::string what = "unexpected '" + std::string(1, text_[pos_]) + "'";
    if (text_[pos_] == '=') what += " (did you mean '=='?)";
    return Error(what);
  }

  int AddNode(Op op, size_t at, std::initializer_list<int> children) {
    return AddNode(op, at, std::vector<int>(children));
  }
  int AddNode(Op op, size_t at, const std::vector<int>& children) {
    Expr::Node node{op,
                    static_cast<int>(at) + 1,
                    static_cast<int>(expr_.children_.size()),
                    static_cast<int>(children.size()),
                    0,
                    0};
    expr_.children_.insert(expr_.children_.end(), children.begin(), children.end());
    expr_.nodes_.push_back(node);
    return static_cast<int>(expr_.nodes_.size()) - 1;
  }
  int AddLeaf(Op op, size_t at, int64_t i, double d) {
    expr_.nodes_.push_back(Expr::Node{op, static_cast<int>(at) + 1, 0, 0, i, d});
    return static_cast<int>(expr_.nodes_.size()) - 1;
  }

  struct BinaryOp {
    std::string_view token;
    std::string_view longer_one;
    Op op;
  };

  // lhs (op rhs)*, left-associative, for the binary levels.
  template <typename Operand>
  Parsed ParseLeftAssociative(int depth, std::initializer_list<BinaryOp> ops, Operand operand) {
    TF_ASSIGN_OR_RETURN(int lhs, (this->*operand)(depth));
    while (true) {
      SkipSpace();
      size_t at = pos_;
      const BinaryOp* matched = nullptr;
      for (const BinaryOp& op : ops) {
        if (Accept(op.token, op.longer_one)) {
          matched = &op;
          break;
        }
      }
      if (!matched) return lhs;
      TF_ASSIGN_OR_RETURN(int rhs, (this->*operand)(depth));
      lhs = AddNode(matched->op, at, {lhs, rhs});
    }
  }

  // C's c ? a : b, or Python's a if c else b.
  Parsed ParseConditional(int depth) {
    if (depth > kMaxDepth) return Error("expression nested too deeply");
    TF_ASSIGN_OR_RETURN(int first, ParseOr(depth + 1));
    SkipSpace();
    size_t at = pos_;
    if (AcceptWord("if")) {
      TF_ASSIGN_OR_RETURN(int condition, ParseOr(depth + 1));
      if (!AcceptWord("else")) {
        return Error("expected 'else' of the 'if' at column " + std::to_string(at + 1));
      }
      TF_ASSIGN_OR_RETURN(int if_false, ParseConditional(depth + 1));
      return AddNode(Op::kCond, at, {condition, first, if_false});
    }
    if (!Accept("?")) return first;
    TF_ASSIGN_OR_RETURN(int if_true, ParseConditional(depth + 1));
    if (!Accept(":")) return Error("expected ':' of the '?' at column " + std::to_string(at + 1));
    TF_ASSIGN_OR_RETURN(int if_false, ParseConditional(depth + 1));
    return AddNode(Op::kCond, at, {first, if_true, if_false});
  }
  Parsed ParseOr(int depth) {
    TF_ASSIGN_OR_RETURN(int lhs, ParseAnd(depth));
    while (true) {
      SkipSpace();
      size_t at = pos_;
      if (!Accept("||") && !AcceptWord("or")) return lhs;
      TF_ASSIGN_OR_RETURN(int rhs, ParseAnd(depth));
      lhs = AddNode(Op::kOr, at, {lhs, rhs});
    }
  }
  Parsed ParseAnd(int depth) {
    TF_ASSIGN_OR_RETURN(int lhs, ParseNot(depth));
    while (true) {
      SkipSpace();
      size_t at = pos_;
      if (!Accept("&&") && !AcceptWord("and")) return lhs;
      TF_ASSIGN_OR_RETURN(int rhs, ParseNot(depth));
      lhs = AddNode(Op::kAnd, at, {lhs, rhs});
    }
  }
  // Python's `not` binds looser than comparisons: not a == b is not (a == b).
  Parsed ParseNot(int depth) {
    if (depth > kMaxDepth) return Error("expression nested too deeply");
    SkipSpace();
    size_t at = pos_;
    if (!AcceptWord("not")) return ParseEquality(depth);
    TF_ASSIGN_OR_RETURN(int operand, ParseNot(depth + 1));
    return AddNode(Op::kNot, at, {operand});
  }

  // A chain of comparisons of one level compares neighbours, as in Python:
  // a < b <= c is a < b && b <= c (b evaluated where each needs it). The
  // relational level also takes `in` and `not in`, which end a chain.
  Parsed ParseComparisonChain(int depth, std::initializer_list<BinaryOp> ops,
                              Parsed (ExprParser::*operand)(int), bool membership) {
    TF_ASSIGN_OR_RETURN(int lhs, (this->*operand)(depth));
    int chain = -1;
    while (true) {
      SkipSpace();
      size_t at = pos_;
      const BinaryOp* matched = nullptr;
      for (const BinaryOp& op : ops) {
        if (Accept(op.token, op.longer_one)) {
          matched = &op;
          break;
        }
      }
      int comparison;
      bool ends_chain = false;
      if (matched) {
        TF_ASSIGN_OR_RETURN(int rhs, (this->*operand)(depth));
        comparison = AddNode(matched->op, at, {lhs, rhs});
        lhs = rhs;
      } else if (Membership kind = membership ? AcceptMembership() : Membership::kNone;
                 kind != Membership::kNone) {
        TF_ASSIGN_OR_RETURN(comparison, ParseList(lhs, at, depth));
        if (kind == Membership::kNotIn) comparison = AddNode(Op::kNot, at, {comparison});
        ends_chain = true;
      } else {
        return chain >= 0 ? chain : lhs;
      }
      chain = chain < 0 ? comparison : AddNode(Op::kAnd, at, {chain, comparison});
      if (ends_chain) return chain;
    }
  }
  enum class Membership { kNone, kIn, kNotIn };
  Membership AcceptMembership() {
    size_t start = pos_;
    if (AcceptWord("in")) return Membership::kIn;
    if (AcceptWord("not") && AcceptWord("in")) return Membership::kNotIn;
    pos_ = start;
    return Membership::kNone;
  }
  // The list of `x in [a, b, ...]` (or a tuple): literal expressions.
  Parsed ParseList(int needle, size_t at, int depth) {
    SkipSpace();
    size_t open = pos_;
    std::string_view close = Accept("[") ? "]" : Accept("(") ? ")" : "";
    if (close.empty()) return Error("expected a list [a, b, ...] after 'in'");
    std::vector<int> children = {needle};
    while (!Accept(close)) {
      TF_ASSIGN_OR_RETURN(int item, ParseConditional(depth + 1));
      children.push_back(item);
      if (Accept(close)) break;
      if (!Accept(",")) {
        return Error("expected ',' or '" + std::string(close) + "' in the list opened at column " +
                     std::to_string(open + 1));
      }
    }
    return AddNode(Op::kIn, at, children);
  }
  Parsed ParseEquality(int depth) {
    return ParseComparisonChain(depth, {{"==", {}, Op::kEq}, {"!=", {}, Op::kNe}},
                                &ExprParser::ParseRelational, /*membership=*/false);
  }
  Parsed ParseRelational(int depth) {
    return ParseComparisonChain(
        depth, {{"<=", {}, Op::kLe}, {">=", {}, Op::kGe}, {"<", {}, Op::kLt}, {">", {}, Op::kGt}},
        &ExprParser::ParseAdditive, /*membership=*/true);
  }
  Parsed ParseAdditive(int depth) {
    return ParseLeftAssociative(depth, {{"+", {}, Op::kAdd}, {"-", {}, Op::kSub}},
                                &ExprParser::ParseMultiplicative);
  }
  Parsed ParseMultiplicative(int depth) {
    return ParseLeftAssociative(depth,
                                {{"*", "**", Op::kMul},
                                 {"//", {}, Op::kFloorDiv},
                                 {"/", {}, Op::kDiv},
                                 {"%", {}, Op::kMod}},
                                &ExprParser::ParseUnary);
  }
  Parsed ParseUnary(int depth) {
    if (depth > kMaxDepth) return Error("expression nested too deeply");
    SkipSpace();
    size_t at = pos_;
    Op op;
    if (Accept("-")) {
      op = Op::kNeg;
    } else if (Accept("!", "!=")) {
      op = Op::kNot;
    } else {
      return ParsePower(depth);
    }
    TF_ASSIGN_OR_RETURN(int operand, ParseUnary(depth + 1));
    return AddNode(op, at, {operand});
  }
  // Python's a ** b: right-associative, tighter than a unary minus on its
  // left (-2 ** 2 is -4), looser than one on its right (2 ** -1).
  Parsed ParsePower(int depth) {
    TF_ASSIGN_OR_RETURN(int base, ParsePrimary(depth));
    SkipSpace();
    size_t at = pos_;
    if (!Accept("**")) return base;
    TF_ASSIGN_OR_RETURN(int exponent, ParseUnary(depth + 1));
    return AddNode(Op::kPow, at, {base, exponent});
  }

  Parsed ParsePrimary(int depth) {
    SkipSpace();
    if (pos_ == text_.size()) return Error("expected an operand");
    char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && pos_ + 1 < text_.size() && std::isdigit(text_[pos_ + 1]))) {
      return ParseNumber();
    }
    if (c == '"' || c == '\'') return ParseString();
    if (IsIdentStart(c)) return ParseName(depth);
    if (c == '(') {
      size_t open = pos_++;
      TF_ASSIGN_OR_RETURN(int inner, ParseConditional(depth + 1));
      if (!Accept(")")) {
        return Error("expected ')' to close the '(' at column " + std::to_string(open + 1));
      }
      return inner;
    }
    return Error("expected an operand");
  }

  Parsed ParseNumber() {
    size_t start = pos_;
    bool is_double = false;
    auto digits = [&] {
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    };
    digits();
    if (pos_ < text_.size() && text_[pos_] == '.') {
      is_double = true;
      ++pos_;
      digits();
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      is_double = true;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      size_t exponent = pos_;
      digits();
      if (pos_ == exponent) return Error("expected the digits of an exponent");
    }
    if (pos_ < text_.size() && IsIdentChar(text_[pos_])) return Unexpected();
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    if (is_double) {
      double d = 0;
      std::from_chars(first, last, d);
      return AddLeaf(Op::kDouble, start, 0, d);
    }
    int64_t i = 0;
    if (std::from_chars(first, last, i).ec != std::errc()) {
      return Error(
          "integer " + Quoted(std::string_view(first, last - first)) + " does not fit in 64 bits",
          start);
    }
    return AddLeaf(Op::kInt, start, i, 0);
  }

  Parsed ParseString() {
    size_t start = pos_;
    char quote = text_[pos_++];
    size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) return Error("unterminated string", start);
    expr_.strings_.emplace_back(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return AddLeaf(Op::kString, start, static_cast<int64_t>(expr_.strings_.size()) - 1, 0);
  }

  // A variable (dotted segments allowed: device.max_smem) or a function call.
  Parsed ParseName(int depth) {
    size_t start = pos_;
    while (true) {
      while (pos_ < text_.size() && IsIdentChar(text_[pos_])) ++pos_;
      if (pos_ + 1 < text_.size() && text_[pos_] == '.' && IsIdentStart(text_[pos_ + 1])) {
        ++pos_;
        continue;
      }
      break;
    }
    std::string_view name = text_.substr(start, pos_ - start);
    if (name == "True" || name == "False") return AddLeaf(Op::kInt, start, name == "True", 0);
    if (Accept("(")) return ParseCall(name, start, depth);
    auto& vars = expr_.variables_;
    auto it = std::find(vars.begin(), vars.end(), name);
    if (it == vars.end()) it = vars.insert(vars.end(), std::string(name));
    return AddLeaf(Op::kVariable, start, it - vars.begin(), 0);
  }

  Parsed ParseCall(std::string_view name, size_t start, int depth) {
    const Function* function = nullptr;
    for (const Function& f : kFunctions) {
      if (f.name == name) function = &f;
    }
    if (!function) {
      return Error(
          "unknown function " + Quoted(name) + " (known: min, max, ceil_div, log2, is_pow2, abs)",
          start);
    }
    std::vector<int> args;
    if (!Accept(")")) {
      do {
        TF_ASSIGN_OR_RETURN(int arg, ParseConditional(depth + 1));
        args.push_back(arg);
      } while (Accept(","));
      if (!Accept(")")) return Error("expected ',' or ')' in the arguments of " + Quoted(name));
    }
    int n = static_cast<int>(args.size());
    if (n < function->min_args || n > function->max_args) {
      std::string wanted = function->min_args == function->max_args
                               ? std::to_string(function->min_args)
                               : "at least " + std::to_string(function->min_args);
      return Error(std::string(name) + " takes " + wanted + " argument" +
                       (function->min_args == 1 ? "" : "s") + ", got " + std::to_string(n),
                   start);
    }
    return AddNode(function->op, start, args);
  }

  Expr expr_;
};

Result<Expr> Expr::Parse(std::string_view text) { return ExprParser(text).Parse(); }

namespace {

enum class Failure : uint8_t { kNone, kDivisionByZero, kOverflow, kNeedsNumber, kDomain };

bool IsNumber(const ScalarRef& v) { return v.kind != ScalarRef::Kind::kString; }
double AsDouble(const ScalarRef& v) {
  return v.kind == ScalarRef::Kind::kInt ? static_cast<double>(v.i) : v.d;
}
bool BothInts(const ScalarRef& a, const ScalarRef& b) {
  return a.kind == ScalarRef::Kind::kInt && b.kind == ScalarRef::Kind::kInt;
}

}  // namespace

// Walks the node array recursively; nothing here allocates.
class ExprEvaluator {
 public:
  using Op = Expr::Op;

  ExprEvaluator(const Expr& expr, const ScalarRef* slots, const int* slot_of_variable)
      : expr_(expr), slots_(slots), slot_of_variable_(slot_of_variable) {}

  bool Run(ScalarRef* out) { return Eval(static_cast<int>(expr_.nodes_.size()) - 1, out); }

  // Why Run failed: "division by zero at column 4".
  std::string Describe() const {
    const Expr::Node& node = expr_.nodes_[failed_node_];
    std::string what;
    switch (failure_) {
      case Failure::kNone:
        what = "no error";
        break;
      case Failure::kDivisionByZero:
        what = "division by zero";
        break;
      case Failure::kOverflow:
        what = "integer overflow";
        break;
      case Failure::kNeedsNumber:
        what = OpName(node.op) + " needs numbers, got a string";
        break;
      case Failure::kDomain:
        what = OpName(node.op) + " needs a positive argument";
        break;
    }
    return "in " + Quoted(expr_.text_) + ": " + what + " at column " + std::to_string(node.column);
  }

 private:
  static std::string OpName(Op op) {
    switch (op) {
      case Op::kNeg:
      case Op::kSub:
        return "'-'";
      case Op::kMul:
        return "'*'";
      case Op::kDiv:
        return "'/'";
      case Op::kFloorDiv:
        return "'//'";
      case Op::kPow:
        return "'**'";
      case Op::kMod:
        return "'%'";
      case Op::kAdd:
        return "'+'";
      case Op::kLt:
        return "'<'";
      case Op::kLe:
        return "'<='";
      case Op::kGt:
        return "'>'";
      case Op::kGe:
        return "'>='";
      case Op::kMin:
        return "min";
      case Op::kMax:
        return "max";
      case Op::kCeilDiv:
        return "ceil_div";
      case Op::kLog2:
        return "log2";
      case Op::kIsPow2:
        return "is_pow2";
      case Op::kAbs:
        return "abs";
      default:
        return "this operation";
    }
  }

  bool Fail(Failure failure, int node) {
    failure_ = failure;
    failed_node_ = node;
    return false;
  }

  int Child(const Expr::Node& node, int k) const { return expr_.children_[node.first_child + k]; }

  bool EvalNumber(int n, ScalarRef* out, int parent) {
    if (!Eval(n, out)) return false;
    return IsNumber(*out) || Fail(Failure::kNeedsNumber, parent);
  }

  bool Eval(int n, ScalarRef* out) {
    const Expr::Node& node = expr_.nodes_[n];
    ScalarRef a, b;
    switch (node.op) {
      case Op::kInt:
        *out = ScalarRef::Int(node.i);
        return true;
      case Op::kDouble:
        *out = ScalarRef::Double(node.d);
        return true;
      case Op::kString:
        *out = ScalarRef::String(expr_.strings_[node.i]);
        return true;
      case Op::kVariable:
        *out = slots_[slot_of_variable_[node.i]];
        return true;
      case Op::kNot:
        if (!Eval(Child(node, 0), &a)) return false;
        *out = ScalarRef::Int(!IsTrue(a));
        return true;
      case Op::kAnd:
      case Op::kOr: {
        if (!Eval(Child(node, 0), &a)) return false;
        bool lhs = IsTrue(a);
        if (lhs == (node.op == Op::kOr)) {
          *out = ScalarRef::Int(lhs);
          return true;
        }
        if (!Eval(Child(node, 1), &b)) return false;
        *out = ScalarRef::Int(IsTrue(b));
        return true;
      }
      case Op::kCond:
        if (!Eval(Child(node, 0), &a)) return false;
        return Eval(Child(node, IsTrue(a) ? 1 : 2), out);
      case Op::kEq:
      case Op::kNe: {
        if (!Eval(Child(node, 0), &a) || !Eval(Child(node, 1), &b)) return false;
        *out = ScalarRef::Int(Equal(a, b) == (node.op == Op::kEq));
        return true;
      }
      case Op::kIn: {
        if (!Eval(Child(node, 0), &a)) return false;
        for (int k = 1; k < node.num_children; ++k) {
          if (!Eval(Child(node, k), &b)) return false;
          if (Equal(a, b)) {
            *out = ScalarRef::Int(1);
            return true;
          }
        }
        *out = ScalarRef::Int(0);
        return true;
      }
      case Op::kMin:
      case Op::kMax: {
        if (!EvalNumber(Child(node, 0), out, n)) return false;
        for (int k = 1; k < node.num_children; ++k) {
          if (!EvalNumber(Child(node, k), &b, n)) return false;
          bool b_wins = node.op == Op::kMin ? Less(b, *out) : Less(*out, b);
          bool any_double = !BothInts(*out, b);
          if (b_wins) *out = b;
          if (any_double) *out = ScalarRef::Double(AsDouble(*out));
        }
        return true;
      }
      default:
        break;
    }
    // The rest take numbers only.
    if (!EvalNumber(Child(node, 0), &a, n)) return false;
    if (node.num_children == 1) return Unary(node.op, a, out) || Fail(failure_, n);
    if (!EvalNumber(Child(node, 1), &b, n)) return false;
    return Binary(node.op, a, b, out) || Fail(failure_, n);
  }

  static bool Equal(const ScalarRef& a, const ScalarRef& b) {
    if (IsNumber(a) != IsNumber(b)) return false;
    if (!IsNumber(a)) return a.s == b.s;
    return BothInts(a, b) ? a.i == b.i : AsDouble(a) == AsDouble(b);
  }

  static bool Less(const ScalarRef& a, const ScalarRef& b) {
    return BothInts(a, b) ? a.i < b.i : AsDouble(a) < AsDouble(b);
  }

  // Sets failure_ (not the node) when it fails.
  bool Unary(Op op, const ScalarRef& a, ScalarRef* out) {
    bool is_int = a.kind == ScalarRef::Kind::kInt;
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
    switch (op) {
      case Op::kNeg:
      case Op::kAbs:
        if (!is_int) {
          *out = ScalarRef::Double(op == Op::kNeg ? -a.d : std::fabs(a.d));
          return true;
        }
        if (a.i == kMin) return SetFailure(Failure::kOverflow);
        *out = ScalarRef::Int(op == Op::kNeg || a.i < 0 ? -a.i : a.i);
        return true;
      case Op::kLog2:
        if (AsDouble(a) <= 0) return SetFailure(Failure::kDomain);
        *out = is_int ? ScalarRef::Int(63 - __builtin_clzll(static_cast<uint64_t>(a.i)))
                      : ScalarRef::Double(std::log2(a.d));
        return true;
      case Op::kIsPow2: {
        int exponent;
        *out = ScalarRef::Int(is_int ? a.i > 0 && (a.i & (a.i - 1)) == 0
                                     : a.d > 0 && std::frexp(a.d, &exponent) == 0.5);
        return true;
      }
      default:
        return SetFailure(Failure::kNeedsNumber);
    }
  }

  bool Binary(Op op, const ScalarRef& a, const ScalarRef& b, ScalarRef* out) {
    if (BothInts(a, b)) return IntBinary(op, a.i, b.i, out);
    double x = AsDouble(a), y = AsDouble(b);
    switch (op) {
      case Op::kAdd:
        *out = ScalarRef::Double(x + y);
        return true;
      case Op::kSub:
        *out = ScalarRef::Double(x - y);
        return true;
      case Op::kMul:
        *out = ScalarRef::Double(x * y);
        return true;
      case Op::kDiv:
      case Op::kFloorDiv:
      case Op::kMod:
      case Op::kCeilDiv:
        if (y == 0) return SetFailure(Failure::kDivisionByZero);
        *out = ScalarRef::Double(op == Op::kDiv        ? x / y
                                 : op == Op::kFloorDiv ? std::floor(x / y)
                                 : op == Op::kMod      ? std::fmod(x, y)
                                                       : std::ceil(x / y));
        return true;
      case Op::kPow:
        *out = ScalarRef::Double(std::pow(x, y));
        return true;
      case Op::kLt:
        *out = ScalarRef::Int(x < y);
        return true;
      case Op::kLe:
        *out = ScalarRef::Int(x <= y);
        return true;
      case Op::kGt:
        *out = ScalarRef::Int(x > y);
        return true;
      case Op::kGe:
        *out = ScalarRef::Int(x >= y);
        return true;
      default:
        return SetFailure(Failure::kNeedsNumber);
    }
  }

  bool IntBinary(Op op, int64_t x, int64_t y, ScalarRef* out) {
    int64_t r;
    switch (op) {
      case Op::kAdd:
        if (__builtin_add_overflow(x, y, &r)) return SetFailure(Failure::kOverflow);
        break;
      case Op::kSub:
        if (__builtin_sub_overflow(x, y, &r)) return SetFailure(Failure::kOverflow);
        break;
      case Op::kMul:
        if (__builtin_mul_overflow(x, y, &r)) return SetFailure(Failure::kOverflow);
        break;
      case Op::kPow:
        if (y < 0) {  // as in Python: 2 ** -1 is 0.5
          *out = ScalarRef::Double(std::pow(static_cast<double>(x), static_cast<double>(y)));
          return true;
        }
        return IntPow(x, y, out);
      case Op::kDiv:
      case Op::kFloorDiv:
      case Op::kMod:
      case Op::kCeilDiv:
        if (y == 0) return SetFailure(Failure::kDivisionByZero);
        if (y == -1) {  // x / -1 overflows for the most negative x; x % -1 is 0
          if (op == Op::kMod) {
            r = 0;
            break;
          }
          if (x == std::numeric_limits<int64_t>::min()) return SetFailure(Failure::kOverflow);
          r = -x;
          break;
        }
        r = op == Op::kMod ? x % y : x / y;
        if (op == Op::kCeilDiv && x % y != 0 && (x < 0) == (y < 0)) ++r;
        if (op == Op::kFloorDiv && x % y != 0 && (x < 0) != (y < 0)) --r;
        break;
      case Op::kLt:
        r = x < y;
        break;
      case Op::kLe:
        r = x <= y;
        break;
      case Op::kGt:
        r = x > y;
        break;
      case Op::kGe:
        r = x >= y;
        break;
      default:
        return SetFailure(Failure::kNeedsNumber);
    }
    *out = ScalarRef::Int(r);
    return true;
  }

  // x ** y for y >= 0 by squaring, overflow an error.
  bool IntPow(int64_t x, int64_t y, ScalarRef* out) {
    int64_t result = 1;
    while (y > 0) {
      if ((y & 1) && __builtin_mul_overflow(result, x, &result)) {
        return SetFailure(Failure::kOverflow);
      }
      y >>= 1;
      if (y > 0 && __builtin_mul_overflow(x, x, &x)) return SetFailure(Failure::kOverflow);
    }
    *out = ScalarRef::Int(result);
    return true;
  }

  bool SetFailure(Failure failure) {
    failure_ = failure;
    return false;
  }

  const Expr& expr_;
  const ScalarRef* slots_;
  const int* slot_of_variable_;
  Failure failure_ = Failure::kNone;
  int failed_node_ = 0;
};

bool Expr::EvalSlots(const ScalarRef* slots, const int* slot_of_variable, ScalarRef* result) const {
  return ExprEvaluator(*this, slots, slot_of_variable).Run(result);
}

Result<Scalar> Expr::Eval(const Bindings& vars) const {
  std::vector<ScalarRef> values;
  std::vector<int> identity;
  for (const std::string& name : variables_) {
    auto it = vars.find(name);
    if (it == vars.end()) {
      std::vector<std::string> known;
      for (const auto& [known_name, value] : vars) known.push_back(known_name);
      std::sort(known.begin(), known.end());
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      return Status::InvalidArgument("unknown variable " + Quoted(name) + " in " + Quoted(text_) +
                                     " (known: " + list + ")");
    }
    identity.push_back(static_cast<int>(values.size()));
    values.push_back(RefOf(it->second));
  }
  ExprEvaluator evaluator(*this, values.data(), identity.data());
  ScalarRef result;
  if (!evaluator.Run(&result)) return Status::InvalidArgument(evaluator.Describe());
  return ToScalar(result);
}

namespace {

Result<Scalar> EvaluateText(std::string_view text, const Bindings& vars) {
  TF_ASSIGN_OR_RETURN(Expr expr, Expr::Parse(text));
  return expr.Eval(vars);
}

Status NotANumber(std::string_view text, const std::string& value) {
  return Status::InvalidArgument("in " + Quoted(text) + ": expected a number, got the string " +
                                 Quoted(value));
}

}  // namespace

Result<double> EvaluateNumber(std::string_view text, const Bindings& vars) {
  TF_ASSIGN_OR_RETURN(Scalar value, EvaluateText(text, vars));
  if (const auto* s = std::get_if<std::string>(&value)) return NotANumber(text, *s);
  return AsDouble(RefOf(value));
}

Result<int64_t> EvaluateInt(std::string_view text, const Bindings& vars) {
  TF_ASSIGN_OR_RETURN(Scalar value, EvaluateText(text, vars));
  if (const auto* i = std::get_if<int64_t>(&value)) return *i;
  if (const auto* s = std::get_if<std::string>(&value)) return NotANumber(text, *s);
  double d = std::get<double>(value);
  // 2^63 is the first double past the int64 range.
  if (d != std::floor(d) || std::fabs(d) >= 9.223372036854775808e18) {
    return Status::InvalidArgument("in " + Quoted(text) + ": expected a whole number, got " +
                                   std::to_string(d));
  }
  return static_cast<int64_t>(d);
}

}  // namespace tf::kernelspec
