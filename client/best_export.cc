#include "client/best_export.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <sstream>
#include <string_view>

#include "client/json_format.h"
#include "kernelspec/config.h"
#include "kernelspec/problem_distance.h"

namespace tf::client {
namespace {

Status FieldError(const std::string& name, const std::string& field, const std::string& why) {
  return Status::InvalidArgument(name + ": " + field + ": " + why);
}

// `text` as a C++ identifier: other characters become '_', and a keyword
// (a kernel named `class`, a parameter named `register`) takes a '_' after it.
std::string Identifier(const std::string& text) {
  static const std::set<std::string_view> kKeywords = {
      "alignas",       "alignof",     "and",
      "and_eq",        "asm",         "auto",
      "bitand",        "bitor",       "bool",
      "break",         "case",        "catch",
      "char",          "char8_t",     "char16_t",
      "char32_t",      "class",       "compl",
      "concept",       "const",       "consteval",
      "constexpr",     "constinit",   "const_cast",
      "continue",      "co_await",    "co_return",
      "co_yield",      "decltype",    "default",
      "delete",        "do",          "double",
      "dynamic_cast",  "else",        "enum",
      "explicit",      "export",      "extern",
      "false",         "float",       "for",
      "friend",        "goto",        "if",
      "inline",        "int",         "long",
      "mutable",       "namespace",   "new",
      "noexcept",      "not",         "not_eq",
      "nullptr",       "operator",    "or",
      "or_eq",         "private",     "protected",
      "public",        "register",    "reinterpret_cast",
      "requires",      "return",      "short",
      "signed",        "sizeof",      "static",
      "static_assert", "static_cast", "struct",
      "switch",        "template",    "this",
      "thread_local",  "throw",       "true",
      "try",           "typedef",     "typeid",
      "typename",      "union",       "unsigned",
      "using",         "virtual",     "void",
      "volatile",      "wchar_t",     "while",
      "xor",           "xor_eq"};
  // And the names the header itself uses, which a member or namespace of the
  // same name would hide.
  static const std::set<std::string_view> kHeaderNames = {
      "int64_t", "std",      "Config",       "Entry",           "Problem",
      "Lookup",  "kEntries", "kProblemVars", "kProblemVarNames"};
  std::string out;
  for (char c : text) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "k_" + out;
  if (kKeywords.count(out) || kHeaderNames.count(out)) out += '_';
  return out;
}

// The members of Config or Problem: each parameter's or variable's
// Identifier, with '_' added until it differs from the others' (parameters
// `class` and `class_`).
std::vector<std::string> MemberNames(const std::vector<std::string>& names) {
  std::vector<std::string> members;
  std::set<std::string> taken;
  for (const std::string& name : names) {
    std::string member = Identifier(name);
    while (!taken.insert(member).second) member += '_';
    members.push_back(member);
  }
  return members;
}

// Control characters as three-digit octal escapes, which no following
// character can extend.
std::string CppString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\%03o", u);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string CppDouble(double value) {
  if (!std::isfinite(value)) return "HUGE_VAL";
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

// The setting or variable of `name` in `items`, or null.
template <typename Items>
auto* Named(const Items& items, const std::string& name) {
  for (const auto& item : items) {
    if (item.name() == name) return &item;
  }
  return static_cast<decltype(&*items.begin())>(nullptr);
}

}  // namespace

std::string ExportJson(const std::string& kernel,
                       const std::vector<v1::QueryBestResponse>& entries) {
  Json out = {{"format", kExportFormat}, {"kernel", kernel}, {"entries", Json::array()}};
  for (const auto& e : entries) out["entries"].push_back(BestJson(e));
  return out.dump(2) + "\n";
}

Result<std::vector<v1::QueryBestResponse>> ReadExportJson(std::string_view text,
                                                          const std::string& name) {
  Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return Status::InvalidArgument(name + ": not a JSON object");
  }
  if (json.value("format", "") != kExportFormat) {
    return FieldError(name, "format", std::string("must be \"") + kExportFormat + "\"");
  }
  if (!json.contains("kernel") || !json["kernel"].is_string()) {
    return FieldError(name, "kernel", "missing, or not a string");
  }
  if (!json.contains("entries") || !json["entries"].is_array()) {
    return FieldError(name, "entries", "missing, or not a list");
  }
  const std::string kernel = json["kernel"];
  std::vector<v1::QueryBestResponse> entries;
  for (size_t i = 0; i < json["entries"].size(); ++i) {
    const Json& e = json["entries"][i];
    const std::string field = "entries[" + std::to_string(i) + "]";
    if (!e.is_object()) return FieldError(name, field, "not an object");
    v1::QueryBestResponse entry;
    entry.set_found(true);
    entry.set_exact(true);
    entry.set_kernel(kernel);
    if (!e.contains("device_class") || !e["device_class"].is_string()) {
      return FieldError(name, field + ".device_class", "missing, or not a string");
    }
    entry.set_device_class(e["device_class"].get<std::string>());
    for (const char* key : {"problem", "config"}) {
      if (!e.contains(key) || !e[key].is_object() || e[key].empty()) {
        return FieldError(name, field + "." + key, "missing, or not an object of values");
      }
    }
    for (const auto& [var, value] : e["problem"].items()) {
      if (!value.is_number_integer()) {
        return FieldError(name, field + ".problem." + var, "not an integer");
      }
      auto* v = entry.mutable_problem()->add_vars();
      v->set_name(var);
      v->set_value(value.get<int64_t>());
    }
    for (const auto& [param, value] : e["config"].items()) {
      auto* s = entry.mutable_config()->add_settings();
      s->set_name(param);
      if (value.is_number_integer()) {
        s->mutable_value()->set_int_value(value.get<int64_t>());
      } else if (value.is_string()) {
        s->mutable_value()->set_str_value(value.get<std::string>());
      } else {
        return FieldError(name, field + ".config." + param, "neither an integer nor a string");
      }
    }
    if (!e.contains("median_ns") || !e["median_ns"].is_number()) {
      return FieldError(name, field + ".median_ns", "missing, or not a number");
    }
    entry.mutable_timing()->set_median_ns(e["median_ns"].get<double>());
    entry.mutable_timing()->set_p10_ns(e.value("p10_ns", 0.0));
    entry.mutable_timing()->set_p90_ns(e.value("p90_ns", 0.0));
    entry.mutable_timing()->set_gflops(e.value("gflops", 0.0));
    entry.set_job_id(e.value("job_id", int64_t{0}));
    entry.set_fingerprint(e.value("fingerprint", ""));
    entries.push_back(std::move(entry));
  }
  return entries;
}

const v1::QueryBestResponse* LookupExported(const std::vector<v1::QueryBestResponse>& entries,
                                            const v1::QueryBestRequest& request, bool* exact) {
  const std::string key = kernelspec::ProblemKey(request.problem());
  const v1::QueryBestResponse* best = nullptr;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const auto& e : entries) {
    if (e.kernel() != request.kernel()) continue;
    if (!request.device_class().empty() && e.device_class() != request.device_class()) continue;
    const double distance = kernelspec::ProblemKey(e.problem()) == key
                                ? -1
                                : kernelspec::ProblemDistance(request.problem(), e.problem());
    if (distance == std::numeric_limits<double>::infinity()) continue;
    if (!best || kernelspec::AnswersBefore(distance, e.timing().median_ns(), best_distance,
                                           best->timing().median_ns())) {
      best = &e;
      best_distance = distance;
    }
  }
  *exact = best && best_distance < 0;
  return best;
}

Result<std::string> ExportCppHeader(const std::string& kernel,
                                    const std::vector<v1::QueryBestResponse>& entries) {
  if (entries.empty()) return Status::NotFound("no tuned configuration of '" + kernel + "'");
  // Every entry's settings and variables are taken by name in the first's order.
  const v1::QueryBestResponse& first = entries.front();
  auto where = [](const v1::QueryBestResponse& e) {
    return e.device_class() + " for " + kernelspec::ProblemText(e.problem());
  };
  for (const auto& e : entries) {
    bool same = e.config().settings_size() == first.config().settings_size() &&
                e.problem().vars_size() == first.problem().vars_size();
    for (const auto& s : first.config().settings()) {
      const v1::ParamSetting* other = Named(e.config().settings(), s.name());
      same = same && other;
      if (same && other->value().has_int_value() != s.value().has_int_value()) {
        return Status::InvalidArgument(
            "parameter '" + s.name() + "' of '" + kernel + "' is an integer on " +
            where(s.value().has_int_value() ? first : e) + " and a string on " +
            where(s.value().has_int_value() ? e : first) +
            "; a member of the header's Config has one type: export --format json");
      }
    }
    for (const auto& v : first.problem().vars()) same = same && Named(e.problem().vars(), v.name());
    if (!same) {
      return Status::InvalidArgument(
          "the best configurations of '" + kernel + "' on " + where(e) +
          " have other parameters or problem variables than on " + where(first) +
          " (kernels of different sources); export one --device-class at a time");
    }
  }
  const int vars = first.problem().vars_size();
  // Variables by name, the order of every problem in the header.
  std::vector<std::string> var_names;
  for (const auto& v : first.problem().vars()) var_names.push_back(v.name());
  std::sort(var_names.begin(), var_names.end());
  const std::vector<std::string> var_members = MemberNames(var_names);
  std::vector<std::string> param_names;
  for (const auto& s : first.config().settings()) param_names.push_back(s.name());
  const std::vector<std::string> members = MemberNames(param_names);
  // Lookup's example: the first entry's, by name.
  std::string example = "Lookup(" + CppString(first.device_class()) + ", {";
  for (int v = 0; v < vars; ++v) {
    example += (v ? ", ." : ".") + var_members[v] + " = " +
               std::to_string(Named(first.problem().vars(), var_names[v])->value());
  }
  example += "})";
  std::ostringstream out;
  out << "// Best configurations of " << kernel << ", exported by `tunefleet export " << kernel
      << " --format cpp`;\n"
      << "// C++17 (inline constexpr variables). Namespace tunefleet_best::" << Identifier(kernel)
      << ":\n"
      << "// the kernel's name, '_' for each character a C++ name cannot hold, and a '_' after a\n"
      << "// C++ keyword or a name this header uses (kernels new, std, Lookup: new_, std_, "
         "Lookup_).\n"
      << "// Lookup(device_class, problem): the configuration tuned for the problem, or for the\n"
      << "// nearest tuned one (sum over variables of |Scale(a) - Scale(b)|), the fastest on\n"
      << "// ties; device_class nullptr or \"\": any. The problem's variables, by name:";
  for (const std::string& name : var_names) out << " " << name;
  out << ".\n"
      << "// Name them (C++20 designated initializers), since an application's order is seldom\n"
      << "// theirs; out of this order, g++ refuses them and clang warns and takes each by name:\n"
      << "//   " << example << "\n"
      << "#pragma once\n\n#include <cmath>\n#include <cstdint>\n#include <cstring>\n\n"
      << "namespace tunefleet_best::" << Identifier(kernel) << " {\n\n"
      << "struct Config {\n";
  for (int p = 0; p < first.config().settings_size(); ++p) {
    out << "  "
        << (first.config().settings(p).value().has_int_value() ? "int64_t " : "const char* ")
        << members[p] << ";\n";
  }
  out << "};\n\n// The problem: a member per variable, in the order of kProblemVarNames.\n"
      << "struct Problem {\n";
  for (int v = 0; v < vars; ++v) out << "  int64_t " << var_members[v] << ";\n";
  out << "};\n\nstruct Entry {\n  const char* device_class;\n  int64_t problem[" << vars
      << "];\n  Config config;\n  double median_ns;\n};\n\n"
      << "inline constexpr int kProblemVars = " << vars << ";\n"
      << "inline constexpr const char* kProblemVarNames[] = {";
  for (int v = 0; v < vars; ++v) out << (v ? ", " : "") << CppString(var_names[v]);
  out << "};\n\ninline constexpr Entry kEntries[] = {\n";
  for (const auto& e : entries) {
    out << "    {" << CppString(e.device_class()) << ", {";
    for (int v = 0; v < vars; ++v) {
      out << (v ? ", " : "") << Named(e.problem().vars(), var_names[v])->value() << "LL";
    }
    out << "}, {";
    for (int p = 0; p < first.config().settings_size(); ++p) {
      const v1::Value& value =
          Named(e.config().settings(), first.config().settings(p).name())->value();
      out << (p ? ", " : "")
          << (value.has_int_value() ? std::to_string(value.int_value()) + "LL"
                                    : CppString(value.str_value()));
    }
    out << "}, " << CppDouble(e.timing().median_ns()) << "},\n";
  }
  // Distances within kProblemDistanceTie are ties, as the coordinator counts them.
  char tie[32];
  std::snprintf(tie, sizeof tie, "%g", kernelspec::kProblemDistanceTie);
  out << "};\n\n"
      << "// log2(value) from 1 up, value - 1 below, as the coordinator measures distances.\n"
      << "inline double Scale(int64_t value) {\n"
      << "  return value >= 1 ? std::log2(static_cast<double>(value)) : static_cast<double>(value) "
         "- 1;\n"
      << "}\n\n"
      << "// Null when no entry is of device_class.\n"
      << "inline const Config* Lookup(const char* device_class, const Problem& p) {\n"
      << "  const int64_t problem[kProblemVars] = {";
  for (int v = 0; v < vars; ++v) out << (v ? ", " : "") << "p." << var_members[v];
  out << "};\n"
      << "  const Entry* best = nullptr;\n"
      << "  double best_distance = 0;\n"
      << "  for (const Entry& e : kEntries) {\n"
      << "    if (device_class && *device_class && std::strcmp(e.device_class, device_class) != "
         "0) continue;\n"
      << "    double distance = 0;\n"
      << "    bool same = true;\n"
      << "    for (int v = 0; v < kProblemVars; ++v) {\n"
      << "      same = same && e.problem[v] == problem[v];\n"
      << "      distance += std::fabs(Scale(problem[v]) - Scale(e.problem[v]));\n"
      << "    }\n"
      << "    if (same) distance = -1;\n"
      << "    if (!best || distance < best_distance - " << tie << " ||\n"
      << "        (distance <= best_distance + " << tie << " && e.median_ns < best->median_ns)) {\n"
      << "      best = &e;\n"
      << "      best_distance = distance;\n"
      << "    }\n"
      << "  }\n"
      << "  return best ? &best->config : nullptr;\n"
      << "}\n\n"
      << "}  // namespace tunefleet_best::" << Identifier(kernel) << "\n";
  return out.str();
}

}  // namespace tf::client
