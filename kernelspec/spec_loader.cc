#include "kernelspec/spec_loader.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <type_traits>
#include <utility>

#include "common/files.h"
#include "kernelspec/config.h"
#include "kernelspec/validate.h"

namespace tf::kernelspec {

namespace {

// Default tolerances by output dtype: the looser the format, the looser the check.
double DefaultTolerance(std::string_view dtype) {
  if (dtype == "f16" || dtype == "bf16") return 1e-2;
  if (dtype == "f32") return 1e-3;
  if (dtype == "f64") return 1e-6;
  return 0;  // integers compare exactly
}

// Every default of the spec format, applied to what the YAML did not set.
// `given` holds the dotted paths of the keys it set ("verify.rtol").
void FillDefaults(const std::set<std::string>& given, v1::KernelSpec* spec) {
  auto missing = [&](const std::string& path) { return !given.count(path); };
  if (missing("language")) spec->set_language("cpp");
  if (missing("param_style")) spec->set_param_style("template");

  for (v1::Buffer& buffer : *spec->mutable_buffers()) {
    std::string path = "buffers." + buffer.name() + ".";
    if (missing(path + "init")) buffer.set_init("random");
    if (missing(path + "memory")) buffer.set_memory("global");
    bool is_unsigned = buffer.dtype().starts_with("u");
    if (missing(path + "min")) buffer.set_random_min(is_unsigned ? 0 : -1);
    if (missing(path + "max")) buffer.set_random_max(1);
  }

  double tolerance = 0;
  for (const v1::Buffer& buffer : spec->buffers()) {
    if (buffer.output()) tolerance = std::max(tolerance, DefaultTolerance(buffer.dtype()));
  }
  v1::Verify* verify = spec->mutable_verify();
  if (missing("verify.rtol")) verify->set_rtol(tolerance);
  if (missing("verify.atol")) verify->set_atol(tolerance);

  v1::Objective* objective = spec->mutable_objective();
  if (missing("objective.minimize")) objective->set_minimize("time");

  v1::BenchmarkSettings* benchmark = spec->mutable_benchmark();
  if (missing("benchmark.warmup_ms")) benchmark->set_warmup_ms(10);
  if (missing("benchmark.min_time_ms")) benchmark->set_min_time_ms(50);
  if (missing("benchmark.min_repeats")) benchmark->set_min_repeats(5);
  if (missing("benchmark.max_repeats")) benchmark->set_max_repeats(1000);
  if (missing("benchmark.flush_l2")) benchmark->set_flush_l2(true);
  if (missing("benchmark.timeout_s")) benchmark->set_timeout_s(10);
  if (missing("benchmark.rest")) benchmark->set_rest(2);

  if (missing("search.strategy")) spec->mutable_search()->set_strategy("auto");
  if (missing("search.finalists")) spec->mutable_search()->set_finalists(4);
}

template <typename T>
constexpr const char* kExpected = "a string";
template <>
constexpr const char* kExpected<int64_t> = "an integer";
template <>
constexpr const char* kExpected<int32_t> = "an integer";
template <>
constexpr const char* kExpected<uint64_t> = "a non-negative integer";
template <>
constexpr const char* kExpected<double> = "a number";
template <>
constexpr const char* kExpected<bool> = "true or false";

// An integer as YAML writes one in decimal: what, when it does not decode,
// is out of range rather than not an integer.
// "2.5", "-1e3", ".5": a number YAML would not give as an integer.
bool IsFiniteDecimal(const std::string& text) {
  // from_chars reads no "inf" or "nan" as finite, and no leading '+'.
  const char* first = text.data() + (text.starts_with('+') ? 1 : 0);
  double value = 0;
  auto [end, error] = std::from_chars(first, text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && std::isfinite(value);
}

bool IsDecimalInteger(const std::string& text) {
  size_t digits = text.starts_with('-') || text.starts_with('+') ? 1 : 0;
  if (digits == text.size()) return false;
  for (size_t k = digits; k < text.size(); ++k) {
    if (text[k] < '0' || text[k] > '9') return false;
  }
  return true;
}

template <typename T>
std::string OutOfRange(const std::string& text) {
  return text + " is out of range: an integer from " +
         std::to_string(std::numeric_limits<T>::min()) + " to " +
         std::to_string(std::numeric_limits<T>::max());
}

// A number as YAML writes one that is too large for a double (1e400).
bool IsNumberTooLarge(const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0' && errno == ERANGE && value != 0;
}

struct Document {
  v1::KernelSpec spec;
  std::vector<std::string> includes;
  std::map<std::string, int> field_lines;
};

// How far RecordLines walks. A spec is a few hundred entries; YAML aliases
// can make a loop (`a: &x [*x]`) or a tree of 10^9 entries in a few lines.
constexpr int kMaxDepth = 64;
constexpr size_t kMaxEntries = 200'000;

// The line of every key and list item under `node`, named as the parser
// names fields ("benchmark.timeout_s", "constraints[0]"). Fails past the
// limits above, before the parser walks the tree.
Status RecordLines(const YAML::Node& node, const std::string& field, int depth,
                   std::map<std::string, int>* lines, size_t* entries) {
  // `at`, the value at `path`, is an entry: counted, and walked in turn.
  auto descend = [&](const YAML::Node& at, const std::string& path) -> Status {
    if (++*entries > kMaxEntries || depth >= kMaxDepth) {
      return Status::InvalidArgument(
          path + ": the spec nests deeper than " + std::to_string(kMaxDepth) +
          " levels or holds more than " + std::to_string(kMaxEntries) +
          " keys and items (a YAML alias that refers to itself, or expands too far?)");
    }
    if (!at.Mark().is_null()) lines->emplace(path, at.Mark().line + 1);
    return RecordLines(at, path, depth + 1, lines, entries);
  };
  if (node.IsMap()) {
    for (const auto& entry : node) {
      const std::string& key = entry.first.Scalar();
      const std::string path = field.empty() ? key : field + "." + key;
      if (!entry.first.Mark().is_null()) lines->emplace(path, entry.first.Mark().line + 1);
      TF_RETURN_IF_ERROR(descend(entry.second, path));
    }
  } else if (node.IsSequence()) {
    for (size_t k = 0; k < node.size(); ++k) {
      TF_RETURN_IF_ERROR(descend(node[k], field + "[" + std::to_string(k) + "]"));
    }
  }
  return Status::Ok();
}

// One pass over the YAML tree; records which keys were given for FillDefaults.
class SpecParser {
 public:
  explicit SpecParser(std::string_view file_name) : file_name_(file_name) {}

  Result<Document> Parse(std::string_view yaml) {
    YAML::Node root;
    try {
      root = YAML::Load(std::string(yaml));
    } catch (const YAML::Exception& e) {
      return Status::InvalidArgument(file_name_ + ":" + std::to_string(e.mark.line + 1) + ":" +
                                     std::to_string(e.mark.column + 1) +
                                     ": YAML syntax error: " + e.msg);
    }
    if (!root.IsMap()) return Error(root, "", "expected a map of spec keys");
    size_t entries = 0;
    if (Status walked = RecordLines(root, "", 0, &doc_.field_lines, &entries); !walked.ok()) {
      return Status::InvalidArgument(file_name_ + ": " + walked.message());
    }
    TF_RETURN_IF_ERROR(ParseTopLevel(root));
    for (const char* required : {"kernel", "source", "entry", "params", "problems", "buffers"}) {
      if (!given_.count(required)) {
        return Status::InvalidArgument(file_name_ + ": missing required key '" + required + "'");
      }
    }
    FillDefaults(given_, &doc_.spec);
    return std::move(doc_);
  }

 private:
  // Parses the value of `field`, a dotted path such as "benchmark.timeout_s".
  using Handler = std::function<Status(const YAML::Node& value, const std::string& field)>;
  using Handlers = std::vector<std::pair<std::string_view, Handler>>;

  Status Error(const YAML::Node& node, const std::string& field, const std::string& message) {
    std::string where = file_name_;
    if (!node.Mark().is_null()) where += ":" + std::to_string(node.Mark().line + 1);
    return Status::InvalidArgument(where + ": " + (field.empty() ? "" : field + ": ") + message);
  }

  // Each key of `map` must have a handler; a key given twice is an error.
  Status ParseMap(const YAML::Node& map, const std::string& field, const Handlers& handlers) {
    if (!map.IsMap()) return Error(map, field, "expected a map");
    for (const auto& entry : map) {
      const std::string& key = entry.first.Scalar();
      std::string path = field.empty() ? key : field + "." + key;
      const Handler* handler = nullptr;
      std::string known;
      for (const auto& [name, h] : handlers) {
        if (name == key) handler = &h;
        known += (known.empty() ? "" : ", ") + std::string(name);
      }
      if (!handler) {
        return Error(entry.first, field, "unknown key '" + key + "' (known: " + known + ")");
      }
      if (!given_.insert(path).second)
        return Error(entry.first, field, "key '" + key + "' repeated");
      TF_RETURN_IF_ERROR((*handler)(entry.second, path));
    }
    return Status::Ok();
  }

  template <typename T>
  Status Decode(const YAML::Node& node, const std::string& field, T* out) {
    if (node.IsScalar() && YAML::convert<T>::decode(node, *out)) return Status::Ok();
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (node.IsScalar() && IsDecimalInteger(node.Scalar())) {
        return Error(node, field, OutOfRange<T>(node.Scalar()));
      }
    }
    if constexpr (std::is_floating_point_v<T>) {
      if (node.IsScalar() && IsNumberTooLarge(node.Scalar())) {
        return Error(node, field,
                     node.Scalar() + " is out of range: a number up to about 1.8e308 in size");
      }
    }
    return Error(node, field, std::string("expected ") + kExpected<T>);
  }

  // A budget of the search: written out, it must be positive. 0 would read as
  // a budget of nothing, but the message's 0 means no limit, so a spec says
  // "no limit" by leaving the field out.
  template <typename T, typename Set>
  Handler Budget(std::string what, std::string left_out, Set set) {
    return [this, what, left_out, set](const YAML::Node& node, const std::string& field) -> Status {
      T value;
      TF_RETURN_IF_ERROR(Decode(node, field, &value));
      if (!(value > 0)) {
        return Error(node, field,
                     node.Scalar() + " is not allowed: give " + what + ", or leave " + field +
                         " out " + left_out);
      }
      set(value);
      return Status::Ok();
    };
  }

  // A handler that decodes a T and passes it to `set`.
  template <typename T, typename Set>
  Handler Field(Set set) {
    return [this, set](const YAML::Node& node, const std::string& field) -> Status {
      T value;
      TF_RETURN_IF_ERROR(Decode(node, field, &value));
      set(std::move(value));
      return Status::Ok();
    };
  }
  Handler Text(std::string* out) {
    return Field<std::string>([out](std::string v) { *out = std::move(v); });
  }
  // A list of strings; a single string is a list of one.
  template <typename List>
  Handler TextList(List* out) {
    return [this, out](const YAML::Node& node, const std::string& field) -> Status {
      if (node.IsScalar()) {
        out->Add(std::string(node.Scalar()));
        return Status::Ok();
      }
      if (!node.IsSequence()) return Error(node, field, "expected a list of strings");
      for (size_t k = 0; k < node.size(); ++k) {
        std::string value;
        TF_RETURN_IF_ERROR(Decode(node[k], field + "[" + std::to_string(k) + "]", &value));
        out->Add(std::move(value));
      }
      return Status::Ok();
    };
  }

  Status ParseTopLevel(const YAML::Node& root) {
    v1::KernelSpec& spec = doc_.spec;
    v1::Launch* launch = spec.mutable_launch();
    v1::Verify* verify = spec.mutable_verify();
    v1::Objective* objective = spec.mutable_objective();
    v1::BenchmarkSettings* benchmark = spec.mutable_benchmark();
    v1::Target* target = spec.mutable_target();
    v1::Search* search = spec.mutable_search();
    auto nested = [this](Handlers handlers) -> Handler {
      return [this, handlers](const YAML::Node& node, const std::string& field) {
        return ParseMap(node, field, handlers);
      };
    };
    auto includes = [this](const YAML::Node& node, const std::string& field) -> Status {
      google::protobuf::RepeatedPtrField<std::string> paths;
      TF_RETURN_IF_ERROR(TextList(&paths)(node, field));
      doc_.includes.assign(paths.begin(), paths.end());
      return Status::Ok();
    };
    return ParseMap(
        root, "",
        {
            {"kernel", Text(spec.mutable_name())},
            {"language", Text(spec.mutable_language())},
            {"source", Text(spec.mutable_source())},
            {"includes", includes},
            {"entry", Text(spec.mutable_entry())},
            {"param_style", Text(spec.mutable_param_style())},
            {"params", [this](auto& node, auto& field) { return ParseParams(node, field); }},
            {"constraints", TextList(spec.mutable_constraints())},
            {"problems", [this](auto& node, auto& field) { return ParseProblems(node, field); }},
            {"scalars", TextList(spec.mutable_scalars())},
            {"buffers", [this](auto& node, auto& field) { return ParseBuffers(node, field); }},
            {"launch", nested({{"grid", TextList(launch->mutable_grid())},
                               {"block", TextList(launch->mutable_block())},
                               {"shared_mem", Text(launch->mutable_shared_mem_bytes())}})},
            {"verify", nested({{"reference", Text(verify->mutable_reference())},
                               {"rtol", Field<double>([verify](double v) { verify->set_rtol(v); })},
                               {"atol", Field<double>([verify](double v) { verify->set_atol(v); })},
                               {"grid", TextList(verify->mutable_grid())},
                               {"block", TextList(verify->mutable_block())}})},
            {"objective", nested({{"minimize", Text(objective->mutable_minimize())},
                                  {"flops", Text(objective->mutable_flops())}})},
            {"benchmark",
             nested({
                 {"warmup_ms", Field<double>([=](double v) { benchmark->set_warmup_ms(v); })},
                 {"min_time_ms", Field<double>([=](double v) { benchmark->set_min_time_ms(v); })},
                 {"min_repeats", Field<int32_t>([=](int32_t v) { benchmark->set_min_repeats(v); })},
                 {"max_repeats", Field<int32_t>([=](int32_t v) { benchmark->set_max_repeats(v); })},
                 {"flush_l2", Field<bool>([=](bool v) { benchmark->set_flush_l2(v); })},
                 {"timeout_s", Field<double>([=](double v) { benchmark->set_timeout_s(v); })},
                 {"rest", Field<double>([=](double v) { benchmark->set_rest(v); })},
             })},
            {"target", nested({{"vendor", Text(target->mutable_vendor())},
                               {"arch", Text(target->mutable_arch())},
                               {"device_class", Text(target->mutable_device_class())},
                               {"label", Text(target->mutable_label())},
                               {"compile_on", Text(target->mutable_compile_on())}})},
            {"search",
             nested({{"strategy", Text(search->mutable_strategy())},
                     {"max_candidates",
                      Budget<int64_t>("at least 1 evaluation per problem", "for no limit",
                                      [=](int64_t v) { search->set_max_candidates(v); })},
                     {"seed", Field<uint64_t>([=](uint64_t v) { search->set_seed(v); })},
                     {"max_seconds", Budget<double>("a number of seconds above 0", "for no limit",
                                                    [=](double v) { search->set_max_seconds(v); })},
                     {"patience", Budget<int64_t>("at least 1 evaluation", "never to stop for it",
                                                  [=](int64_t v) { search->set_patience(v); })},
                     {"min_improvement_percent",
                      Field<double>([=](double v) { search->set_min_improvement_percent(v); })},
                     {"early_stop", Field<double>([=](double v) { search->set_early_stop(v); })},
                     {"finalists", Field<int32_t>([=](int32_t v) { search->set_finalists(v); })}})},
            {"compile_options", TextList(spec.mutable_compile_options())},
            {"forbid_spills", Field<bool>([s = &spec](bool v) { s->set_forbid_spills(v); })},
            {"forbid_performance_warnings",
             Field<bool>([s = &spec](bool v) { s->set_forbid_performance_warnings(v); })},
            {"tensor_maps",
             [this](auto& node, auto& field) { return ParseTensorMaps(node, field); }},
        });
  }

  // NAME: [values] or NAME: {from, to, step} or NAME: {from, to, times}.
  Status ParseParams(const YAML::Node& node, const std::string& field) {
    if (!node.IsMap()) return Error(node, field, "expected a map of NAME: values");
    for (const auto& entry : node) {
      v1::Param* param = doc_.spec.add_params();
      param->set_name(entry.first.Scalar());
      std::string path = field + "." + param->name();
      const YAML::Node& value = entry.second;
      if (value.IsSequence()) {
        for (const YAML::Node& item : value) {
          if (!item.IsScalar()) return Error(item, path, "expected a number or a string");
          // A quoted "64" stays a string, as YAML says.
          int64_t i;
          bool plain = item.Tag() != "!";
          if (plain && YAML::convert<int64_t>::decode(item, i)) {
            *param->add_values() = IntValue(i);
          } else if (plain && IsDecimalInteger(item.Scalar())) {
            // Not a string that happens to be digits: quote it to mean one.
            return Error(item, path, OutOfRange<int64_t>(item.Scalar()));
          } else if (plain && IsFiniteDecimal(item.Scalar())) {
            // As a string it compares with no integer: each constraint that
            // did would drop its configurations without a word.
            return Error(item, path,
                         item.Scalar() +
                             " is not an integer: a value is an integer or a string "
                             "(quoted, \"" +
                             item.Scalar() + "\", to mean the text)");
          } else {
            *param->add_values() = StrValue(item.Scalar());
          }
        }
      } else if (value.IsMap()) {
        TF_RETURN_IF_ERROR(ParseRange(value, path, param->mutable_range()));
      } else {
        return Error(value, path, "expected a list of values or a range {from, to, step}");
      }
    }
    return Status::Ok();
  }

  Status ParseRange(const YAML::Node& node, const std::string& path, v1::Range* range) {
    range->set_step(1);
    TF_RETURN_IF_ERROR(
        ParseMap(node, path,
                 {{"from", Field<int64_t>([range](int64_t v) { range->set_start(v); })},
                  {"to", Field<int64_t>([range](int64_t v) { range->set_stop(v); })},
                  {"step", Field<int64_t>([range](int64_t v) { range->set_step(v); })},
                  {"times", Field<int64_t>([range](int64_t v) { range->set_factor(v); })}}));
    if (!given_.count(path + ".from") || !given_.count(path + ".to")) {
      return Error(node, path, "a range needs both 'from' and 'to'");
    }
    if (given_.count(path + ".step") && given_.count(path + ".times")) {
      return Error(node, path, "a range has either 'step' or 'times', not both");
    }
    // times: 0 would read as no factor, a range by steps of 1.
    if (given_.count(path + ".times") && range->factor() < 2) {
      return Error(node, path, "range times must be > 1, got " + std::to_string(range->factor()));
    }
    if (range->factor() != 0) range->set_step(0);
    return Status::Ok();
  }

  // A list of {NAME: integer} maps.
  Status ParseProblems(const YAML::Node& node, const std::string& field) {
    if (!node.IsSequence()) return Error(node, field, "expected a list of {NAME: value} maps");
    for (size_t k = 0; k < node.size(); ++k) {
      std::string path = field + "[" + std::to_string(k) + "]";
      const YAML::Node& item = node[k];
      if (!item.IsMap()) return Error(item, path, "expected a map of NAME: integer");
      v1::Problem* problem = doc_.spec.add_problems();
      for (const auto& entry : item) {
        v1::ProblemVar* var = problem->add_vars();
        var->set_name(entry.first.Scalar());
        int64_t value;
        TF_RETURN_IF_ERROR(Decode(entry.second, path + "." + var->name(), &value));
        var->set_value(value);
      }
    }
    return Status::Ok();
  }

  // A list of {buffer, dims, box, swizzle}.
  Status ParseTensorMaps(const YAML::Node& node, const std::string& field) {
    if (!node.IsSequence())
      return Error(node, field, "expected a list of {buffer, dims, box} maps");
    for (size_t k = 0; k < node.size(); ++k) {
      v1::TensorMap* map = doc_.spec.add_tensor_maps();
      TF_RETURN_IF_ERROR(
          ParseMap(node[k], field + "[" + std::to_string(k) + "]",
                   {{"buffer", Text(map->mutable_buffer())},
                    {"dims", TextList(map->mutable_dims())},
                    {"box", TextList(map->mutable_box())},
                    {"swizzle", Field<int32_t>([map](int32_t v) { map->set_swizzle_bytes(v); })}}));
    }
    return Status::Ok();
  }

  // NAME: {dtype, count, init, output, memory, min, max}.
  Status ParseBuffers(const YAML::Node& node, const std::string& field) {
    if (!node.IsMap()) return Error(node, field, "expected a map of NAME: {dtype, count, ...}");
    for (const auto& entry : node) {
      v1::Buffer* buffer = doc_.spec.add_buffers();
      buffer->set_name(entry.first.Scalar());
      TF_RETURN_IF_ERROR(
          ParseMap(entry.second, field + "." + buffer->name(),
                   {{"dtype", Text(buffer->mutable_dtype())},
                    {"count", Text(buffer->mutable_count())},
                    {"init", Text(buffer->mutable_init())},
                    {"output", Field<bool>([buffer](bool v) { buffer->set_output(v); })},
                    {"memory", Text(buffer->mutable_memory())},
                    {"min", Field<double>([buffer](double v) { buffer->set_random_min(v); })},
                    {"max", Field<double>([buffer](double v) { buffer->set_random_max(v); })}}));
    }
    return Status::Ok();
  }

  std::string file_name_;
  Document doc_;
  std::set<std::string> given_;
};

}  // namespace

Result<v1::KernelSpec> ParseSpecYaml(std::string_view yaml, std::string_view file_name) {
  TF_ASSIGN_OR_RETURN(Document doc, SpecParser(file_name).Parse(yaml));
  return std::move(doc.spec);
}

Result<LoadedSpec> LoadSpecFile(const std::string& path) {
  TF_ASSIGN_OR_RETURN(std::string yaml, ReadFile(path));
  return LoadSpec(yaml, path, std::filesystem::path(path).parent_path().string());
}

Result<LoadedSpec> LoadSpec(std::string_view yaml, const std::string& name,
                            const std::string& folder) {
  TF_ASSIGN_OR_RETURN(Document doc, SpecParser(name).Parse(yaml));
  LoadedSpec loaded{std::move(doc.spec), {}, name, std::move(doc.field_lines)};
  std::vector<std::string> files = {loaded.spec.source()};
  files.insert(files.end(), doc.includes.begin(), doc.includes.end());
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& file = files[i];
    const std::string field = i == 0 ? "source" : "includes[" + std::to_string(i - 1) + "]";
    if (!IsSafeRelativePath(file)) {
      return Status::InvalidArgument(LocateErrors(
          loaded, field + ": '" + file + "' must be a relative path inside the spec's folder"));
    }
    auto content = ReadFile((std::filesystem::path(folder) / file).string());
    if (!content.ok()) {
      return Status::InvalidArgument(
          LocateErrors(loaded, field + ": " + content.status().message()));
    }
    v1::SourceFile& source = loaded.sources.emplace_back();
    source.set_path(file);
    source.set_content(std::move(content).value());
  }
  return loaded;
}

std::string LocateErrors(const LoadedSpec& loaded, std::string_view errors) {
  std::string located;
  while (!errors.empty()) {
    const size_t end = errors.find('\n');
    const std::string_view line = errors.substr(0, end);
    errors = end == std::string_view::npos ? "" : errors.substr(end + 1);
    std::string where = loaded.path;
    const size_t colon = line.find(": ");
    std::string field(line.substr(0, colon == std::string_view::npos ? 0 : colon));
    while (!field.empty()) {
      if (auto it = loaded.field_lines.find(field); it != loaded.field_lines.end()) {
        where += ":" + std::to_string(it->second);
        break;
      }
      // A field the file leaves to its default: the one around it.
      const size_t cut = field.find_last_of(".[");
      field.resize(cut == std::string::npos ? 0 : cut);
    }
    located += (located.empty() ? "" : "\n") + where + ": " + std::string(line);
  }
  return located;
}

}  // namespace tf::kernelspec
