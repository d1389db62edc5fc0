#include "client/cli/build_failures.h"

#include <algorithm>
#include <map>
#include <regex>

#include "client/cli/text_format.h"

namespace tf::cli {
namespace {

constexpr size_t kConfigsShown = 4;
constexpr size_t kLinesShown = 40;

// Each batch is its own translation unit (batch_12.cu): its number says
// nothing about the error.
std::string Signature(const std::string& text) {
  static const std::regex kBatchName("batch_[0-9]+");
  return std::regex_replace(FirstLine(text), kBatchName, "batch_N");
}

// Up to `count` lines of `text`, without its trailing newlines, and a note
// when more follow.
std::string FirstLines(const std::string& text, size_t count) {
  const std::string trimmed = text.substr(0, text.find_last_not_of('\n') + 1);
  size_t end = 0;
  for (size_t line = 0; line < count; ++line) {
    end = trimmed.find('\n', end);
    if (end == std::string::npos) return trimmed;
    ++end;
  }
  const auto more =
      std::count(trimmed.begin() + static_cast<std::ptrdiff_t>(end), trimmed.end(), '\n') + 1;
  return trimmed.substr(0, end) + "[... " + std::to_string(more) + " more lines in --json]";
}

}  // namespace

void PrintBuildFailures(std::FILE* out, const std::vector<FailedBuild>& failures) {
  if (failures.empty()) return;
  struct Group {
    const FailedBuild* first;
    std::vector<std::string> configs;
  };
  std::vector<Group> groups;
  std::map<std::string, size_t> by_signature;
  for (const FailedBuild& failure : failures) {
    auto [it, added] = by_signature.emplace(Signature(failure.text), groups.size());
    if (added) groups.push_back({&failure, {}});
    groups[it->second].configs.push_back(failure.config);
  }
  std::fprintf(out, "\n%zu configuration%s failed to build, %zu distinct error%s:\n",
               failures.size(), failures.size() == 1 ? "" : "s", groups.size(),
               groups.size() == 1 ? "" : "s");
  for (const Group& group : groups) {
    std::string configs;
    for (size_t i = 0; i < group.configs.size() && i < kConfigsShown; ++i) {
      configs += (i ? "; " : "") + group.configs[i];
    }
    if (group.configs.size() > kConfigsShown) {
      configs += "; and " + std::to_string(group.configs.size() - kConfigsShown) + " more";
    }
    std::fprintf(out, "\n[%zu: %s]\n%s\n", group.configs.size(), configs.c_str(),
                 FirstLines(group.first->text, kLinesShown).c_str());
  }
}

}  // namespace tf::cli
