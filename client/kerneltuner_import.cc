#include "client/kerneltuner_import.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "kernelspec/expr.h"
#include "kernelspec/python_eval.h"

namespace tf::client {
namespace {

using kernelspec::PyEnv;
using kernelspec::PyValue;
using nlohmann::json;

constexpr const char* kDims[] = {"X", "Y", "Z"};
constexpr const char* kProblemVars[] = {"problem_size_x", "problem_size_y", "problem_size_z"};

Status FieldError(const std::string& field, const std::string& message) {
  return Status::InvalidArgument(field + ": " + message);
}

Result<json> Parse(std::string_view text, const std::string& name) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Status::InvalidArgument(name + ": not a JSON object (a Kernel Tuner T1 file)");
  }
  return doc;
}

Result<const json*> Member(const json& object, const std::string& key, const std::string& field) {
  auto found = object.find(key);
  if (found == object.end()) return FieldError(field, "missing key '" + key + "'");
  return &*found;
}

Result<std::string> Text(const json& object, const std::string& key, const std::string& field) {
  TF_ASSIGN_OR_RETURN(const json* value, Member(object, key, field));
  if (!value->is_string()) return FieldError(field + "." + key, "expected a string");
  return value->get<std::string>();
}

// A T1 expression field: a string, or a number written as JSON.
Result<std::string> ExpressionText(const json& value, const std::string& field) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return std::to_string(value.get<int64_t>());
  return FieldError(field, "expected an expression (a string) or an integer");
}

std::string Identifier(std::string name) {
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  }
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "k_" + name;
  return name;
}

Status CheckExpression(const std::string& text, const std::string& field) {
  Result<kernelspec::Expr> expr = kernelspec::Expr::Parse(text);
  if (!expr.ok()) return FieldError(field, "'" + text + "': " + expr.status().message());
  return Status::Ok();
}

struct Param {
  std::string name;
  std::vector<PyValue> values;
};

Result<std::vector<Param>> Params(const json& space) {
  const std::string field = "ConfigurationSpace.TuningParameters";
  TF_ASSIGN_OR_RETURN(const json* list, Member(space, "TuningParameters", "ConfigurationSpace"));
  if (!list->is_array() || list->empty()) return FieldError(field, "expected a non-empty list");
  std::vector<Param> params;
  for (size_t k = 0; k < list->size(); ++k) {
    const json& item = (*list)[k];
    const std::string at = field + "[" + std::to_string(k) + "]";
    if (!item.is_object()) return FieldError(at, "expected an object");
    TF_ASSIGN_OR_RETURN(std::string name, Text(item, "Name", at));
    TF_ASSIGN_OR_RETURN(const json* values, Member(item, "Values", at));
    Param& param = params.emplace_back();
    param.name = name;
    const std::string values_field = at + ".Values (" + name + ")";
    if (values->is_string()) {
      auto evaluated = kernelspec::EvaluatePythonList(values->get<std::string>());
      if (!evaluated.ok()) return FieldError(values_field, evaluated.status().message());
      param.values = std::move(evaluated).value();
    } else if (values->is_array()) {
      for (const json& v : *values) {
        if (v.is_number_integer()) {
          param.values.push_back(PyValue::Int(v.get<int64_t>()));
        } else if (v.is_string()) {
          param.values.push_back(PyValue::String(v.get<std::string>()));
        } else if (v.is_boolean()) {
          param.values.push_back(PyValue::Int(v.get<bool>() ? 1 : 0));
        } else {
          param.values.push_back(PyValue::Float(v.is_number() ? v.get<double>() : NAN));
        }
      }
    } else {
      return FieldError(values_field, "expected a Python list expression or a JSON list");
    }
    if (param.values.empty()) return FieldError(values_field, "no values");
    for (const PyValue& value : param.values) {
      if (value.kind == PyValue::Kind::kFloat || value.kind == PyValue::Kind::kList) {
        return FieldError(values_field, "value " + value.Repr() +
                                            " cannot be translated: TuneFleet parameters are "
                                            "integers or strings");
      }
    }
  }
  return params;
}

Result<std::vector<std::string>> Conditions(const json& space) {
  std::vector<std::string> conditions;
  auto found = space.find("Conditions");
  if (found == space.end()) return conditions;
  const std::string field = "ConfigurationSpace.Conditions";
  if (!found->is_array()) return FieldError(field, "expected a list");
  for (size_t k = 0; k < found->size(); ++k) {
    const std::string at = field + "[" + std::to_string(k) + "]";
    if (!(*found)[k].is_object()) return FieldError(at, "expected an object");
    TF_ASSIGN_OR_RETURN(std::string text, Text((*found)[k], "Expression", at));
    TF_RETURN_IF_ERROR(CheckExpression(text, at + ".Expression"));
    conditions.push_back(std::move(text));
  }
  return conditions;
}

Result<std::vector<int64_t>> ProblemSize(const json& kernel) {
  std::vector<int64_t> sizes;
  auto found = kernel.find("ProblemSize");
  if (found == kernel.end()) return sizes;
  const std::string field = "KernelSpecification.ProblemSize";
  if (found->is_number_integer()) return std::vector<int64_t>{found->get<int64_t>()};
  if (!found->is_array() || found->size() > 3) return FieldError(field, "expected 1 to 3 integers");
  for (const json& v : *found) {
    if (!v.is_number_integer()) {
      return FieldError(field, "'" + v.dump() +
                                   "' is not an integer; sizes given as "
                                   "expressions cannot be translated");
    }
    sizes.push_back(v.get<int64_t>());
  }
  return sizes;
}

struct Buffer {
  std::string name;
  std::string dtype;
  int64_t count = 0;
  std::string init;
  bool output = false;
  bool constant = false;
};

Result<std::string> Dtype(const std::string& type, const std::string& field) {
  static const std::pair<const char*, const char*> kTypes[] = {
      {"float", "f32"}, {"float32", "f32"},  {"double", "f64"}, {"float64", "f64"},
      {"half", "f16"},  {"float16", "f16"},  {"int", "i32"},    {"int32", "i32"},
      {"int64", "i64"}, {"int8", "i8"},      {"uint8", "u8"},   {"uint32", "u32"},
      {"char", "i8"},   {"bfloat16", "bf16"}};
  for (const auto& [t1, dtype] : kTypes) {
    if (type == t1) return std::string(dtype);
  }
  return FieldError(field, "type '" + type + "' cannot be translated");
}

Result<std::vector<Buffer>> Buffers(const json& kernel, const std::vector<Param>& params,
                                    const std::vector<int64_t>& problem_size,
                                    std::vector<std::string>* notes) {
  const std::string field = "KernelSpecification.Arguments";
  TF_ASSIGN_OR_RETURN(const json* list, Member(kernel, "Arguments", "KernelSpecification"));
  if (!list->is_array()) return FieldError(field, "expected a list");
  PyEnv env;
  for (const Param& param : params) env[param.name] = PyValue::List(param.values);
  std::vector<PyValue> sizes;
  for (int64_t size : problem_size) sizes.push_back(PyValue::Int(size));
  env["ProblemSize"] = PyValue::List(std::move(sizes));
  std::vector<Buffer> buffers;
  bool random_noted = false;
  for (size_t k = 0; k < list->size(); ++k) {
    const json& arg = (*list)[k];
    std::string at = field + "[" + std::to_string(k) + "]";
    if (!arg.is_object()) return FieldError(at, "expected an object");
    TF_ASSIGN_OR_RETURN(std::string name, Text(arg, "Name", at));
    at += " (" + name + ")";
    TF_ASSIGN_OR_RETURN(std::string memory_type, Text(arg, "MemoryType", at));
    if (memory_type != "Vector") {
      return FieldError(at + ".MemoryType", "'" + memory_type +
                                                "' cannot be translated: TuneFleet passes "
                                                "buffers, and problem variables as scalars");
    }
    Buffer& buffer = buffers.emplace_back();
    buffer.name = name;
    TF_ASSIGN_OR_RETURN(std::string type, Text(arg, "Type", at));
    TF_ASSIGN_OR_RETURN(buffer.dtype, Dtype(type, at + ".Type"));
    TF_ASSIGN_OR_RETURN(const json* size, Member(arg, "Size", at));
    TF_ASSIGN_OR_RETURN(std::string size_text, ExpressionText(*size, at + ".Size"));
    Result<PyValue> count = kernelspec::EvaluatePython(size_text, env);
    if (!count.ok()) return FieldError(at + ".Size", count.status().message());
    if (count->kind == PyValue::Kind::kFloat && count->f == std::floor(count->f)) {
      *count = PyValue::Int(static_cast<int64_t>(count->f));
    }
    if (count->kind != PyValue::Kind::kInt || count->i <= 0) {
      return FieldError(at + ".Size",
                        "'" + size_text + "' is " + count->Repr() + ", not a positive integer");
    }
    buffer.count = count->i;
    TF_ASSIGN_OR_RETURN(std::string fill, Text(arg, "FillType", at));
    if (fill == "Random") {
      buffer.init = "random";
      if (!random_noted) {
        notes->push_back("FillType Random: uniform in [-1, 1], seeded (Kernel Tuner draws normal)");
        random_noted = true;
      }
    } else if (fill == "Constant") {
      auto value = arg.find("FillValue");
      double v = value != arg.end() && value->is_number() ? value->get<double>() : NAN;
      if (v == 0) {
        buffer.init = "zeros";
      } else if (v == 1) {
        buffer.init = "ones";
      } else {
        return FieldError(at + ".FillValue", "a constant fill of " +
                                                 (value == arg.end() ? "nothing" : value->dump()) +
                                                 " cannot be translated (0 and 1 can)");
      }
    } else {
      return FieldError(at + ".FillType", "'" + fill +
                                              "' cannot be translated (Random and "
                                              "Constant can)");
    }
    if (auto output = arg.find("Output"); output != arg.end()) {
      buffer.output = output->is_boolean() ? output->get<bool>()
                                           : output->is_number() && output->get<double>() != 0;
    }
    if (auto mem = arg.find("MemType"); mem != arg.end()) {
      if (!mem->is_string() || (*mem != "Constant" && *mem != "Global")) {
        return FieldError(at + ".MemType",
                          "'" + mem->dump() + "' cannot be translated (Constant and Global can)");
      }
      buffer.constant = *mem == "Constant";
    }
  }
  return buffers;
}

struct Launch {
  std::vector<std::string> block;
  std::vector<std::string> grid;
  std::string shared_mem;
};

Result<Launch> LaunchOf(const json& kernel, const std::vector<int64_t>& problem_size,
                        std::vector<std::string>* notes) {
  Launch launch;
  TF_ASSIGN_OR_RETURN(const json* local, Member(kernel, "LocalSize", "KernelSpecification"));
  if (!local->is_object()) return FieldError("KernelSpecification.LocalSize", "expected {X, Y, Z}");
  for (const char* dim : kDims) {
    const std::string field = std::string("KernelSpecification.LocalSize.") + dim;
    auto found = local->find(dim);
    std::string text = "1";
    if (found != local->end()) {
      TF_ASSIGN_OR_RETURN(text, ExpressionText(*found, field));
      TF_RETURN_IF_ERROR(CheckExpression(text, field));
    }
    launch.block.push_back(text);
  }
  for (size_t d = 0; d < 3; ++d) {
    if (d >= problem_size.size()) {
      launch.grid.push_back("1");
      continue;
    }
    const std::string key = std::string("GridDiv") + kDims[d];
    const std::string field = "KernelSpecification." + key;
    std::vector<std::string> divisors;
    if (auto found = kernel.find(key); found != kernel.end() && !found->is_null()) {
      if (!found->is_array()) return FieldError(field, "expected a list of expressions");
      for (size_t k = 0; k < found->size(); ++k) {
        TF_ASSIGN_OR_RETURN(std::string text,
                            ExpressionText((*found)[k], field + "[" + std::to_string(k) + "]"));
        TF_RETURN_IF_ERROR(CheckExpression(text, field + "[" + std::to_string(k) + "]"));
        divisors.push_back("(" + text + ")");
      }
    } else {
      divisors.push_back("(" + launch.block[d] + ")");
    }
    std::string product;
    for (const std::string& divisor : divisors) product += (product.empty() ? "" : " * ") + divisor;
    launch.grid.push_back(divisors.empty()
                              ? kProblemVars[d]
                              : "ceil_div(" + std::string(kProblemVars[d]) + ", " + product + ")");
  }
  if (kernel.contains("GlobalSize")) {
    notes->push_back(
        "GlobalSize is not used: the grid is ceil(ProblemSize / GridDiv), as Kernel Tuner "
        "computes it");
  }
  if (auto shared = kernel.find("SharedMemory"); shared != kernel.end() && !shared->is_null()) {
    TF_ASSIGN_OR_RETURN(std::string text,
                        ExpressionText(*shared, "KernelSpecification.SharedMemory"));
    TF_RETURN_IF_ERROR(CheckExpression(text, "KernelSpecification.SharedMemory"));
    if (text != "0") launch.shared_mem = text;
  }
  return launch;
}

Result<std::vector<std::string>> CompilerOptions(const json& kernel,
                                                 std::vector<std::string>* notes) {
  std::vector<std::string> options;
  auto found = kernel.find("CompilerOptions");
  if (found == kernel.end() || found->is_null()) return options;
  const std::string field = "KernelSpecification.CompilerOptions";
  if (!found->is_array()) return FieldError(field, "expected a list of strings");
  for (size_t k = 0; k < found->size(); ++k) {
    if (!(*found)[k].is_string()) {
      return FieldError(field + "[" + std::to_string(k) + "]", "expected a string");
    }
    std::string option = (*found)[k].get<std::string>();
    // TuneFleet's GPU toolchains start at C++17, which compiles C++11 and
    // C++14 kernels.
    if (option == "-std=c++11" || option == "-std=c++14" || option == "--std=c++11" ||
        option == "--std=c++14") {
      notes->push_back("CompilerOptions: " + option + " compiles as -std=c++17");
      option = "-std=c++17";
    }
    options.push_back(option);
  }
  return options;
}

// Keys of KernelSpecification this translation reads or may leave aside.
Status CheckKernelKeys(const json& kernel) {
  static const std::set<std::string> kKnown = {
      "Language",       "CompilerOptions", "BenchmarkName", "KernelName", "KernelFile",
      "GlobalSizeType", "LocalSize",       "GlobalSize",    "GridDivX",   "GridDivY",
      "GridDivZ",       "ProblemSize",     "SharedMemory",  "Stream",     "Arguments",
      "Device",         "SimulationInput"};
  for (const auto& [key, value] : kernel.items()) {
    if (!kKnown.count(key)) {
      return FieldError("KernelSpecification." + key, "cannot be translated (unknown key)");
    }
    if (key == "Stream" && !value.is_null()) {
      return FieldError("KernelSpecification.Stream",
                        "cannot be translated: candidates run "
                        "on the runner's own stream");
    }
  }
  return Status::Ok();
}

void EmitValue(YAML::Emitter& out, const PyValue& value) {
  if (value.kind == PyValue::Kind::kInt) {
    out << value.i;
  } else {
    out << YAML::DoubleQuoted << value.s;
  }
}

}  // namespace

Result<std::string> KernelTunerT1KernelFile(std::string_view t1_json, const std::string& t1_name) {
  TF_ASSIGN_OR_RETURN(json doc, Parse(t1_json, t1_name));
  TF_ASSIGN_OR_RETURN(const json* kernel, Member(doc, "KernelSpecification", t1_name));
  return Text(*kernel, "KernelFile", "KernelSpecification");
}

Result<ImportedSpec> ImportKernelTunerT1(std::string_view t1_json, const std::string& t1_name,
                                         const std::string& source_path,
                                         const std::vector<std::string>& languages,
                                         const std::string& reference) {
  TF_ASSIGN_OR_RETURN(json doc, Parse(t1_json, t1_name));
  ImportedSpec imported;
  TF_ASSIGN_OR_RETURN(const json* kernel, Member(doc, "KernelSpecification", t1_name));
  TF_ASSIGN_OR_RETURN(const json* space, Member(doc, "ConfigurationSpace", t1_name));
  if (!kernel->is_object()) return FieldError("KernelSpecification", "expected an object");
  if (!space->is_object()) return FieldError("ConfigurationSpace", "expected an object");
  TF_RETURN_IF_ERROR(CheckKernelKeys(*kernel));

  TF_ASSIGN_OR_RETURN(std::string language, Text(*kernel, "Language", "KernelSpecification"));
  // T1 names languages in capitals.
  std::string lang = language;
  std::transform(lang.begin(), lang.end(), lang.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (std::find(languages.begin(), languages.end(), lang) == languages.end()) {
    std::string known;
    for (const std::string& name : languages) known += (known.empty() ? "" : ", ") + name;
    return FieldError("KernelSpecification.Language",
                      "'" + language + "' cannot be translated (known languages: " + known + ")");
  }
  TF_ASSIGN_OR_RETURN(imported.kernel_file, Text(*kernel, "KernelFile", "KernelSpecification"));
  TF_ASSIGN_OR_RETURN(std::string entry, Text(*kernel, "KernelName", "KernelSpecification"));
  if (Identifier(entry) != entry) {
    return FieldError("KernelSpecification.KernelName",
                      "'" + entry + "' is not a kernel name (an identifier)");
  }
  std::string name = entry;
  if (auto general = doc.find("General"); general != doc.end() && general->is_object()) {
    if (auto bench = general->find("BenchmarkName"); bench != general->end() && bench->is_string())
      name = bench->get<std::string>();
  }
  TF_ASSIGN_OR_RETURN(std::vector<Param> params, Params(*space));
  TF_ASSIGN_OR_RETURN(std::vector<std::string> conditions, Conditions(*space));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> problem_size, ProblemSize(*kernel));
  if (problem_size.empty()) {
    return FieldError("KernelSpecification.ProblemSize", "missing: the grid is computed from it");
  }
  TF_ASSIGN_OR_RETURN(std::vector<Buffer> buffers,
                      Buffers(*kernel, params, problem_size, &imported.notes));
  if (std::none_of(buffers.begin(), buffers.end(), [](const Buffer& b) { return b.output; })) {
    return FieldError("KernelSpecification.Arguments", "no argument has Output: 1");
  }
  TF_ASSIGN_OR_RETURN(Launch launch, LaunchOf(*kernel, problem_size, &imported.notes));
  TF_ASSIGN_OR_RETURN(std::vector<std::string> options, CompilerOptions(*kernel, &imported.notes));

  YAML::Emitter out;
  out << YAML::Comment("Imported from " + t1_name + " by `tunefleet import kerneltuner`")
      << YAML::Newline;
  out << YAML::BeginMap;
  out << YAML::Key << "kernel" << YAML::Value << Identifier(name);
  out << YAML::Key << "language" << YAML::Value << lang;
  out << YAML::Key << "source" << YAML::Value << source_path;
  out << YAML::Key << "entry" << YAML::Value << entry;
  out << YAML::Key << "param_style" << YAML::Value << "define";
  out << YAML::Key << "params" << YAML::Value << YAML::BeginMap;
  for (const Param& param : params) {
    out << YAML::Key << param.name << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const PyValue& value : param.values) EmitValue(out, value);
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  if (!conditions.empty()) {
    out << YAML::Key << "constraints" << YAML::Value << YAML::BeginSeq;
    for (const std::string& condition : conditions) out << YAML::DoubleQuoted << condition;
    out << YAML::EndSeq;
  }
  out << YAML::Key << "problems" << YAML::Value << YAML::BeginSeq << YAML::Flow << YAML::BeginMap;
  for (size_t d = 0; d < problem_size.size(); ++d) {
    out << YAML::Key << kProblemVars[d] << YAML::Value << problem_size[d];
  }
  out << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "buffers" << YAML::Value << YAML::BeginMap;
  for (const Buffer& buffer : buffers) {
    out << YAML::Key << buffer.name << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "dtype" << YAML::Value << buffer.dtype;
    out << YAML::Key << "count" << YAML::Value << std::to_string(buffer.count);
    out << YAML::Key << "init" << YAML::Value << buffer.init;
    if (buffer.output) out << YAML::Key << "output" << YAML::Value << true;
    if (buffer.constant) out << YAML::Key << "memory" << YAML::Value << "constant";
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  out << YAML::Key << "launch" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "grid" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const std::string& g : launch.grid) out << YAML::DoubleQuoted << g;
  out << YAML::EndSeq;
  out << YAML::Key << "block" << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const std::string& b : launch.block) out << YAML::DoubleQuoted << b;
  out << YAML::EndSeq;
  if (!launch.shared_mem.empty()) {
    out << YAML::Key << "shared_mem" << YAML::Value << YAML::DoubleQuoted << launch.shared_mem;
  }
  out << YAML::EndMap;
  if (!reference.empty()) {
    if (Identifier(reference) != reference) {
      return Status::InvalidArgument("--reference '" + reference + "' is not a kernel name");
    }
    static const std::vector<std::vector<int>> kBlocks = {{256}, {16, 16}, {8, 8, 4}};
    const std::vector<int>& block = kBlocks[problem_size.size() - 1];
    out << YAML::Key << "verify" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "reference" << YAML::Value << reference;
    out << YAML::Key << "grid" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (size_t d = 0; d < block.size(); ++d) {
      out << YAML::DoubleQuoted
          << "ceil_div(" + std::string(kProblemVars[d]) + ", " + std::to_string(block[d]) + ")";
    }
    out << YAML::EndSeq;
    out << YAML::Key << "block" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (int b : block) out << b;
    out << YAML::EndSeq << YAML::EndMap;
  }
  if (!options.empty()) {
    out << YAML::Key << "compile_options" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const std::string& option : options) out << option;
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  if (!out.good()) return Status::Internal("writing the spec: " + out.GetLastError());
  imported.yaml = std::string(out.c_str()) + "\n";
  return imported;
}

}  // namespace tf::client
