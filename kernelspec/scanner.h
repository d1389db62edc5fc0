// The lexical layer of the spec's two small languages, the expression
// language (expr.h) and the Python values of imported files (python_eval.h):
// a cursor over one expression's text that skips white space, takes tokens
// and whole words, and words an error with its column. Each parser derives
// from it and adds its grammar.
#pragma once

#include <cstddef>
#include <string_view>

#include "common/status.h"

namespace tf::kernelspec {

class Scanner {
 public:
  static bool IsIdentStart(char c);
  static bool IsIdentChar(char c);

 protected:
  explicit Scanner(std::string_view text) : text_(text) {}

  void SkipSpace();
  // Consumes `token` when it comes next, but not when it is only the start of
  // `longer_one` (so "<" does not take the "<" of "<=").
  bool Accept(std::string_view token, std::string_view longer_one = {});
  // Consumes `word` when it comes next as a whole word, so that "order" is
  // not "or" followed by "der".
  bool AcceptWord(std::string_view word);
  // Whether `word` comes next as a whole word; consumes nothing.
  bool PeekWord(std::string_view word);

  // InvalidArgument "in 'TEXT': MESSAGE at column N" (N from 1), at `at` or
  // at the cursor.
  Status Error(std::string_view message, size_t at) const;
  Status Error(std::string_view message) const { return Error(message, pos_); }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace tf::kernelspec
