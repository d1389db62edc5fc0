#include "kernelspec/validate.h"

#include <cctype>
#include <climits>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <tuple>

#include "common/number_text.h"
#include "kernelspec/config.h"
#include "kernelspec/expr.h"
#include "kernelspec/params.h"

namespace tf::kernelspec {

namespace {

constexpr std::string_view kInits[] = {"random", "zeros", "ones", "iota"};
constexpr std::string_view kParamStyles[] = {"template", "define"};
constexpr std::string_view kMemories[] = {"global", "constant"};
// search/strategy.h's StrategyNames(); search_driver_test checks that they agree.
constexpr std::string_view kStrategies[] = {"auto",  "exhaustive",   "random",
                                            "bayes", "evolutionary", "local"};
constexpr std::string_view kCompileOn[] = {"", "coordinator", "worker"};
constexpr size_t kMaxReportedErrors = 20;
constexpr int kMaxTensorMapRank = 5;
// search.finalists: each is timed in every round of the re-timing (runner/alternation.h).
constexpr int kMaxFinalists = 32;
struct DtypeInfo {
  std::string_view name;
  size_t size;
  // The values random inputs may take: the finite range of a float type; of an
  // integer type its range, i64's cut to the integers a double holds exactly
  // (the runner draws through doubles).
  double lowest, highest;
  bool integer;
};
constexpr DtypeInfo kDtypes[] = {
    {"f32", 4, -0x1.fffffep127, 0x1.fffffep127, false},
    {"f64", 8, -std::numeric_limits<double>::max(), std::numeric_limits<double>::max(), false},
    {"f16", 2, -65504, 65504, false},
    {"bf16", 2, -0x1.fep127, 0x1.fep127, false},
    {"i8", 1, -128, 127, true},
    {"i32", 4, -2147483648.0, 2147483647.0, true},
    {"i64", 8, -0x1p53, 0x1p53, true},
    {"u8", 1, 0, 255, true},
    {"u32", 4, 0, 4294967295.0, true},
};

// A bound of a random range as written: integers whole (4294967295, not 4.29497e+09).
std::string Bound(double value) {
  if (value == std::trunc(value) && std::fabs(value) <= 0x1p53) {
    return std::to_string(static_cast<int64_t>(value));
  }
  return NumberText(value);
}

const DtypeInfo* FindDtype(std::string_view dtype) {
  for (const DtypeInfo& info : kDtypes) {
    if (info.name == dtype) return &info;
  }
  return nullptr;
}

template <size_t N>
bool OneOf(std::string_view value, const std::string_view (&choices)[N]) {
  for (std::string_view c : choices) {
    if (c == value) return true;
  }
  return false;
}

template <size_t N>
std::string Choices(const std::string_view (&choices)[N]) {
  std::string text;
  for (std::string_view c : choices) text += (text.empty() ? "" : ", ") + std::string(c);
  return text;
}

std::string DtypeNames() {
  std::string text;
  for (const DtypeInfo& info : kDtypes) text += (text.empty() ? "" : ", ") + std::string(info.name);
  return text;
}

// Collects every error rather than stopping at the first, so one round trip
// shows the user all that is wrong.
class Validator {
 public:
  Validator(const v1::KernelSpec& spec, const std::vector<v1::SourceFile>& sources,
            const SpecLimits& limits)
      : spec_(spec), sources_(sources), limits_(limits) {}

  Status Run() {
    // Before anything else looks at it: a huge spec costs every later check.
    if (const int64_t bytes = static_cast<int64_t>(spec_.ByteSizeLong());
        bytes > limits_.max_spec_bytes) {
      return Status::InvalidArgument("spec: " + std::to_string(bytes) +
                                     " bytes, above the limit of " +
                                     std::to_string(limits_.max_spec_bytes));
    }
    CheckHeader();
    CheckParams();
    CheckProblems();
    CheckEntry();
    CheckTensorMaps();
    CheckExpressions();
    CheckBuffers();
    CheckSettings();
    CheckSearch();
    CheckSources();
    if (errors_.empty()) return Status::Ok();
    std::string message;
    for (size_t k = 0; k < errors_.size() && k < kMaxReportedErrors; ++k) {
      message += (k ? "\n" : "") + errors_[k];
    }
    if (errors_.size() > kMaxReportedErrors) {
      message += "\n(and " + std::to_string(errors_.size() - kMaxReportedErrors) + " more)";
    }
    return Status::InvalidArgument(message);
  }

 private:
  void Fail(const std::string& field, const std::string& message) {
    errors_.push_back(field + ": " + message);
  }

  void CheckHeader() {
    if (!IsIdentifier(spec_.name())) {
      Fail("kernel", "'" + spec_.name() + "' must be an identifier (letters, digits, _)");
    }
    if (spec_.language().empty()) Fail("language", "is empty");
  }

  void CheckParams() {
    if (spec_.params_size() == 0) Fail("params", "at least one parameter is needed");
    if (spec_.params_size() > limits_.max_params) {
      Fail("params", std::to_string(spec_.params_size()) + " parameters; at most " +
                         std::to_string(limits_.max_params) + " are allowed");
    }
    for (const v1::Param& param : spec_.params()) {
      std::string field = "params." + param.name();
      if (!IsIdentifier(param.name())) Fail(field, "the name must be an identifier");
      if (!params_.insert(param.name()).second) Fail(field, "defined twice");
      auto values = ParamValues(param);
      if (!values.ok()) {
        errors_.push_back(values.status().message());
        continue;
      }
      if (values->empty()) Fail(field, "has no values");
      std::set<std::string> seen;
      for (const v1::Value& value : *values) {
        if (!seen.insert(ValueText(value)).second) {
          Fail(field, "value '" + ValueText(value) + "' appears twice");
        }
      }
    }
  }

  void CheckProblems() {
    if (spec_.problems_size() == 0) Fail("problems", "at least one problem is needed");
    if (spec_.problems_size() > limits_.max_problems) {
      Fail("problems", std::to_string(spec_.problems_size()) + " problems; at most " +
                           std::to_string(limits_.max_problems) + " are allowed");
    }
    std::set<std::string> keys;
    for (int k = 0; k < spec_.problems_size(); ++k) {
      const v1::Problem& problem = spec_.problems(k);
      std::string field = "problems[" + std::to_string(k) + "]";
      std::set<std::string> names;
      for (const v1::ProblemVar& var : problem.vars()) {
        if (!IsIdentifier(var.name())) Fail(field, "'" + var.name() + "' is not an identifier");
        if (params_.count(var.name())) {
          Fail(field, "'" + var.name() + "' is both a parameter and a problem variable");
        }
        if (!names.insert(var.name()).second) Fail(field, "'" + var.name() + "' given twice");
      }
      if (k == 0) {
        problem_vars_ = names;
      } else if (names != problem_vars_) {
        Fail(field, "has variables " + Join(names) + " but problems[0] has " + Join(problem_vars_) +
                        "; all problems need the same");
      }
      if (!keys.insert(ProblemKey(problem)).second) Fail(field, "repeats an earlier problem");
    }
    std::set<std::string> scalars;
    for (const std::string& name : spec_.scalars()) {
      if (!problem_vars_.count(name)) {
        Fail("scalars", "'" + name + "' is not a problem variable");
      } else if (!scalars.insert(name).second) {
        Fail("scalars", "'" + name + "' given twice");
      }
    }
  }

  // Every {NAME} of the entry must be a parameter. Define-style entries name
  // a plain kernel: every parameter reaches it as a macro.
  void CheckEntry() {
    if (spec_.entry().empty()) Fail("entry", "is empty");
    // Empty: a client from before param_style, meaning template.
    if (!spec_.param_style().empty() && !OneOf(spec_.param_style(), kParamStyles)) {
      Fail("param_style", "'" + spec_.param_style() + "' is not one of " + Choices(kParamStyles));
      used_params_.insert(params_.begin(), params_.end());  // no other error for each of them
      return;
    }
    if (spec_.param_style() == "define") {
      if (!IsIdentifier(spec_.entry())) {
        Fail("entry", "'" + spec_.entry() +
                          "' must be the kernel's name (an identifier) when param_style is "
                          "define: the parameters are macros, not template arguments");
      }
      used_params_.insert(params_.begin(), params_.end());
      return;
    }
    std::string_view entry = spec_.entry();
    for (size_t open = entry.find('{'); open != std::string_view::npos;
         open = entry.find('{', open + 1)) {
      size_t close = entry.find('}', open);
      if (close == std::string_view::npos) {
        Fail("entry", "'{' at column " + std::to_string(open + 1) + " is not closed");
        break;
      }
      std::string name(entry.substr(open + 1, close - open - 1));
      if (!params_.count(name)) {
        Fail("entry", "{" + name + "} is not a parameter (parameters: " + Join(params_) + ")");
      }
      used_params_.insert(name);
    }
  }

  // Parses `text` and checks each name is a parameter (when allowed), a
  // problem variable, or device.* (when allowed). Returns the names it uses.
  std::vector<std::string> CheckExpression(const std::string& field, const std::string& text,
                                           bool params_allowed, bool device_allowed) {
    auto expr = Expr::Parse(text);
    if (!expr.ok()) {
      Fail(field, expr.status().message());
      return {};
    }
    for (const std::string& name : expr->variables()) {
      bool known = problem_vars_.count(name) || (params_allowed && params_.count(name)) ||
                   (device_allowed && name.starts_with("device."));
      if (known) continue;
      std::string allowed = params_allowed ? "parameters, problem variables" : "problem variables";
      if (device_allowed) allowed += " and device.*";
      Fail(field, "'" + text + "' uses '" + name + "', which is none of the " + allowed);
    }
    return expr->variables();
  }

  void CheckExpressions() {
    for (int k = 0; k < spec_.constraints_size(); ++k) {
      CheckExpression("constraints[" + std::to_string(k) + "]", spec_.constraints(k), true, true);
    }
    // How many dimensions a launch needs is the toolchain's rule
    // (compiler/grid_launch.h); none has more than three.
    const v1::Launch& launch = spec_.launch();
    const v1::Verify& verify = spec_.verify();
    for (const auto& [field, dims, params_allowed] :
         {std::tuple{"launch.grid", &launch.grid(), true},
          {"launch.block", &launch.block(), true},
          {"verify.grid", &verify.grid(), false},
          {"verify.block", &verify.block(), false}}) {
      if (dims->size() > 3) {
        Fail(field, std::to_string(dims->size()) + " dimensions; at most 3");
      }
      for (int k = 0; k < dims->size(); ++k) {
        for (const std::string& used :
             CheckExpression(std::string(field) + "[" + std::to_string(k) + "]", dims->Get(k),
                             params_allowed, params_allowed)) {
          used_params_.insert(used);
        }
      }
    }
    if (!launch.shared_mem_bytes().empty()) {
      for (const std::string& used :
           CheckExpression("launch.shared_mem", launch.shared_mem_bytes(), true, true)) {
        used_params_.insert(used);
      }
    }
    if (!spec_.objective().flops().empty()) {
      CheckExpression("objective.flops", spec_.objective().flops(), false, false);
    }
    // A parameter that reaches the kernel through neither the entry nor the
    // launch would only multiply the space by identical candidates.
    for (const std::string& param : params_) {
      if (!used_params_.count(param)) {
        Fail("params." + param,
             "is used neither in entry nor in launch, so its values would "
             "all build the same kernel");
      }
    }
  }

  void CheckBuffers() {
    bool has_output = false;
    std::set<std::string> names;
    for (const v1::Buffer& buffer : spec_.buffers()) {
      std::string field = "buffers." + buffer.name();
      has_output |= buffer.output();
      if (!IsIdentifier(buffer.name())) Fail(field, "the name must be an identifier");
      if (!names.insert(buffer.name()).second) Fail(field, "defined twice");
      size_t element_size = DtypeSize(buffer.dtype());
      if (element_size == 0) {
        Fail(field + ".dtype", "'" + buffer.dtype() + "' is not one of " + DtypeNames());
      }
      if (!buffer.memory().empty() && !OneOf(buffer.memory(), kMemories)) {
        Fail(field + ".memory", "'" + buffer.memory() + "' is not one of " + Choices(kMemories));
      } else if (buffer.memory() == "constant" && spec_.language() == "cpp") {
        Fail(field + ".memory", "constant memory is a GPU module's; a cpp kernel has none");
      }
      if (!OneOf(buffer.init(), kInits)) {
        Fail(field + ".init", "'" + buffer.init() + "' is not one of " + Choices(kInits));
      }
      CheckRandomRange(field, buffer);
      size_t errors_before = errors_.size();
      CheckExpression(field + ".count", buffer.count(), false, false);
      if (errors_.size() > errors_before || element_size == 0) continue;
      for (const v1::Problem& problem : spec_.problems()) CheckBufferSize(field, buffer, problem);
    }
    if (!has_output) Fail("buffers", "at least one buffer needs output: true");
  }

  // Random inputs are drawn uniformly from [min, max]: a range the dtype holds,
  // and for an integer dtype one with an integer in it.
  void CheckRandomRange(const std::string& field, const v1::Buffer& buffer) {
    const double min = buffer.random_min(), max = buffer.random_max();
    if (!std::isfinite(min) || !std::isfinite(max)) {
      Fail(field + "." + (std::isfinite(min) ? "max" : "min"), "must be a finite number");
      return;
    }
    if (min > max) {
      Fail(field, "min " + Bound(min) + " is above max " + Bound(max));
      return;
    }
    const DtypeInfo* dtype = FindDtype(buffer.dtype());
    if (dtype == nullptr) return;
    if (min < dtype->lowest || max > dtype->highest || !std::isfinite(max - min)) {
      Fail(field, "[" + Bound(min) + ", " + Bound(max) + "] is outside what " + buffer.dtype() +
                      " inputs may hold, [" + Bound(dtype->lowest) + ", " + Bound(dtype->highest) +
                      "]" + (std::isfinite(max - min) ? "" : " as one range"));
    } else if (dtype->integer && std::ceil(min) > std::floor(max)) {
      Fail(field, "[" + Bound(min) + ", " + Bound(max) + "] holds no integer for " +
                      buffer.dtype() + " inputs");
    }
  }

  void CheckTensorMaps() {
    for (int k = 0; k < spec_.tensor_maps_size(); ++k) {
      const v1::TensorMap& map = spec_.tensor_maps(k);
      const std::string field = "tensor_maps[" + std::to_string(k) + "]";
      const v1::Buffer* buffer = nullptr;
      for (const v1::Buffer& b : spec_.buffers()) {
        if (b.name() == map.buffer()) buffer = &b;
      }
      if (buffer == nullptr) Fail(field + ".buffer", "'" + map.buffer() + "' is not a buffer");
      if (map.dims_size() < 1 || map.dims_size() > kMaxTensorMapRank) {
        Fail(field + ".dims", "a tensor map has 1 to " + std::to_string(kMaxTensorMapRank) +
                                  " dimensions, got " + std::to_string(map.dims_size()));
      }
      if (map.box_size() != map.dims_size()) {
        Fail(field + ".box", "has " + std::to_string(map.box_size()) + " dimensions, dims has " +
                                 std::to_string(map.dims_size()));
      }
      if (map.swizzle_bytes() != 0 && map.swizzle_bytes() != 32 && map.swizzle_bytes() != 64 &&
          map.swizzle_bytes() != 128) {
        Fail(field + ".swizzle", std::to_string(map.swizzle_bytes()) + " is not 0, 32, 64 or 128");
      }
      size_t errors_before = errors_.size();
      for (int d = 0; d < map.dims_size(); ++d) {
        CheckExpression(field + ".dims[" + std::to_string(d) + "]", map.dims(d), false, false);
      }
      for (int d = 0; d < map.box_size(); ++d) {
        for (const std::string& used :
             CheckExpression(field + ".box[" + std::to_string(d) + "]", map.box(d), true, false)) {
          used_params_.insert(used);
        }
      }
      if (errors_.size() > errors_before || buffer == nullptr || DtypeSize(buffer->dtype()) == 0) {
        continue;
      }
      for (const v1::Problem& problem : spec_.problems()) {
        CheckTensorMapExtent(field, map, *buffer, problem);
      }
    }
  }

  // The copy engine reads within the buffer only if the extents fit in it,
  // and needs every row stride to be a multiple of 16 bytes.
  void CheckTensorMapExtent(const std::string& field, const v1::TensorMap& map,
                            const v1::Buffer& buffer, const v1::Problem& problem) {
    Bindings vars;
    BindProblem(problem, &vars);
    const std::string where = " for problem " + ProblemText(problem);
    auto count = EvaluateInt(buffer.count(), vars);
    if (!count.ok()) return;  // reported with the buffer
    const int64_t element_size = static_cast<int64_t>(DtypeSize(buffer.dtype()));
    int64_t elements = 1;
    for (int d = 0; d < map.dims_size(); ++d) {
      auto extent = EvaluateInt(map.dims(d), vars);
      const std::string dim_field = field + ".dims[" + std::to_string(d) + "]";
      if (!extent.ok()) return Fail(dim_field, extent.status().message() + where);
      if (*extent < 1) return Fail(dim_field, "'" + map.dims(d) + "' is below 1" + where);
      if (d == 1 && (elements * element_size) % 16 != 0) {
        return Fail(field + ".dims[0]", "rows of " + std::to_string(elements * element_size) +
                                            " bytes are not a multiple of 16" + where);
      }
      if (*extent > *count / elements) {
        return Fail(field + ".dims", "cover more than buffer '" + buffer.name() + "' holds (" +
                                         std::to_string(*count) + " elements)" + where);
      }
      elements *= *extent;
    }
  }

  void CheckBufferSize(const std::string& field, const v1::Buffer& buffer,
                       const v1::Problem& problem) {
    Bindings vars;
    BindProblem(problem, &vars);
    std::string where = " for problem " + ProblemText(problem);
    auto count = EvaluateInt(buffer.count(), vars);
    if (!count.ok()) {
      Fail(field + ".count", count.status().message() + where);
    } else if (*count <= 0) {
      Fail(field + ".count", "'" + buffer.count() + "' is " + std::to_string(*count) + where);
    } else if (*count >
               limits_.max_buffer_bytes / static_cast<int64_t>(DtypeSize(buffer.dtype()))) {
      Fail(field, std::to_string(*count) + " elements of " + buffer.dtype() + " exceed the " +
                      std::to_string(limits_.max_buffer_bytes) + "-byte buffer limit" + where);
    }
  }

  // A duration: NaN, infinity or a value past `most` would overflow the
  // clocks it is added to. `most_text` says `most` for people.
  void CheckAmount(const std::string& field, double value, bool zero_allowed, double most,
                   const std::string& most_text) {
    if ((zero_allowed ? value >= 0 : value > 0) && value <= most) return;
    Fail(field, std::string("must be ") + (zero_allowed ? ">= 0" : "> 0") + " and at most " +
                    NumberText(most) + " (" + most_text + "), got " + NumberText(value));
  }

  void CheckSettings() {
    const v1::Verify& verify = spec_.verify();
    if (!(verify.rtol() >= 0) || std::isinf(verify.rtol())) {
      Fail("verify.rtol", "must be a finite number >= 0");
    }
    if (!(verify.atol() >= 0) || std::isinf(verify.atol())) {
      Fail("verify.atol", "must be a finite number >= 0");
    }
    if (spec_.objective().minimize() != "time") {
      Fail("objective.minimize",
           "'" + spec_.objective().minimize() + "': only 'time' is supported");
    }
    const v1::BenchmarkSettings& b = spec_.benchmark();
    constexpr double kHourMs = 3'600'000, kDayS = 86'400;
    CheckAmount("benchmark.warmup_ms", b.warmup_ms(), true, kHourMs, "an hour");
    CheckAmount("benchmark.min_time_ms", b.min_time_ms(), false, kHourMs, "an hour");
    if (b.min_repeats() < 1) Fail("benchmark.min_repeats", "must be >= 1");
    if (b.max_repeats() < b.min_repeats()) {
      Fail("benchmark.max_repeats", std::to_string(b.max_repeats()) + " is below min_repeats " +
                                        std::to_string(b.min_repeats()));
    }
    CheckAmount("benchmark.timeout_s", b.timeout_s(), false, kDayS, "a day");
    if (!(b.rest() >= 0) || std::isinf(b.rest())) {
      Fail("benchmark.rest", "must be a finite number >= 0");
    }
    if (!OneOf(spec_.target().compile_on(), kCompileOn)) {
      Fail("target.compile_on",
           "'" + spec_.target().compile_on() + "' is not coordinator or worker (or empty)");
    }
  }

  void CheckSearch() {
    const v1::Search& search = spec_.search();
    if (!OneOf(search.strategy(), kStrategies)) {
      Fail("search.strategy", "'" + search.strategy() + "' is not one of " + Choices(kStrategies));
    }
    if (search.max_candidates() < 0) Fail("search.max_candidates", "must be >= 0");
    CheckAmount("search.max_seconds", search.max_seconds(), true, 366 * 86'400, "a year");
    if (search.patience() < 0) Fail("search.patience", "must be >= 0");
    if (!(search.min_improvement_percent() >= 0 && search.min_improvement_percent() < 100)) {
      Fail("search.min_improvement_percent", "must be in [0, 100)");
    }
    if (!(search.early_stop() == 0 || search.early_stop() >= 1)) {
      Fail("search.early_stop", "must be 0 (off) or a factor >= 1 of the best time");
    }
    if (search.finalists() < 0 || search.finalists() > kMaxFinalists) {
      Fail("search.finalists",
           "must be in [0, " + std::to_string(kMaxFinalists) + "] (0 or 1: no re-timing)");
    }
    // Only random sampling with a budget draws configurations without
    // enumerating the space.
    bool sampled = search.strategy() == "random" && search.max_candidates() > 0;
    uint64_t budget = static_cast<uint64_t>(std::max<int64_t>(search.max_candidates(), 0));
    if (budget > limits_.max_space_size) {
      Fail("search.max_candidates", std::to_string(budget) + " is above the limit of " +
                                        std::to_string(limits_.max_space_size));
    }
    uint64_t size = CartesianSize(spec_);
    if (!sampled && size > limits_.max_space_size) {
      Fail("params", "the space has " + std::to_string(size) +
                         " configurations, above the limit of " +
                         std::to_string(limits_.max_space_size) +
                         " (every combination of the values, constrained or not); give the "
                         "parameters fewer values, or use search.strategy random with "
                         "max_candidates");
    }
  }

  void CheckSources() {
    bool has_main = false;
    int64_t total_bytes = 0;
    std::set<std::string> paths;
    for (const v1::SourceFile& file : sources_) {
      if (!IsSafeRelativePath(file.path())) {
        Fail("sources", "'" + file.path() +
                            "' must be a relative path without empty, '.' or '..' components, "
                            "quotes, backslashes or control characters");
      }
      if (!paths.insert(file.path()).second) Fail("sources", "'" + file.path() + "' given twice");
      has_main |= file.path() == spec_.source();
      total_bytes += static_cast<int64_t>(file.content().size());
    }
    if (spec_.source().empty()) {
      Fail("source", "is empty");
    } else if (!has_main) {
      Fail("source", "'" + spec_.source() + "' is not among the files sent");
    }
    if (static_cast<int64_t>(sources_.size()) > limits_.max_source_files) {
      Fail("sources", std::to_string(sources_.size()) + " files, above the limit of " +
                          std::to_string(limits_.max_source_files));
    }
    if (total_bytes > limits_.max_source_bytes) {
      Fail("sources", std::to_string(total_bytes) + " bytes, above the limit of " +
                          std::to_string(limits_.max_source_bytes));
    }
  }

  static std::string Join(const std::set<std::string>& names) {
    std::string text;
    for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
    return text.empty() ? "(none)" : text;
  }

  const v1::KernelSpec& spec_;
  const std::vector<v1::SourceFile>& sources_;
  const SpecLimits& limits_;
  std::vector<std::string> errors_;
  std::set<std::string> params_;
  std::set<std::string> problem_vars_;
  std::set<std::string> used_params_;  // names the entry and the launch use
};

}  // namespace

size_t DtypeSize(std::string_view dtype) {
  const DtypeInfo* info = FindDtype(dtype);
  return info == nullptr ? 0 : info->size;
}

Result<int64_t> ProblemBufferBytes(const v1::KernelSpec& spec, const v1::Problem& problem) {
  Bindings vars;
  BindProblem(problem, &vars);
  int64_t total = 0;
  for (const v1::Buffer& buffer : spec.buffers()) {
    auto count = EvaluateInt(buffer.count(), vars);
    if (!count.ok())
      return Status::InvalidArgument("buffers." + buffer.name() +
                                     ".count: " + count.status().message());
    int64_t bytes = 0;
    if (__builtin_mul_overflow(*count, static_cast<int64_t>(DtypeSize(buffer.dtype())), &bytes) ||
        __builtin_add_overflow(total, bytes, &total)) {
      return std::numeric_limits<int64_t>::max();
    }
  }
  return total;
}

uint64_t CartesianSize(const v1::KernelSpec& spec) {
  uint64_t size = 1;
  for (const v1::Param& param : spec.params()) {
    if (__builtin_mul_overflow(size, ParamSize(param), &size)) {
      return std::numeric_limits<uint64_t>::max();
    }
  }
  return size;
}

bool IsSafeRelativePath(std::string_view path) {
  if (path.empty() || path.front() == '/') return false;
  for (char c : path) {
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

bool IsIdentifier(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

SpecLimits SpecLimits::None() {
  SpecLimits none;
  none.max_spec_bytes = none.max_source_bytes = none.max_buffer_bytes = INT64_MAX;
  none.max_source_files = none.max_problems = none.max_params = INT_MAX;
  none.max_space_size = UINT64_MAX;
  return none;
}

Status ValidateSpec(const v1::KernelSpec& spec, const std::vector<v1::SourceFile>& sources,
                    const SpecLimits& limits) {
  return Validator(spec, sources, limits).Run();
}

}  // namespace tf::kernelspec
