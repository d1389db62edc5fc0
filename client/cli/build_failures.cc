#include "client/cli/build_failures.h"

#include <algorithm>
#include <map>
#include <regex>
#include <string_view>

#include "client/cli/text_format.h"
#include "common/number_text.h"

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

// The compiler's output, once: the headline "compilation failed: <first
// error>" repeats one of its lines, and is kept only when that line is past
// the lines shown.
std::string Shown(const std::string& text) {
  constexpr std::string_view kFailed = "compilation failed: ";
  const size_t newline = text.find('\n');
  if (!text.starts_with(kFailed) || newline == std::string::npos) {
    return FirstLines(text, kLinesShown);
  }
  const std::string error = text.substr(kFailed.size(), newline - kFailed.size());
  const std::string output = FirstLines(text.substr(newline + 1), kLinesShown - 1);
  if (("\n" + output + "\n").find("\n" + error + "\n") == std::string::npos) {
    return FirstLines(text, kLinesShown);
  }
  return "compilation failed:\n" + output;
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
  std::fprintf(out, "\n%s failed to build, %s:\n",
               CountText(failures.size(), "configuration").c_str(),
               CountText(groups.size(), "distinct error").c_str());
  for (const Group& group : groups) {
    std::string configs;
    for (size_t i = 0; i < group.configs.size() && i < kConfigsShown; ++i) {
      configs += (i ? "; " : "") + group.configs[i];
    }
    if (group.configs.size() > kConfigsShown) {
      configs += "; and " + std::to_string(group.configs.size() - kConfigsShown) + " more";
    }
    std::fprintf(out, "\n[%zu: %s]\n%s\n", group.configs.size(), configs.c_str(),
                 Shown(group.first->text).c_str());
  }
}

}  // namespace tf::cli
