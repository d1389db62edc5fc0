#include "kernelspec/config.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include "common/files.h"

namespace tf::kernelspec {

void BindConfig(const v1::Config& config, Bindings* vars) {
  for (const v1::ParamSetting& setting : config.settings()) {
    if (setting.value().kind_case() == v1::Value::kStrValue) {
      (*vars)[setting.name()] = setting.value().str_value();
    } else {
      (*vars)[setting.name()] = setting.value().int_value();
    }
  }
}

void BindProblem(const v1::Problem& problem, Bindings* vars) {
  for (const v1::ProblemVar& var : problem.vars()) (*vars)[var.name()] = var.value();
}

std::string ValueText(const v1::Value& value) {
  return value.kind_case() == v1::Value::kStrValue ? value.str_value()
                                                   : std::to_string(value.int_value());
}

v1::Value IntValue(int64_t v) {
  v1::Value value;
  value.set_int_value(v);
  return value;
}

v1::Value StrValue(std::string v) {
  v1::Value value;
  value.set_str_value(std::move(v));
  return value;
}

std::string ConfigKey(const v1::Config& config) {
  std::string key;
  for (const auto& s : config.settings()) {
    if (!key.empty()) key += ',';
    key += s.name() + '=' + ValueText(s.value());
  }
  return key;
}

std::string ProblemText(const v1::Problem& problem) {
  std::string text;
  for (const auto& v : problem.vars()) {
    if (!text.empty()) text += ',';
    text += v.name() + '=' + std::to_string(v.value());
  }
  return text;
}

std::string ProblemVariableNames(const v1::Problem& problem) {
  std::set<std::string> names;
  for (const v1::ProblemVar& var : problem.vars()) names.insert(var.name());
  std::string joined;
  for (const std::string& name : names) joined += (joined.empty() ? "" : ",") + name;
  return joined;
}

std::string ProblemKey(const v1::Problem& problem) {
  v1::Problem sorted = problem;
  std::sort(sorted.mutable_vars()->begin(), sorted.mutable_vars()->end(),
            [](const auto& a, const auto& b) { return a.name() < b.name(); });
  return ProblemText(sorted);
}

namespace {

// Splits "A=1,B=2" into name/value pairs.
Result<std::vector<std::pair<std::string, std::string>>> SplitAssignments(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t pos = 0;
  while (pos <= text.size() && !text.empty()) {
    size_t comma = text.find(',', pos);
    std::string_view item =
        text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) {
      return Status::InvalidArgument("expected NAME=VALUE, got '" + std::string(item) + "' in '" +
                                     std::string(text) + "'");
    }
    std::string name(item.substr(0, eq));
    if (std::any_of(out.begin(), out.end(), [&](const auto& p) { return p.first == name; })) {
      return Status::InvalidArgument(name + " is given twice in '" + std::string(text) + "'");
    }
    out.emplace_back(std::move(name), std::string(item.substr(eq + 1)));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  if (out.empty()) return Status::InvalidArgument("empty NAME=VALUE list");
  return out;
}

// std::errc() when all of `s` is an int64; result_out_of_range when it is a
// number past int64; else invalid_argument.
std::errc ParseInt(std::string_view s, int64_t* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (ec == std::errc() && ptr != s.data() + s.size()) return std::errc::invalid_argument;
  return ec;
}

}  // namespace

Result<v1::Problem> ParseProblem(std::string_view text) {
  TF_ASSIGN_OR_RETURN(auto pairs, SplitAssignments(text));
  v1::Problem problem;
  // People write "M=64, N=64": spaces around names and values are not theirs.
  auto trimmed = [](const std::string& s) {
    const size_t begin = s.find_first_not_of(" \t");
    return begin == std::string::npos ? std::string()
                                      : s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
  };
  for (const auto& [given_name, given_value] : pairs) {
    const std::string name = trimmed(given_name);
    const std::string value = trimmed(given_value);
    int64_t v;
    if (const std::errc error = ParseInt(value, &v); error != std::errc()) {
      return Status::InvalidArgument("problem variable " + name + ": " +
                                     (error == std::errc::result_out_of_range
                                          ? value + " is out of the range of a 64-bit integer"
                                          : "must be an integer, got '" + value + "'"));
    }
    auto* var = problem.add_vars();
    var->set_name(name);
    var->set_value(v);
  }
  return problem;
}

Result<v1::Config> ParseConfigKey(std::string_view key) {
  TF_ASSIGN_OR_RETURN(auto pairs, SplitAssignments(key));
  v1::Config config;
  for (const auto& [name, value] : pairs) {
    auto* s = config.add_settings();
    s->set_name(name);
    int64_t v;
    *s->mutable_value() = ParseInt(value, &v) == std::errc() ? IntValue(v) : StrValue(value);
  }
  return config;
}

Result<std::string> InstantiateEntry(std::string_view entry, const v1::Config& config) {
  std::string out;
  size_t pos = 0;
  while (pos < entry.size()) {
    size_t open = entry.find('{', pos);
    if (open == std::string_view::npos) {
      out += entry.substr(pos);
      break;
    }
    size_t close = entry.find('}', open);
    if (close == std::string_view::npos) {
      return Status::InvalidArgument("entry '" + std::string(entry) + "': unclosed '{'");
    }
    out += entry.substr(pos, open - pos);
    std::string_view name = entry.substr(open + 1, close - open - 1);
    const v1::ParamSetting* found = nullptr;
    for (const auto& s : config.settings()) {
      if (s.name() == name) found = &s;
    }
    if (!found) {
      return Status::InvalidArgument("entry '" + std::string(entry) + "' uses {" +
                                     std::string(name) + "}, which is not a parameter");
    }
    out += ValueText(found->value());
    pos = close + 1;
  }
  return out;
}

std::string CandidateSymbol(const v1::Config& config) {
  return "tf_c_" + Sha256Hex(ConfigKey(config)).substr(0, 16);
}

std::vector<std::string> ScalarNames(const v1::KernelSpec& spec) {
  std::vector<std::string> names(spec.scalars().begin(), spec.scalars().end());
  if (names.empty() && spec.problems_size() > 0) {
    for (const auto& v : spec.problems(0).vars()) names.push_back(v.name());
  }
  return names;
}

std::string CopyNamespace(size_t index) { return "tf_copy" + std::to_string(index); }

int64_t CopyIndexInSymbol(std::string_view symbol) {
  static constexpr std::string_view kPrefix = "tf_copy";
  // The last one: the renamed kernel (conv_tf_copy3), followed by no digit,
  // where the namespace's (8tf_copy327conv...) runs into the next length.
  const size_t at = symbol.rfind(kPrefix);
  if (at == std::string_view::npos) return -1;
  int64_t index = -1;
  for (size_t k = at + kPrefix.size(); k < symbol.size() && std::isdigit(symbol[k]); ++k) {
    if (index > (int64_t{1} << 40)) return -1;
    index = (index < 0 ? 0 : index * 10) + (symbol[k] - '0');
  }
  return index;
}

std::string ConstantSymbol(std::string_view kernel_symbol, const std::string& name) {
  const int64_t copy = CopyIndexInSymbol(kernel_symbol);
  if (copy < 0) return name;
  const std::string ns = CopyNamespace(static_cast<size_t>(copy));
  return "_ZN" + std::to_string(ns.size()) + ns + std::to_string(name.size()) + name + "E";
}

}  // namespace tf::kernelspec
