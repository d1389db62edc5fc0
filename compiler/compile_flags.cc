#include "compiler/compile_flags.h"

#include <sstream>

#include "compiler/source_tree.h"

namespace tf::compiler {

Result<std::vector<std::string>> AllowedCompileFlags(
    const ::tunefleet::v1::KernelSpec& spec, const std::function<bool(const std::string&)>& allowed,
    const std::string& toolchain, const std::string& allowed_summary) {
  struct Token {
    std::string text;
    int entry;  // index in compile_options, for the error
  };
  std::vector<Token> tokens;
  for (int k = 0; k < spec.compile_options_size(); ++k) {
    std::istringstream words(spec.compile_options(k));
    std::string word;
    while (words >> word) tokens.push_back({word, k});
  }
  std::vector<std::string> flags;
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string flag = tokens[i].text;
    const int entry = tokens[i].entry;
    if ((flag == "-D" || flag == "-U" || flag == "-I") && i + 1 < tokens.size() &&
        tokens[i + 1].entry == entry) {
      flag += tokens[++i].text;
    }
    // An -I folder inside the sources; not "=dir" or "$SYSROOT/dir", which
    // the compiler reads under its sysroot.
    bool ok = flag.starts_with("-I")
                  ? CheckSourcePath(flag.substr(2)).ok() && flag[2] != '=' && flag[2] != '$'
                  : allowed(flag);
    if (!ok) {
      return Status::InvalidArgument("compile_options[" + std::to_string(entry) + "]: '" + flag +
                                     "' is not allowed by the " + toolchain +
                                     " toolchain (allowed: " + allowed_summary + ")");
    }
    flags.push_back(flag);
  }
  return flags;
}

}  // namespace tf::compiler
