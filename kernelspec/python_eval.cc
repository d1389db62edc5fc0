#include "kernelspec/python_eval.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <memory>

#include "kernelspec/scanner.h"

namespace tf::kernelspec {

PyValue PyValue::Int(int64_t v) {
  PyValue value;
  value.i = v;
  return value;
}
PyValue PyValue::Float(double v) {
  PyValue value;
  value.kind = Kind::kFloat;
  value.f = v;
  return value;
}
PyValue PyValue::String(std::string v) {
  PyValue value;
  value.kind = Kind::kString;
  value.s = std::move(v);
  return value;
}
PyValue PyValue::List(std::vector<PyValue> v) {
  PyValue value;
  value.kind = Kind::kList;
  value.list = std::move(v);
  return value;
}

std::string PyValue::Repr() const {
  switch (kind) {
    case Kind::kInt:
      return std::to_string(i);
    case Kind::kFloat: {
      char buffer[32];
      auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, f);
      std::string text(buffer, end);
      if (text.find_first_of(".einf") == std::string::npos) text += ".0";
      return text;
    }
    case Kind::kString:
      return "'" + s + "'";
    case Kind::kList: {
      std::string text = "[";
      for (size_t k = 0; k < list.size(); ++k) text += (k ? ", " : "") + list[k].Repr();
      return text + "]";
    }
  }
  return "?";
}

namespace {

// Bounds what a hostile file can make us allocate or recurse into.
constexpr size_t kMaxListSize = 1 << 20;
constexpr int kMaxDepth = 100;
// Nodes evaluated: nested comprehensions that keep nothing still end.
constexpr int64_t kMaxSteps = 4'000'000;

struct Node;
using NodePtr = std::unique_ptr<Node>;

struct Node {
  enum class Type {
    kConstant,
    kName,
    kList,           // children: items
    kComprehension,  // children[0]: element; loops
    kUnary,          // op "-" "+" "not"; children[0]
    kBinary,         // op; children[0], children[1]
    kCompare,        // ops[k] between children[k] and children[k + 1]
    kAnd,
    kOr,
    kIfElse,  // children: value, condition, otherwise
    kCall,    // name; children: arguments
    kSubscript,
  };
  struct Loop {
    std::string variable;
    NodePtr iterable;
    std::vector<NodePtr> conditions;
  };
  Type type;
  size_t column = 0;
  PyValue constant;
  std::string name;  // kName, kCall; the operator of kUnary and kBinary
  std::vector<std::string> ops;
  std::vector<NodePtr> children;
  std::vector<Loop> loops;
};

class Parser : Scanner {
 public:
  explicit Parser(std::string_view text) : Scanner(text) {}
  // The evaluator reports its errors at a node's column of this text.
  using Scanner::Error;

  Result<NodePtr> Parse() {
    TF_ASSIGN_OR_RETURN(NodePtr root, ParseExpression(0));
    SkipSpace();
    if (pos_ < text_.size()) return Error("unexpected '" + std::string(1, text_[pos_]) + "'");
    return root;
  }

 private:
  using Parsed = Result<NodePtr>;

  Status Expect(std::string_view token, const std::string& what) {
    return Accept(token) ? Status::Ok() : Error("expected " + what);
  }

  static NodePtr Make(Node::Type type, size_t column) {
    auto node = std::make_unique<Node>();
    node->type = type;
    node->column = column;
    return node;
  }

  Parsed ParseExpression(int depth) {
    if (depth > kMaxDepth) return Error("expression nested too deeply");
    size_t at = (SkipSpace(), pos_);
    TF_ASSIGN_OR_RETURN(NodePtr value, ParseOr(depth + 1));
    if (!AcceptWord("if")) return value;
    TF_ASSIGN_OR_RETURN(NodePtr condition, ParseOr(depth + 1));
    if (!AcceptWord("else")) return Error("expected 'else'");
    TF_ASSIGN_OR_RETURN(NodePtr otherwise, ParseExpression(depth + 1));
    NodePtr node = Make(Node::Type::kIfElse, at);
    node->children.push_back(std::move(value));
    node->children.push_back(std::move(condition));
    node->children.push_back(std::move(otherwise));
    return node;
  }

  Parsed ParseBoolean(int depth, std::string_view word, Node::Type type,
                      Parsed (Parser::*operand)(int)) {
    size_t at = (SkipSpace(), pos_);
    TF_ASSIGN_OR_RETURN(NodePtr first, (this->*operand)(depth));
    if (!AcceptWord(word)) return first;
    NodePtr node = Make(type, at);
    node->children.push_back(std::move(first));
    do {
      TF_ASSIGN_OR_RETURN(NodePtr next, (this->*operand)(depth));
      node->children.push_back(std::move(next));
    } while (AcceptWord(word));
    return node;
  }
  Parsed ParseOr(int depth) {
    return ParseBoolean(depth, "or", Node::Type::kOr, &Parser::ParseAnd);
  }
  Parsed ParseAnd(int depth) {
    return ParseBoolean(depth, "and", Node::Type::kAnd, &Parser::ParseNot);
  }
  Parsed ParseNot(int depth) {
    if (depth > kMaxDepth) return Error("expression nested too deeply");
    size_t at = (SkipSpace(), pos_);
    if (!AcceptWord("not")) return ParseComparison(depth);
    TF_ASSIGN_OR_RETURN(NodePtr operand, ParseNot(depth + 1));
    NodePtr node = Make(Node::Type::kUnary, at);
    node->name = "not";
    node->children.push_back(std::move(operand));
    return node;
  }

  // The comparison operator that comes next, consumed; empty when none.
  std::string AcceptComparison() {
    for (std::string_view op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (Accept(op)) return std::string(op);
    }
    if (AcceptWord("in")) return "in";
    size_t start = pos_;
    if (AcceptWord("not") && AcceptWord("in")) return "not in";
    pos_ = start;
    return "";
  }
  Parsed ParseComparison(int depth) {
    size_t at = (SkipSpace(), pos_);
    TF_ASSIGN_OR_RETURN(NodePtr first, ParseArithmetic(depth));
    std::string op = AcceptComparison();
    if (op.empty()) return first;
    NodePtr node = Make(Node::Type::kCompare, at);
    node->children.push_back(std::move(first));
    for (; !op.empty(); op = AcceptComparison()) {
      TF_ASSIGN_OR_RETURN(NodePtr next, ParseArithmetic(depth));
      node->ops.push_back(op);
      node->children.push_back(std::move(next));
    }
    return node;
  }

  Parsed ParseBinaryLevel(int depth,
                          std::initializer_list<std::pair<std::string_view, std::string_view>> ops,
                          Parsed (Parser::*operand)(int)) {
    TF_ASSIGN_OR_RETURN(NodePtr lhs, (this->*operand)(depth));
    while (true) {
      SkipSpace();
      size_t at = pos_;
      std::string_view matched;
      for (const auto& [token, longer_one] : ops) {
        if (Accept(token, longer_one)) {
          matched = token;
          break;
        }
      }
      if (matched.empty()) return lhs;
      TF_ASSIGN_OR_RETURN(NodePtr rhs, (this->*operand)(depth));
      NodePtr node = Make(Node::Type::kBinary, at);
      node->name = std::string(matched);
      node->children.push_back(std::move(lhs));
      node->children.push_back(std::move(rhs));
      lhs = std::move(node);
    }
  }
  Parsed ParseArithmetic(int depth) {
    return ParseBinaryLevel(depth, {{"+", ""}, {"-", ""}}, &Parser::ParseTerm);
  }
  Parsed ParseTerm(int depth) {
    return ParseBinaryLevel(depth, {{"*", "**"}, {"//", ""}, {"/", ""}, {"%", ""}},
                            &Parser::ParseFactor);
  }
  Parsed ParseFactor(int depth) {
    if (depth > kMaxDepth) return Error("expression nested too deeply");
    size_t at = (SkipSpace(), pos_);
    std::string op = Accept("-") ? "-" : Accept("+") ? "+" : "";
    if (op.empty()) return ParsePower(depth);
    TF_ASSIGN_OR_RETURN(NodePtr operand, ParseFactor(depth + 1));
    NodePtr node = Make(Node::Type::kUnary, at);
    node->name = op;
    node->children.push_back(std::move(operand));
    return node;
  }
  Parsed ParsePower(int depth) {
    TF_ASSIGN_OR_RETURN(NodePtr base, ParsePostfix(depth));
    size_t at = (SkipSpace(), pos_);
    if (!Accept("**")) return base;
    TF_ASSIGN_OR_RETURN(NodePtr exponent, ParseFactor(depth + 1));
    NodePtr node = Make(Node::Type::kBinary, at);
    node->name = "**";
    node->children.push_back(std::move(base));
    node->children.push_back(std::move(exponent));
    return node;
  }
  // An atom followed by subscripts.
  Parsed ParsePostfix(int depth) {
    TF_ASSIGN_OR_RETURN(NodePtr node, ParseAtom(depth));
    while (true) {
      size_t at = (SkipSpace(), pos_);
      if (!Accept("[")) return node;
      TF_ASSIGN_OR_RETURN(NodePtr index, ParseExpression(depth + 1));
      TF_RETURN_IF_ERROR(Expect("]", "']' to close the subscript"));
      NodePtr subscript = Make(Node::Type::kSubscript, at);
      subscript->children.push_back(std::move(node));
      subscript->children.push_back(std::move(index));
      node = std::move(subscript);
    }
  }

  Parsed ParseAtom(int depth) {
    SkipSpace();
    size_t at = pos_;
    if (pos_ == text_.size()) return Error("expected a value");
    char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return ParseNumber();
    if (c == '"' || c == '\'') {
      size_t end = text_.find(c, pos_ + 1);
      if (end == std::string_view::npos) return Error("unterminated string");
      NodePtr node = Make(Node::Type::kConstant, at);
      node->constant = PyValue::String(std::string(text_.substr(pos_ + 1, end - pos_ - 1)));
      pos_ = end + 1;
      return node;
    }
    if (Accept("[")) return ParseListDisplay(at, "]", depth);
    if (Accept("(")) return ParseListDisplay(at, ")", depth);
    if (!IsIdentStart(c)) return Error("expected a value");
    while (pos_ < text_.size() && IsIdentChar(text_[pos_])) ++pos_;
    std::string name(text_.substr(at, pos_ - at));
    if (name == "True" || name == "False") {
      NodePtr node = Make(Node::Type::kConstant, at);
      node->constant = PyValue::Int(name == "True");
      return node;
    }
    if (!Accept("(")) {
      NodePtr node = Make(Node::Type::kName, at);
      node->name = std::move(name);
      return node;
    }
    NodePtr call = Make(Node::Type::kCall, at);
    call->name = std::move(name);
    if (Accept(")")) return call;
    TF_ASSIGN_OR_RETURN(NodePtr first, ParseExpression(depth + 1));
    if (PeekWord("for")) {  // sum(x for x in ...)
      NodePtr generator = Make(Node::Type::kComprehension, first->column);
      generator->children.push_back(std::move(first));
      TF_RETURN_IF_ERROR(ParseLoops(generator.get(), depth));
      call->children.push_back(std::move(generator));
    } else {
      call->children.push_back(std::move(first));
      while (Accept(",")) {
        if (SkipSpace(), text_.substr(pos_).starts_with(")")) break;
        TF_ASSIGN_OR_RETURN(NodePtr arg, ParseExpression(depth + 1));
        call->children.push_back(std::move(arg));
      }
    }
    TF_RETURN_IF_ERROR(Expect(")", "',' or ')' in the arguments of " + call->name));
    return call;
  }

  Result<NodePtr> ParseNumber() {
    size_t start = pos_;
    bool is_float = false;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.' ||
            ((text_[pos_] == '-' || text_[pos_] == '+') &&
             (text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'E')))) {
      if (text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E') is_float = true;
      ++pos_;
    }
    std::string_view token = text_.substr(start, pos_ - start);
    NodePtr node = Make(Node::Type::kConstant, start);
    const char* end = token.data() + token.size();
    if (is_float) {
      double d = 0;
      if (std::from_chars(token.data(), end, d).ptr != end) {
        return Error("bad number '" + std::string(token) + "'", start);
      }
      node->constant = PyValue::Float(d);
    } else {
      int64_t i = 0;
      if (std::from_chars(token.data(), end, i).ptr != end) {
        return Error("bad integer '" + std::string(token) + "'", start);
      }
      node->constant = PyValue::Int(i);
    }
    return node;
  }

  // After '[' or '(': a list, a tuple (also a parenthesized expression) or a
  // comprehension.
  Parsed ParseListDisplay(size_t at, std::string_view close, int depth) {
    NodePtr list = Make(Node::Type::kList, at);
    if (Accept(close)) return list;
    TF_ASSIGN_OR_RETURN(NodePtr first, ParseExpression(depth + 1));
    if (PeekWord("for")) {
      NodePtr comprehension = Make(Node::Type::kComprehension, at);
      comprehension->children.push_back(std::move(first));
      TF_RETURN_IF_ERROR(ParseLoops(comprehension.get(), depth));
      TF_RETURN_IF_ERROR(Expect(close, "'" + std::string(close) + "' to close the comprehension"));
      return comprehension;
    }
    bool tuple = false;
    list->children.push_back(std::move(first));
    while (Accept(",")) {
      tuple = true;
      if (Accept(close)) return list;
      TF_ASSIGN_OR_RETURN(NodePtr item, ParseExpression(depth + 1));
      list->children.push_back(std::move(item));
    }
    TF_RETURN_IF_ERROR(Expect(close, "',' or '" + std::string(close) + "'"));
    if (close == ")" && !tuple) return std::move(list->children[0]);  // (x) is x
    return list;
  }

  Status ParseLoops(Node* comprehension, int depth) {
    while (AcceptWord("for")) {
      if (comprehension->loops.size() == kMaxDepth) return Error("too many nested loops");
      Node::Loop& loop = comprehension->loops.emplace_back();
      SkipSpace();
      size_t start = pos_;
      while (pos_ < text_.size() && IsIdentChar(text_[pos_])) ++pos_;
      loop.variable = std::string(text_.substr(start, pos_ - start));
      if (loop.variable.empty() || !IsIdentStart(loop.variable[0])) {
        return Error("expected a loop variable after 'for'");
      }
      if (!AcceptWord("in")) return Error("expected 'in'");
      TF_ASSIGN_OR_RETURN(loop.iterable, ParseOr(depth + 1));
      while (AcceptWord("if")) {
        TF_ASSIGN_OR_RETURN(NodePtr condition, ParseOr(depth + 1));
        loop.conditions.push_back(std::move(condition));
      }
    }
    return Status::Ok();
  }
};

using Kind = PyValue::Kind;

bool IsNumber(const PyValue& v) { return v.kind == Kind::kInt || v.kind == Kind::kFloat; }
double AsDouble(const PyValue& v) { return v.kind == Kind::kInt ? static_cast<double>(v.i) : v.f; }

bool Truthy(const PyValue& v) {
  switch (v.kind) {
    case Kind::kInt:
      return v.i != 0;
    case Kind::kFloat:
      return v.f != 0;
    case Kind::kString:
      return !v.s.empty();
    case Kind::kList:
      return !v.list.empty();
  }
  return false;
}

bool Equal(const PyValue& a, const PyValue& b) {
  if (IsNumber(a) && IsNumber(b)) {
    return a.kind == Kind::kInt && b.kind == Kind::kInt ? a.i == b.i : AsDouble(a) == AsDouble(b);
  }
  if (a.kind != b.kind) return false;
  if (a.kind == Kind::kString) return a.s == b.s;
  return a.list.size() == b.list.size() &&
         std::equal(a.list.begin(), a.list.end(), b.list.begin(), Equal);
}

class Evaluator {
 public:
  Evaluator(const Parser& parser, const PyEnv& env) : parser_(parser), env_(env) {}

  Result<PyValue> Eval(const Node& node) {
    if (++steps_ > kMaxSteps) return Fail(node, "too much to evaluate");
    switch (node.type) {
      case Node::Type::kConstant:
        return node.constant;
      case Node::Type::kName:
        return Lookup(node);
      case Node::Type::kList: {
        std::vector<PyValue> items;
        for (const NodePtr& child : node.children) {
          TF_ASSIGN_OR_RETURN(PyValue item, Eval(*child));
          items.push_back(std::move(item));
        }
        return PyValue::List(std::move(items));
      }
      case Node::Type::kComprehension: {
        std::vector<PyValue> items;
        TF_RETURN_IF_ERROR(Comprehend(node, 0, &items));
        return PyValue::List(std::move(items));
      }
      case Node::Type::kUnary:
        return Unary(node);
      case Node::Type::kBinary: {
        TF_ASSIGN_OR_RETURN(PyValue a, Eval(*node.children[0]));
        TF_ASSIGN_OR_RETURN(PyValue b, Eval(*node.children[1]));
        return Binary(node, a, b);
      }
      case Node::Type::kCompare:
        return Compare(node);
      case Node::Type::kAnd:
      case Node::Type::kOr: {
        PyValue value;
        for (const NodePtr& child : node.children) {
          TF_ASSIGN_OR_RETURN(value, Eval(*child));
          if (Truthy(value) == (node.type == Node::Type::kOr)) break;
        }
        return value;
      }
      case Node::Type::kIfElse: {
        TF_ASSIGN_OR_RETURN(PyValue condition, Eval(*node.children[1]));
        return Eval(*node.children[Truthy(condition) ? 0 : 2]);
      }
      case Node::Type::kCall:
        return Call(node);
      case Node::Type::kSubscript:
        return Subscript(node);
    }
    return Fail(node, "unsupported expression");
  }

 private:
  Status Fail(const Node& node, const std::string& message) const {
    return parser_.Error(message, node.column);
  }

  Result<PyValue> Lookup(const Node& node) {
    for (auto it = locals_.rbegin(); it != locals_.rend(); ++it) {
      if (it->first == node.name) return it->second;
    }
    auto it = env_.find(node.name);
    if (it == env_.end()) return Fail(node, "unknown name '" + node.name + "'");
    return it->second;
  }

  // The values a for loop walks: a list, or a string's characters.
  Result<std::vector<PyValue>> Iterate(const Node& node) {
    TF_ASSIGN_OR_RETURN(PyValue value, Eval(node));
    if (value.kind == Kind::kList) return std::move(value.list);
    if (value.kind == Kind::kString) {
      std::vector<PyValue> chars;
      for (char c : value.s) chars.push_back(PyValue::String(std::string(1, c)));
      return chars;
    }
    return Fail(node, "cannot iterate over " + value.Repr());
  }

  Status Comprehend(const Node& node, size_t loop_index, std::vector<PyValue>* out) {
    if (loop_index == node.loops.size()) {
      TF_ASSIGN_OR_RETURN(PyValue item, Eval(*node.children[0]));
      if (out->size() >= kMaxListSize) return Fail(node, "list too long");
      out->push_back(std::move(item));
      return Status::Ok();
    }
    const Node::Loop& loop = node.loops[loop_index];
    TF_ASSIGN_OR_RETURN(std::vector<PyValue> values, Iterate(*loop.iterable));
    for (PyValue& value : values) {
      locals_.emplace_back(loop.variable, std::move(value));
      bool keep = true;
      for (const NodePtr& condition : loop.conditions) {
        auto holds = Eval(*condition);
        if (!holds.ok()) {
          locals_.pop_back();
          return holds.status();
        }
        keep = keep && Truthy(*holds);
        if (!keep) break;
      }
      Status status = keep ? Comprehend(node, loop_index + 1, out) : Status::Ok();
      locals_.pop_back();
      TF_RETURN_IF_ERROR(status);
    }
    return Status::Ok();
  }

  Result<PyValue> Unary(const Node& node) {
    TF_ASSIGN_OR_RETURN(PyValue a, Eval(*node.children[0]));
    if (node.name == "not") return PyValue::Int(!Truthy(a));
    if (!IsNumber(a)) return Fail(node, "'" + node.name + "' needs a number, got " + a.Repr());
    if (node.name == "+") return a;
    if (a.kind == Kind::kFloat) return PyValue::Float(-a.f);
    if (a.i == INT64_MIN) return Fail(node, "integer overflow");
    return PyValue::Int(-a.i);
  }

  Result<PyValue> Binary(const Node& node, const PyValue& a, const PyValue& b) {
    const std::string& op = node.name;
    if (op == "+" && a.kind == Kind::kList && b.kind == Kind::kList) {
      std::vector<PyValue> joined = a.list;
      joined.insert(joined.end(), b.list.begin(), b.list.end());
      return PyValue::List(std::move(joined));
    }
    if (op == "+" && a.kind == Kind::kString && b.kind == Kind::kString) {
      return PyValue::String(a.s + b.s);
    }
    if (op == "*" && (a.kind == Kind::kList) != (b.kind == Kind::kList)) {
      const PyValue& list = a.kind == Kind::kList ? a : b;
      const PyValue& times = a.kind == Kind::kList ? b : a;
      if (times.kind != Kind::kInt) return Fail(node, "a list repeats an integer number of times");
      if (times.i > 0 && list.list.size() * static_cast<uint64_t>(times.i) > kMaxListSize) {
        return Fail(node, "list too long");
      }
      std::vector<PyValue> repeated;
      for (int64_t k = 0; k < times.i; ++k) {
        repeated.insert(repeated.end(), list.list.begin(), list.list.end());
      }
      return PyValue::List(std::move(repeated));
    }
    if (!IsNumber(a) || !IsNumber(b)) {
      return Fail(node, "'" + op + "' needs numbers, got " + a.Repr() + " and " + b.Repr());
    }
    if (a.kind == Kind::kInt && b.kind == Kind::kInt && op != "/") return IntBinary(node, a.i, b.i);
    double x = AsDouble(a), y = AsDouble(b);
    if ((op == "/" || op == "//" || op == "%") && y == 0) return Fail(node, "division by zero");
    if (op == "+") return PyValue::Float(x + y);
    if (op == "-") return PyValue::Float(x - y);
    if (op == "*") return PyValue::Float(x * y);
    if (op == "/") return PyValue::Float(x / y);
    if (op == "//") return PyValue::Float(std::floor(x / y));
    if (op == "%") return PyValue::Float(x - y * std::floor(x / y));
    return PyValue::Float(std::pow(x, y));  // "**"
  }

  Result<PyValue> IntBinary(const Node& node, int64_t x, int64_t y) {
    const std::string& op = node.name;
    int64_t r = 0;
    bool overflow = false;
    if (op == "+") {
      overflow = __builtin_add_overflow(x, y, &r);
    } else if (op == "-") {
      overflow = __builtin_sub_overflow(x, y, &r);
    } else if (op == "*") {
      overflow = __builtin_mul_overflow(x, y, &r);
    } else if (op == "//" || op == "%") {
      if (y == 0) return Fail(node, "division by zero");
      if (x == INT64_MIN && y == -1) return Fail(node, "integer overflow");
      int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {  // Python floors
        --q;
        m += y;
      }
      r = op == "//" ? q : m;
    } else {  // "**"
      if (y < 0) return PyValue::Float(std::pow(static_cast<double>(x), static_cast<double>(y)));
      r = 1;  // by squaring
      for (int64_t base = x; y > 0 && !overflow; y >>= 1) {
        if (y & 1) overflow = __builtin_mul_overflow(r, base, &r);
        if (y > 1 && !overflow) overflow = __builtin_mul_overflow(base, base, &base);
      }
    }
    if (overflow) return Fail(node, "integer overflow");
    return PyValue::Int(r);
  }

  Result<PyValue> Compare(const Node& node) {
    TF_ASSIGN_OR_RETURN(PyValue lhs, Eval(*node.children[0]));
    for (size_t k = 0; k < node.ops.size(); ++k) {
      TF_ASSIGN_OR_RETURN(PyValue rhs, Eval(*node.children[k + 1]));
      const std::string& op = node.ops[k];
      bool holds;
      if (op == "in" || op == "not in") {
        if (rhs.kind != Kind::kList) return Fail(node, "'in' needs a list, got " + rhs.Repr());
        holds = std::any_of(rhs.list.begin(), rhs.list.end(),
                            [&](const PyValue& item) { return Equal(lhs, item); });
        if (op == "not in") holds = !holds;
      } else if (op == "==" || op == "!=") {
        holds = Equal(lhs, rhs) == (op == "==");
      } else {
        int order;
        if (IsNumber(lhs) && IsNumber(rhs)) {
          order = lhs.kind == Kind::kInt && rhs.kind == Kind::kInt
                      ? (lhs.i > rhs.i) - (lhs.i < rhs.i)
                      : (AsDouble(lhs) > AsDouble(rhs)) - (AsDouble(lhs) < AsDouble(rhs));
        } else if (lhs.kind == Kind::kString && rhs.kind == Kind::kString) {
          order = lhs.s.compare(rhs.s);
        } else {
          return Fail(node, "cannot compare " + lhs.Repr() + " and " + rhs.Repr());
        }
        holds = op == "<"    ? order < 0
                : op == "<=" ? order <= 0
                : op == ">"  ? order > 0
                             : order >= 0;
      }
      if (!holds) return PyValue::Int(0);
      lhs = std::move(rhs);
    }
    return PyValue::Int(1);
  }

  Result<PyValue> Subscript(const Node& node) {
    TF_ASSIGN_OR_RETURN(PyValue container, Eval(*node.children[0]));
    TF_ASSIGN_OR_RETURN(PyValue index, Eval(*node.children[1]));
    if (container.kind != Kind::kList || index.kind != Kind::kInt) {
      return Fail(node, "cannot index " + container.Repr() + " by " + index.Repr());
    }
    int64_t size = static_cast<int64_t>(container.list.size());
    int64_t k = index.i < 0 ? index.i + size : index.i;
    if (k < 0 || k >= size) {
      return Fail(node,
                  "index " + std::to_string(index.i) + " out of range for " + container.Repr());
    }
    return container.list[k];
  }

  Result<PyValue> Call(const Node& node) {
    std::vector<PyValue> args;
    for (const NodePtr& child : node.children) {
      TF_ASSIGN_OR_RETURN(PyValue arg, Eval(*child));
      args.push_back(std::move(arg));
    }
    const std::string& f = node.name;
    auto wants = [&](size_t min, size_t max) {
      return args.size() < min || args.size() > max
                 ? Fail(node, f + "() takes " + std::to_string(min) +
                                  (max > min ? " to " + std::to_string(max) : "") +
                                  " arguments, got " + std::to_string(args.size()))
                 : Status::Ok();
    };
    if (f == "range") {
      TF_RETURN_IF_ERROR(wants(1, 3));
      for (const PyValue& arg : args) {
        if (arg.kind != Kind::kInt) return Fail(node, "range() needs integers, got " + arg.Repr());
      }
      int64_t start = args.size() == 1 ? 0 : args[0].i;
      int64_t stop = args.size() == 1 ? args[0].i : args[1].i;
      int64_t step = args.size() == 3 ? args[2].i : 1;
      if (step == 0) return Fail(node, "range() step must not be zero");
      // The length first, so that a huge range costs nothing.
      __int128 span = step > 0 ? __int128{stop} - start : __int128{start} - stop;
      __int128 length =
          span <= 0 ? 0 : (span + (step > 0 ? step : -step) - 1) / (step > 0 ? step : -step);
      if (length > static_cast<__int128>(kMaxListSize)) return Fail(node, "range too long");
      std::vector<PyValue> values;
      values.reserve(static_cast<size_t>(length));
      for (int64_t k = 0; k < static_cast<int64_t>(length); ++k) {
        values.push_back(PyValue::Int(start + k * step));
      }
      return PyValue::List(std::move(values));
    }
    if (f == "list" || f == "tuple") {
      TF_RETURN_IF_ERROR(wants(0, 1));
      if (args.empty()) return PyValue::List({});
      if (args[0].kind != Kind::kList)
        return Fail(node, f + "() needs a list, got " + args[0].Repr());
      return args[0];
    }
    if (f == "len") {
      TF_RETURN_IF_ERROR(wants(1, 1));
      if (args[0].kind == Kind::kString)
        return PyValue::Int(static_cast<int64_t>(args[0].s.size()));
      if (args[0].kind != Kind::kList)
        return Fail(node, "len() needs a list, got " + args[0].Repr());
      return PyValue::Int(static_cast<int64_t>(args[0].list.size()));
    }
    if (f == "sum" || f == "min" || f == "max") {
      TF_RETURN_IF_ERROR(wants(1, f == "sum" ? 2 : kMaxListSize));
      std::vector<PyValue> items = args.size() == 1 || f == "sum" ? std::vector<PyValue>() : args;
      if (items.empty()) {
        if (args[0].kind != Kind::kList)
          return Fail(node, f + "() needs a list, got " + args[0].Repr());
        items = args[0].list;
      }
      if (f == "sum") {
        PyValue total = args.size() == 2 ? args[1] : PyValue::Int(0);
        Node add = {};
        add.column = node.column;
        add.name = "+";
        for (const PyValue& item : items) {
          TF_ASSIGN_OR_RETURN(total, Binary(add, total, item));
        }
        return total;
      }
      if (items.empty()) return Fail(node, f + "() of an empty list");
      PyValue best = items[0];
      for (const PyValue& item : items) {
        if (!IsNumber(item) || !IsNumber(best)) {
          return Fail(node, f + "() needs numbers, got " + item.Repr());
        }
        if (f == "min" ? AsDouble(item) < AsDouble(best) : AsDouble(item) > AsDouble(best)) {
          best = item;
        }
      }
      return best;
    }
    if (f == "abs" || f == "int" || f == "float") {
      TF_RETURN_IF_ERROR(wants(1, 1));
      const PyValue& a = args[0];
      if (!IsNumber(a)) return Fail(node, f + "() needs a number, got " + a.Repr());
      if (f == "float") return PyValue::Float(AsDouble(a));
      if (f == "int") {
        if (a.kind == Kind::kInt) return a;
        if (!(std::fabs(a.f) < 9.2e18)) return Fail(node, "int() of " + a.Repr() + " overflows");
        return PyValue::Int(static_cast<int64_t>(a.f));  // truncates, as Python's
      }
      if (a.kind == Kind::kFloat) return PyValue::Float(std::fabs(a.f));
      if (a.i == INT64_MIN) return Fail(node, "integer overflow");
      return PyValue::Int(a.i < 0 ? -a.i : a.i);
    }
    if (f == "str") {
      TF_RETURN_IF_ERROR(wants(1, 1));
      return PyValue::String(args[0].kind == Kind::kString ? args[0].s : args[0].Repr());
    }
    return Fail(node,
                "unknown function '" + f +
                    "' (known: range, list, tuple, sum, len, min, max, abs, int, float, str)");
  }

  const Parser& parser_;
  const PyEnv& env_;
  std::vector<std::pair<std::string, PyValue>> locals_;  // comprehension variables
  int64_t steps_ = 0;
};

}  // namespace

Result<PyValue> EvaluatePython(std::string_view text, const PyEnv& env) {
  Parser parser(text);
  TF_ASSIGN_OR_RETURN(NodePtr root, parser.Parse());
  return Evaluator(parser, env).Eval(*root);
}

Result<std::vector<PyValue>> EvaluatePythonList(std::string_view text, const PyEnv& env) {
  TF_ASSIGN_OR_RETURN(PyValue value, EvaluatePython(text, env));
  if (value.kind != PyValue::Kind::kList) {
    return Status::InvalidArgument("in '" + std::string(text) + "': expected a list, got " +
                                   value.Repr());
  }
  for (const PyValue& item : value.list) {
    if (item.kind == PyValue::Kind::kList) {
      return Status::InvalidArgument("in '" + std::string(text) +
                                     "': expected a list of numbers or strings, got " +
                                     item.Repr());
    }
  }
  return std::move(value.list);
}

}  // namespace tf::kernelspec
