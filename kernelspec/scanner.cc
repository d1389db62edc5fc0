#include "kernelspec/scanner.h"

#include <cctype>
#include <string>

namespace tf::kernelspec {

bool Scanner::IsIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool Scanner::IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

void Scanner::SkipSpace() {
  while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
}

bool Scanner::Accept(std::string_view token, std::string_view longer_one) {
  SkipSpace();
  if (text_.substr(pos_, token.size()) != token) return false;
  if (!longer_one.empty() && text_.substr(pos_, longer_one.size()) == longer_one) return false;
  pos_ += token.size();
  return true;
}

bool Scanner::AcceptWord(std::string_view word) {
  SkipSpace();
  if (text_.substr(pos_, word.size()) != word) return false;
  const size_t end = pos_ + word.size();
  if (end < text_.size() && IsIdentChar(text_[end])) return false;
  pos_ = end;
  return true;
}

bool Scanner::PeekWord(std::string_view word) {
  const size_t start = pos_;
  const bool found = AcceptWord(word);
  pos_ = start;
  return found;
}

Status Scanner::Error(std::string_view message, size_t at) const {
  return Status::InvalidArgument("in '" + std::string(text_) + "': " + std::string(message) +
                                 " at column " + std::to_string(at + 1));
}

}  // namespace tf::kernelspec
