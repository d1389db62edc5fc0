#include "compiler/source_copies.h"

#include <regex>
#include <set>
#include <sstream>

#include "kernelspec/config.h"

namespace tf::compiler {
namespace {

// Text before a // comment; block comments spanning lines are rare in
// directives and left alone.
std::string_view Code(std::string_view line) {
  const size_t comment = line.find("//");
  return comment == std::string_view::npos ? line : line.substr(0, comment);
}

// The include guard of a file: its first directive is `#ifndef X` (or
// `#if !defined(X)`), the next one `#define X` without a value, and its last
// `#endif`. Empty when it has none (`#ifndef N` `#define N 16`, a default
// for a knob, is none).
std::string IncludeGuard(const std::vector<std::string>& directives) {
  static const std::regex kOpen(
      R"(#\s*(?:ifndef\s+(\w+)|if\s+!\s*defined\s*\(?\s*(\w+)\s*\)?)\s*)");
  static const std::regex kDefine(R"(#\s*define\s+(\w+)\s*)");
  if (directives.size() < 2) return "";
  std::smatch open;
  std::smatch define;
  static const std::regex kEndif(R"(#\s*endif\b.*)");
  if (!std::regex_match(directives[0], open, kOpen) ||
      !std::regex_match(directives[1], define, kDefine) ||
      !std::regex_match(directives.back(), kEndif)) {
    return "";
  }
  const std::string name = open[1].matched ? open[1].str() : open[2].str();
  return name == define[1].str() ? name : "";
}

}  // namespace

bool IsDefineStyle(const v1::KernelSpec& spec) { return spec.param_style() == "define"; }

SourceCopies AnalyzeSources(const std::vector<v1::SourceFile>& sources) {
  static const std::regex kDirective(R"(^\s*#.*)");
  static const std::regex kDefine(R"(#\s*define\s+([A-Za-z_]\w*).*)");
  static const std::regex kSystemInclude(R"(#\s*include\s*<[^>]+>\s*)");
  static const std::regex kPragmaOnce(R"(#\s*pragma\s+once\s*)");
  SourceCopies copies;
  std::set<std::string> macros;
  std::set<std::string> includes;
  for (const v1::SourceFile& file : sources) {
    std::istringstream lines(file.content());
    std::vector<std::string> directives;
    std::string line;
    while (std::getline(lines, line)) {
      if (!std::regex_match(line, kDirective)) continue;
      std::string directive(Code(line));
      directive.erase(0, directive.find('#'));
      while (!directive.empty() && std::isspace(static_cast<unsigned char>(directive.back()))) {
        directive.pop_back();
      }
      directives.push_back(directive);
      std::smatch match;
      if (std::regex_match(directive, match, kDefine)) {
        if (macros.insert(match[1].str()).second) copies.macros.push_back(match[1].str());
      } else if (std::regex_match(directive, kSystemInclude)) {
        if (includes.insert(directive).second) copies.system_includes.push_back(directive);
      } else if (copies.ungroupable.empty() && std::regex_match(directive, kPragmaOnce)) {
        copies.ungroupable = file.path() +
                             " has '#pragma once', which would hide all copies "
                             "but the first";
      }
    }
    if (copies.ungroupable.empty()) {
      if (std::string guard = IncludeGuard(directives); !guard.empty()) {
        copies.ungroupable = file.path() + " has the include guard " + guard +
                             ", which would hide all copies but the first";
      }
    }
  }
  return copies;
}

std::string CopyFunction(const std::string& function, size_t index) {
  const std::string ns = kernelspec::CopyNamespace(index);
  return ns + "::" + function + "_" + ns;
}

Result<std::string> DefineStyleCopies(const v1::KernelSpec& spec, const SourceCopies& copies,
                                      const std::vector<v1::Config>& configs) {
  static const std::regex kMacroBody(R"([A-Za-z0-9_.+\-]+)");
  std::vector<std::string> renamed = {spec.entry()};
  if (!spec.verify().reference().empty()) renamed.push_back(spec.verify().reference());
  std::string text;
  for (size_t index = 0; index < configs.size(); ++index) {
    const std::string ns = kernelspec::CopyNamespace(index);
    text += "namespace " + ns + " {  // " + kernelspec::ConfigKey(configs[index]) + "\n";
    std::vector<std::string> defined;
    for (const v1::ParamSetting& setting : configs[index].settings()) {
      const std::string value = kernelspec::ValueText(setting.value());
      if (!std::regex_match(value, kMacroBody)) {
        return Status::InvalidArgument("params." + setting.name() + ": value '" + value +
                                       "' is not a macro body (letters, digits, _ . + -)");
      }
      text += "#define " + setting.name() + " " + value + "\n";
      defined.push_back(setting.name());
    }
    for (const std::string& function : renamed) {
      text += "#define " + function + " " + function + "_" + ns + "\n";
      defined.push_back(function);
    }
    text += "#include \"" + spec.source() + "\"\n";
    defined.insert(defined.end(), copies.macros.begin(), copies.macros.end());
    std::set<std::string> undone;
    for (const std::string& name : defined) {
      if (undone.insert(name).second) text += "#undef " + name + "\n";
    }
    text += "}  // namespace " + ns + "\n";
  }
  return text;
}

Result<std::vector<std::string>> BatchKernelFunctions(const v1::KernelSpec& spec,
                                                      const std::vector<v1::Config>& configs) {
  std::vector<std::string> functions;
  for (size_t index = 0; index < configs.size(); ++index) {
    if (IsDefineStyle(spec)) {
      functions.push_back(CopyFunction(spec.entry(), index));
    } else {
      TF_ASSIGN_OR_RETURN(functions.emplace_back(),
                          kernelspec::InstantiateEntry(spec.entry(), configs[index]));
    }
  }
  return functions;
}

std::string BatchReferenceFunction(const v1::KernelSpec& spec) {
  const std::string& reference = spec.verify().reference();
  if (reference.empty() || !IsDefineStyle(spec)) return reference;
  return CopyFunction(reference, 0);
}

Result<std::string> BatchSourceText(const v1::KernelSpec& spec,
                                    const std::vector<v1::SourceFile>& sources,
                                    const std::vector<v1::Config>& configs) {
  if (!IsDefineStyle(spec)) return "#include \"" + spec.source() + "\"\n";
  const SourceCopies copies = AnalyzeSources(sources);
  std::string text;
  for (const std::string& include : copies.system_includes) text += include + "\n";
  TF_ASSIGN_OR_RETURN(std::string copied, DefineStyleCopies(spec, copies, configs));
  return text + copied;
}

}  // namespace tf::compiler
