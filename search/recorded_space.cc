#include "search/recorded_space.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

namespace tf::search {

namespace {

using Json = nlohmann::ordered_json;

// gzread passes uncompressed files through unchanged.
Result<std::string> ReadMaybeGzipped(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) return Status::NotFound(path + ": cannot open: " + std::strerror(errno));
  std::string text;
  char buffer[1 << 16];
  int n;
  while ((n = gzread(file, buffer, sizeof buffer)) > 0) text.append(buffer, n);
  int error = 0;
  const char* message = gzerror(file, &error);
  std::string reason = message ? message : "";
  gzclose(file);
  // zlib's messages begin with the path.
  if (n < 0)
    return Status::InvalidArgument(reason.rfind(path, 0) == 0 ? reason : path + ": " + reason);
  // zlib's word for a gzip stream that stops in the middle.
  if (error == Z_BUF_ERROR) return Status::InvalidArgument(path + ": the gzip data ends early");
  return text;
}

// Python's json module writes NaN, Infinity and -Infinity, which JSON has no
// words for (Kernel Tuner's caches hold them, e.g. as a failed run's GFLOP/s):
// outside strings they are read as null.
std::string NonFiniteToNull(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (std::string_view word : {"NaN", "Infinity", "-Infinity"}) {
      if (text.compare(i, word.size(), word) == 0) {
        out += "null";
        i += word.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

// A parsed file. The entries of a Kernel Tuner cache's `cache` object, one
// member per configuration and often 10^5 or more, are taken out of the
// document as they are parsed, in file order: an ordered_json object finds
// each new member's place by a linear search (161,376 entries took 25 s).
// Only files that mention "cache" are parsed so: nlohmann's callback parser
// scans an array for discarded values after each of its objects, which made a
// T4 file of 161,376 results take 10 s instead of 2.4.
struct ParsedFile {
  Json json;  // `cache`, where present, left empty
  std::vector<std::pair<std::string, Json>> cache_entries;
};

Result<ParsedFile> ParseJson(const std::string& path, std::string text) {
  ParsedFile file;
  std::unordered_map<std::string, size_t> entry_of_key;
  std::string top_key, entry_key;
  auto take_cache_entries = [&](int depth, nlohmann::detail::parse_event_t event, Json& parsed) {
    using Event = nlohmann::detail::parse_event_t;
    if (depth == 1 && event == Event::key) top_key = parsed.get<std::string>();
    if (depth != 2 || top_key != "cache") return true;
    if (event == Event::key) {
      entry_key = parsed.get<std::string>();
      return true;
    }
    if (event != Event::value && event != Event::object_end && event != Event::array_end) {
      return true;
    }
    // A key written twice keeps its first place and its last value, as a JSON object does.
    auto [at, added] = entry_of_key.emplace(entry_key, file.cache_entries.size());
    if (added) {
      file.cache_entries.emplace_back(entry_key, std::move(parsed));
    } else {
      file.cache_entries[at->second].second = std::move(parsed);
    }
    return false;
  };
  const bool has_cache = text.find("\"cache\"") != std::string::npos;
  auto parse = [&](const std::string& candidate) {
    file.cache_entries.clear();
    entry_of_key.clear();
    top_key.clear();
    file.json = Json::parse(candidate, has_cache ? take_cache_entries : Json::parser_callback_t(),
                            /*allow_exceptions=*/false);
    return !file.json.is_discarded();
  };
  if (parse(text)) return file;
  text = NonFiniteToNull(text);
  if (parse(text)) return file;
  // Kernel Tuner appends cache entries as it tunes and closes the braces at the
  // end; a run that stopped early leaves "...}," with both closings missing.
  while (!text.empty() &&
         (std::isspace(static_cast<unsigned char>(text.back())) || text.back() == ',')) {
    text.pop_back();
  }
  if (parse(text + "}}")) return file;
  return Status::InvalidArgument(path + ": not valid JSON");
}

Value ValueOf(const Json& j) {
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_number()) return j.get<double>();
  if (j.is_boolean()) return std::string(j.get<bool>() ? "True" : "False");
  if (j.is_string()) return j.get<std::string>();
  return j.dump();
}

bool SameValue(const Value& a, const Value& b) {
  auto number = [](const Value& v, double* out) {
    if (const auto* i = std::get_if<int64_t>(&v)) return *out = double(*i), true;
    if (const auto* d = std::get_if<double>(&v)) return *out = *d, true;
    return false;
  };
  double x, y;
  if (number(a, &x) && number(b, &y)) return x == y;
  return a == b;
}

// The member `key` of an object, or null when it has none.
const Json* Field(const Json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

double NumberOr(const Json& object, const char* key, double fallback) {
  const Json* field = Field(object, key);
  return field && field->is_number() ? field->get<double>() : fallback;
}

std::string StringOr(const Json& object, const char* key, std::string fallback) {
  const Json* field = Field(object, key);
  return field && field->is_string() ? field->get<std::string>() : fallback;
}

// A number, or one written as text ("3.87": T4 allows string values, and some converters write
// every value so); nullopt otherwise.
std::optional<double> NumberIn(const Json& value) {
  if (value.is_number()) return value.get<double>();
  if (!value.is_string()) return std::nullopt;
  const std::string& text = value.get_ref<const std::string&>();
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) return std::nullopt;
  return number;
}

// A number, or the mean of an array of numbers (a measurement of each run); NaN otherwise.
double MeanOfNumbers(const Json& value) {
  if (!value.is_array()) return NumberIn(value).value_or(NAN);
  if (value.empty()) return NAN;
  double sum = 0;
  for (const Json& v : value) {
    std::optional<double> number = NumberIn(v);
    if (!number) return NAN;
    sum += *number;
  }
  return sum / value.size();
}

// Whether an objective that is no time is better higher: a rate (GFLOP/s, GB/s) or an efficiency
// (GFLOPS/W). Kernel Tuner's files record no direction; its users tune such objectives with
// objective_higher_is_better.
bool HigherIsBetter(const std::string& name, const std::string& unit) {
  std::string text = name + " " + unit;
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  for (const char* word : {"/s", "flop", "/w", "throughput", "bandwidth"}) {
    if (text.find(word) != std::string::npos) return true;
  }
  return false;
}

// Kernel Tuner before the failure strings wrote every failure as this time.
constexpr double kCacheErrorTime = 1e20;

Outcome OutcomeOfCacheString(const std::string& s) {
  if (s == "CompilationFailedConfig") return Outcome::kCompileFailed;
  if (s == "RuntimeFailedConfig") return Outcome::kRuntimeFailed;
  return Outcome::kInvalid;
}

Outcome OutcomeOfInvalidity(const std::string& s) {
  if (s == "correct") return Outcome::kOk;
  if (s == "compile") return Outcome::kCompileFailed;
  if (s == "runtime") return Outcome::kRuntimeFailed;
  if (s == "correctness") return Outcome::kWrongResult;
  if (s == "timeout") return Outcome::kTimeout;
  return Outcome::kInvalid;
}

// Finds each configuration's value among its parameter's values. A categorical parameter's
// values may mix numbers and strings (0 and "auto"): T4 values are compared as text.
Status IndexConfig(const std::string& where, const Json& config,
                   const std::vector<Parameter>& params, std::vector<uint32_t>* indices) {
  if (!config.is_object()) return Status::InvalidArgument(where + ": not an object");
  for (const Parameter& p : params) {
    auto it = config.find(p.name);
    if (it == config.end()) return Status::InvalidArgument(where + ": no value for " + p.name);
    Value value = ValueOf(*it);
    auto found = std::find_if(p.values.begin(), p.values.end(), [&](const Value& v) {
      return SameValue(v, value) || (!p.ordinal() && ValueText(v) == ValueText(value));
    });
    if (found == p.values.end()) {
      return Status::InvalidArgument(where + ": " + p.name + "=" + ValueText(value) +
                                     " is not among its values");
    }
    indices->push_back(static_cast<uint32_t>(found - p.values.begin()));
  }
  return Status::Ok();
}

Status ReadCache(const std::string& path, const ParsedFile& file, RecordedSpace* out) {
  const Json& json = file.json;
  const Json* keys = Field(json, "tune_params_keys");
  const Json* tune_params = Field(json, "tune_params");
  if (!keys || !keys->is_array() || !tune_params || !tune_params->is_object()) {
    return Status::InvalidArgument(path + ": tune_params_keys and tune_params are required");
  }
  std::vector<Parameter> params;
  for (const Json& key : *keys) {
    if (!key.is_string()) return Status::InvalidArgument(path + ": tune_params_keys not strings");
    Parameter& p = params.emplace_back();
    p.name = key.get<std::string>();
    const Json* values = Field(*tune_params, p.name.c_str());
    if (!values || !values->is_array()) {
      return Status::InvalidArgument(path + ": tune_params has no list for " + p.name);
    }
    for (const Json& v : *values) p.values.push_back(ValueOf(v));
  }
  out->format = "kerneltuner-cache";
  out->device = StringOr(json, "device_name", "");
  out->kernel = StringOr(json, "kernel_name", "");
  const std::string objective = StringOr(json, "objective", "time");
  const Json* cache = Field(json, "cache");
  if (!cache || !cache->is_object()) {
    return Status::InvalidArgument(path + ": cache is not an object");
  }
  std::vector<uint32_t> indices;
  indices.reserve(file.cache_entries.size() * params.size());
  for (const auto& [key, entry] : file.cache_entries) {
    std::string where = path + ": cache entry \"" + key + "\"";
    TF_RETURN_IF_ERROR(IndexConfig(where, entry, params, &indices));
    RecordedResult& r = out->results.emplace_back();
    // Kernel Tuner writes a failure into the objective's field, so with an objective such as
    // GFLOP/s an entry may have no time: then the objective is read, a rate as its inverse.
    const Json* time = Field(entry, "time");
    bool inverse = false;
    if (!time && objective != "time") {
      time = Field(entry, objective.c_str());
      inverse = HigherIsBetter(objective, "");
    }
    std::optional<double> number = time ? NumberIn(*time) : std::nullopt;
    if (number && inverse) number = 1 / *number;
    if (number && *number > 0 && *number < kCacheErrorTime) {
      r.time_ms = *number;
    } else if (time && time->is_string() && !number) {
      r.outcome = OutcomeOfCacheString(time->get<std::string>());
    } else if (number || (time && time->is_null())) {
      r.outcome = Outcome::kInvalid;  // the error value, NaN or infinite: a failure of no kind
    } else {
      return Status::InvalidArgument(where + ": time is neither a number nor a failure" +
                                     (objective == "time" ? "" : ", nor is " + objective));
    }
    r.compile_ms = NumberOr(entry, "compile_time", -1);
    r.benchmark_ms = NumberOr(entry, "benchmark_time", -1);
    if (const Json* times = Field(entry, "times"); times && times->is_array()) {
      for (const Json& t : *times) {
        if (t.is_number()) r.runtimes_ms.push_back(t.get<double>());
      }
    }
  }
  TF_ASSIGN_OR_RETURN(out->space, Space::Create(std::move(params), std::move(indices)));
  return Status::Ok();
}

// T4 files do not list the parameters or their values; they are those recorded, the parameters
// in the order they first appear.
std::vector<Parameter> ParamsOfResults(const Json& results, const std::vector<size_t>& which) {
  std::vector<Parameter> params;
  for (size_t i : which) {
    const Json* config = Field(results[i], "configuration");
    if (!config || !config->is_object()) continue;  // reported by ReadT4
    for (const auto& item : config->items()) {
      const std::string& name = item.key();  // clang 14 captures no structured binding
      if (std::none_of(params.begin(), params.end(),
                       [&](const Parameter& p) { return p.name == name; })) {
        params.push_back({name, {}});
      }
    }
    for (Parameter& p : params) {
      auto it = config->find(p.name);
      if (it == config->end()) continue;  // reported by IndexConfig
      Value value = ValueOf(*it);
      if (std::none_of(p.values.begin(), p.values.end(),
                       [&](const Value& v) { return SameValue(v, value); })) {
        p.values.push_back(std::move(value));
      }
    }
  }
  for (Parameter& p : params) {
    if (p.ordinal()) {
      auto number = [](const Value& v) {
        const auto* i = std::get_if<int64_t>(&v);
        return i ? double(*i) : std::get<double>(v);
      };
      std::sort(p.values.begin(), p.values.end(),
                [&](const Value& a, const Value& b) { return number(a) < number(b); });
    } else {
      for (Value& v : p.values) v = ValueText(v);  // one kind per categorical parameter
      std::sort(p.values.begin(), p.values.end());
    }
  }
  return params;
}

// Milliseconds per `unit`, as T4 files write units; nullopt for what is no unit of time.
std::optional<double> MillisecondsPer(const std::string& unit) {
  static const std::map<std::string, double> kUnits = {
      {"s", 1e3},     {"sec", 1e3},        {"seconds", 1e3},      {"ms", 1},
      {"msec", 1},    {"milliseconds", 1}, {"miliseconds", 1},    {"us", 1e-3},
      {"usec", 1e-3}, {"\u00b5s", 1e-3},   {"\u03bcs", 1e-3},     {"microseconds", 1e-3},
      {"ns", 1e-6},   {"nsec", 1e-6},      {"nanoseconds", 1e-6},
  };
  auto it = kUnits.find(unit);
  if (it == kUnits.end()) return std::nullopt;
  return it->second;
}

// A problem object's text as kernelspec::ProblemText writes it ("M=1024,N=1024").
std::string ProblemTextOf(const Json& problem) {
  std::string text;
  for (const auto& [name, value] : problem.items()) {
    text += (text.empty() ? "" : ",") + name + "=" + value.dump();
  }
  return text;
}

// The results of each problem of a T4 file: TuneFleet's exports name one on each result (an
// export of a job has several), other files none (then the file's `problem`, if it names one).
Result<std::vector<std::pair<std::string, std::vector<size_t>>>> T4Problems(
    const std::string& path, const Json& results, const std::string& file_problem) {
  std::vector<std::pair<std::string, std::vector<size_t>>> problems;
  size_t unnamed = results.size();  // the first result that names no problem
  for (size_t i = 0; i < results.size(); ++i) {
    std::string problem = file_problem;
    if (const Json* named = Field(results[i], "problem"); named && named->is_object()) {
      problem = ProblemTextOf(*named);
      if (!file_problem.empty() && problem != file_problem) {
        return Status::InvalidArgument(path + ": its problem is " + file_problem + ", results[" +
                                       std::to_string(i) + "]'s " + problem);
      }
    } else if (unnamed == results.size()) {
      unnamed = i;
    }
    auto same = std::find_if(problems.begin(), problems.end(),
                             [&](const auto& p) { return p.first == problem; });
    if (same == problems.end()) same = problems.insert(problems.end(), {problem, {}});
    same->second.push_back(i);
  }
  if (problems.size() > 1 && unnamed < results.size()) {
    return Status::InvalidArgument(path + ": results[" + std::to_string(unnamed) +
                                   "] names no problem, other results do");
  }
  return problems;
}

// Reads the results `which` of a T4 file, all of `out->problem`.
Status ReadT4(const std::string& path, const Json& json, const std::vector<size_t>& which,
              RecordedSpace* out) {
  const Json& results = *Field(json, "results");
  out->format = "t4";
  // Times are in the file's unit (metadata.timeunit) unless a measurement names its own; where
  // the file names none, `times` are in the unit of the time measured, else milliseconds.
  std::optional<double> file_ms;
  if (const Json* metadata = Field(json, "metadata"); metadata && Field(*metadata, "timeunit")) {
    const std::string unit = StringOr(*metadata, "timeunit", "ms");
    std::optional<double> per = MillisecondsPer(unit);
    if (!per)
      return Status::InvalidArgument(path + ": metadata.timeunit " + unit + " is no unit of time");
    file_ms = *per;
  }
  // A measurement is a time in milliseconds when its unit is one of time, or it names none and
  // the measurement is named time.
  auto milliseconds = [&](const Json& measurement) -> std::optional<double> {
    const std::string unit = StringOr(measurement, "unit", "");
    std::optional<double> per = unit.empty() ? std::nullopt : MillisecondsPer(unit);
    if (unit.empty() && StringOr(measurement, "name", "").rfind("time", 0) == 0) {
      per = file_ms.value_or(1);
    }
    return per;
  };
  std::vector<Parameter> params = ParamsOfResults(results, which);
  std::vector<uint32_t> indices;
  indices.reserve(which.size() * params.size());
  for (size_t i : which) {
    const Json& result = results[i];
    std::string where = path + ": results[" + std::to_string(i) + "]";
    const Json* config = Field(result, "configuration");
    if (!config) return Status::InvalidArgument(where + ": no configuration");
    TF_RETURN_IF_ERROR(IndexConfig(where, *config, params, &indices));
    RecordedResult& r = out->results.emplace_back();
    const Json* invalidity = Field(result, "invalidity");
    if (!invalidity || !invalidity->is_string()) {
      return Status::InvalidArgument(where + ": no invalidity");
    }
    r.outcome = OutcomeOfInvalidity(invalidity->get<std::string>());
    // The first objective where it is a time (lower is better), else the measurement named
    // time: an objective such as GFLOP/s is not minimized. Without a time, a rate objective is
    // read as its inverse (Kernel Tuner's conversion of a cache writes the objective alone).
    std::string objective = "time";
    if (const Json* o = Field(result, "objectives");
        o && o->is_array() && !o->empty() && (*o)[0].is_string()) {
      objective = (*o)[0].get<std::string>();
    }
    const Json* measured = nullptr;
    const Json* rate = nullptr;
    std::string not_a_time;  // a measurement of the wanted names whose unit is none of time
    const Json* measurements = Field(result, "measurements");
    if (measurements && !measurements->is_array()) measurements = nullptr;
    if (measurements) {
      for (const std::string& name : {objective, std::string("time")}) {
        for (const Json& measurement : *measurements) {
          if (measured || StringOr(measurement, "name", "") != name) continue;
          const std::string unit = StringOr(measurement, "unit", "");
          if (milliseconds(measurement)) {
            measured = &measurement;
          } else if (name == objective && HigherIsBetter(name, unit)) {
            rate = &measurement;
          } else if (not_a_time.empty()) {
            not_a_time = name + " is in \"" + unit + "\"";
          }
        }
      }
    }
    const std::optional<double> measured_ms = measured ? milliseconds(*measured) : std::nullopt;
    if (r.outcome == Outcome::kOk) {
      const Json* value = measured ? Field(*measured, "value")
                          : rate   ? Field(*rate, "value")
                                   : nullptr;
      if (!value) {
        return Status::InvalidArgument(
            where + ": correct, but no number for objective " + objective +
            " and no time measured" +
            (not_a_time.empty() ? "" : " (" + not_a_time + ", no unit of time)"));
      }
      r.time_ms = measured ? MeanOfNumbers(*value) * *measured_ms : 1 / MeanOfNumbers(*value);
      // NaN (read as null), 0 or below: a failure of no kind, as in a Kernel Tuner cache.
      if (!(r.time_ms > 0) || !std::isfinite(r.time_ms)) r.outcome = Outcome::kInvalid;
    }
    if (r.outcome == Outcome::kOk && measured) {
      // The spread of the runs where the file keeps statistics rather than each run (TuneFleet
      // writes time_p10, time_p90 and time_min beside time): without it an import reads p10 and
      // p90 as the median.
      const std::string name = StringOr(*measured, "name", "");
      for (auto [suffix, field] : {std::pair{"_p10", &r.p10_ms}, std::pair{"_p90", &r.p90_ms},
                                   std::pair{"_min", &r.min_ms}}) {
        for (const Json& measurement : *measurements) {
          if (StringOr(measurement, "name", "") != name + suffix) continue;
          const std::optional<double> ms = milliseconds(measurement);
          const Json* value = Field(measurement, "value");
          const double v = ms && value ? MeanOfNumbers(*value) * *ms : -1;
          if (v > 0 && std::isfinite(v)) *field = v;
        }
      }
    }
    if (const Json* times = Field(result, "times"); times && times->is_object()) {
      const double times_ms = file_ms.value_or(measured_ms.value_or(1));
      r.compile_ms = NumberOr(*times, "compilation", NumberOr(*times, "compilation_time", -1));
      if (r.compile_ms > 0) r.compile_ms *= times_ms;
      if (const Json* runs = Field(*times, "runtimes"); runs && runs->is_array()) {
        double total = 0;
        for (const Json& t : *runs) {
          if (!t.is_number()) continue;
          r.runtimes_ms.push_back(t.get<double>() * times_ms);
          total += r.runtimes_ms.back();
        }
        if (!r.runtimes_ms.empty()) r.benchmark_ms = total;
      }
    }
  }
  TF_ASSIGN_OR_RETURN(out->space, Space::Create(std::move(params), std::move(indices)));
  return Status::Ok();
}

}  // namespace

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return "ok";
    case Outcome::kCompileFailed:
      return "compile_failed";
    case Outcome::kRuntimeFailed:
      return "runtime_failed";
    case Outcome::kWrongResult:
      return "wrong_result";
    case Outcome::kTimeout:
      return "timeout";
    case Outcome::kInvalid:
      return "invalid";
  }
  return "unknown";
}

Result<std::vector<RecordedSpace>> ReadRecordedSpaces(const std::string& path) {
  TF_ASSIGN_OR_RETURN(std::string text, ReadMaybeGzipped(path));
  TF_ASSIGN_OR_RETURN(ParsedFile file, ParseJson(path, std::move(text)));
  const Json& json = file.json;
  const std::string file_problem = StringOr(json, "problem", "");
  std::vector<RecordedSpace> out;
  auto recording_of = [&](const std::string& problem) -> RecordedSpace& {
    RecordedSpace& r = out.emplace_back();
    r.path = path;
    r.problem = problem;
    return r;
  };
  Status status;
  if (json.is_object() && json.contains("cache")) {
    status = ReadCache(path, file, &recording_of(file_problem));
  } else if (json.is_object() && json.contains("results")) {
    const Json* results = Field(json, "results");
    if (!results->is_array() || results->empty() || !Field((*results)[0], "configuration") ||
        !Field((*results)[0], "configuration")->is_object()) {
      return Status::InvalidArgument(path + ": results holds no configurations");
    }
    TF_ASSIGN_OR_RETURN(auto problems, T4Problems(path, *results, file_problem));
    for (const auto& [problem, which] : problems) {
      status = ReadT4(path, json, which, &recording_of(problem));
      if (!status.ok()) break;
    }
  } else if (StringOr(json, "format", "").rfind("tunefleet-best-configs/", 0) == 0) {
    // Not read as results: it holds one configuration per problem and device class, which
    // imported would stand as a space of one, without the failures and times of the others.
    return Status::InvalidArgument(
        path +
        ": a `tunefleet export` file (the best configuration of each problem and device class, "
        "not the results of a tuning); import a job's results as `tunefleet results JOB "
        "--format t4 > FILE` writes them");
  } else {
    return Status::InvalidArgument(
        path + ": neither a Kernel Tuner cache file (cache) nor a T4 results file (results)");
  }
  if (!status.ok()) {
    // Space::Create's messages do not know the file.
    if (status.message().rfind(path, 0) != 0)
      return Status(status.code(), path + ": " + status.message());
    return status;
  }
  if (out[0].results.empty()) return Status::InvalidArgument(path + ": no configurations recorded");
  return out;
}

Result<RecordedSpace> ReadRecordedSpace(const std::string& path) {
  TF_ASSIGN_OR_RETURN(std::vector<RecordedSpace> recordings, ReadRecordedSpaces(path));
  if (recordings.size() > 1) {
    std::string listed;
    for (const RecordedSpace& r : recordings) listed += (listed.empty() ? "" : "; ") + r.problem;
    return Status::InvalidArgument(path + ": holds results of " +
                                   std::to_string(recordings.size()) + " problems (" + listed +
                                   "); one is read here: split it by each result's problem");
  }
  return std::move(recordings[0]);
}

}  // namespace tf::search
