#include "compiler/compile_flags.h"

#include <sstream>

#include "compiler/source_tree.h"

namespace tf::compiler {

Result<std::vector<std::string>> AllowedCompileFlags(
    const ::tunefleet::v1::KernelSpec& spec, const std::function<bool(const std::string&)>& allowed,
    const std::string& toolchain, const std::string& allowed_summary) {
  std::vector<std::string> tokens;
  for (const auto& option : spec.compile_options()) {
    std::istringstream words(option);
    std::string word;
    while (words >> word) tokens.push_back(word);
  }
  std::vector<std::string> flags;
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string flag = tokens[i];
    if ((flag == "-D" || flag == "-U" || flag == "-I") && i + 1 < tokens.size()) {
      flag += tokens[++i];
    }
    bool ok = flag.starts_with("-I") ? CheckSourcePath(flag.substr(2)).ok() : allowed(flag);
    if (!ok) {
      return Status::InvalidArgument("compile_options: '" + flag + "' is not allowed by the " +
                                     toolchain + " toolchain (allowed: " + allowed_summary + ")");
    }
    flags.push_back(flag);
  }
  return flags;
}

}  // namespace tf::compiler
