#include "kernelspec/space.h"

#include <algorithm>
#include <limits>
#include <random>
#include <set>
#include <unordered_set>

#include "kernelspec/config.h"
#include "kernelspec/params.h"
#include "kernelspec/validate.h"

namespace tf::kernelspec {

namespace {

using kernelspec::ScalarRef;

constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

// Exact uniform sampling walks every valid prefix of the constrained
// parameters; beyond this many prefixes it samples by rejection instead.
constexpr uint64_t kMaxExactSamplingPrefixes = uint64_t{1} << 24;
// Rejection sampling gives up after this many draws per wanted configuration,
// and after kMaxDraws in all: the coordinator binds a job under its lock, and a
// million wanted among rare valid configurations were a billion draws, minutes
// in which it answered nobody.
constexpr uint64_t kDrawsPerCandidate = 1000;
constexpr uint64_t kMaxDraws = uint64_t{1} << 22;

uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  uint64_t product;
  return __builtin_mul_overflow(a, b, &product) ? kSaturated : product;
}

ScalarRef RefOf(const v1::Value& value) {
  return value.kind_case() == v1::Value::kStrValue ? ScalarRef::String(value.str_value())
                                                   : ScalarRef::Int(value.int_value());
}

// Uniform in [0, n), defined by mt19937_64's standard sequence alone, so a
// seed selects the same configurations with any standard library.
uint64_t UniformBelow(std::mt19937_64& rng, uint64_t n) {
  uint64_t accept_below = kSaturated - kSaturated % n;
  uint64_t x;
  do {
    x = rng();
  } while (x >= accept_below);
  return x % n;
}

std::string JoinKeys(const auto& map) {
  std::string text;
  for (const auto& [name, value] : map) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "(none)" : text;
}

}  // namespace

class SearchSpace::Walker {
 public:
  explicit Walker(const SearchSpace& space) : space_(space) {
    slots_.resize(space.params_.size());
    slots_.insert(slots_.end(), space.constants_.begin(), space.constants_.end());
  }

  uint32_t size(int param) const {
    return static_cast<uint32_t>(space_.params_[param].values.size());
  }

  // Binds parameter `param` (those before it are bound) and checks the
  // constraints that became decidable.
  bool Bind(int param, uint32_t index) {
    slots_[param] = RefOf(space_.params_[param].values[index]);
    for (const Constraint& c : space_.checks_[param]) {
      ScalarRef result;
      if (!c.expr.EvalSlots(slots_.data(), c.slot_of_variable.data(), &result) ||
          !kernelspec::IsTrue(result)) {
        return false;
      }
    }
    return true;
  }

 private:
  const SearchSpace& space_;
  std::vector<ScalarRef> slots_;
};

Result<SearchSpace> SearchSpace::Create(const v1::KernelSpec& spec, const v1::Problem& problem,
                                        const DeviceProperties& device) {
  SearchSpace space;
  std::map<std::string, int> slot_of_name;
  for (const v1::Param& param : spec.params()) {
    TF_ASSIGN_OR_RETURN(std::vector<v1::Value> values, kernelspec::ParamValues(param));
    slot_of_name.emplace(param.name(), static_cast<int>(space.params_.size()));
    space.params_.push_back({param.name(), std::move(values)});
  }
  int num_params = static_cast<int>(space.params_.size());
  space.cartesian_size_ = kernelspec::CartesianSize(spec);

  kernelspec::Bindings constants;  // for constraints without parameters
  auto add_constant = [&](const std::string& name, int64_t value) {
    if (slot_of_name.emplace(name, num_params + space.constants_.size()).second) {
      space.constants_.push_back(ScalarRef::Int(value));
      constants[name] = value;
    }
  };
  std::string problem_vars = kernelspec::ProblemText(problem);
  for (const v1::ProblemVar& var : problem.vars()) add_constant(var.name(), var.value());

  space.checks_.resize(num_params);
  for (int c = 0; c < spec.constraints_size(); ++c) {
    const std::string& text = spec.constraints(c);
    // "constraints[c]: ...": the spec's field, which clients find the line of.
    const std::string field = "constraints[" + std::to_string(c) + "]: ";
    auto expr = kernelspec::Expr::Parse(text);
    if (!expr.ok()) return Status::InvalidArgument(field + expr.status().message());
    Constraint constraint{std::move(expr).value(), {}};
    int last_param = -1;
    for (const std::string& name : constraint.expr.variables()) {
      if (name.starts_with("device.")) {
        auto it = device.find(name.substr(7));
        if (it == device.end()) {
          return Status::InvalidArgument(
              field + "'" + text + "': device property '" + name.substr(7) +
              "' is unknown for this device; known: " + JoinKeys(device));
        }
        add_constant(name, it->second);
      }
      auto slot = slot_of_name.find(name);
      if (slot == slot_of_name.end()) {
        return Status::InvalidArgument(field + "'" + text + "': unknown variable '" + name +
                                       "'; parameters, problem variables (" + problem_vars +
                                       ") and device.* are known");
      }
      constraint.slot_of_variable.push_back(slot->second);
      if (slot->second < num_params) last_param = std::max(last_param, slot->second);
    }
    if (last_param >= 0) {
      space.checks_[last_param].push_back(std::move(constraint));
      space.constrained_depth_ = std::max(space.constrained_depth_, last_param + 1);
      continue;
    }
    // Decided by the problem and the device alone.
    auto holds = constraint.expr.Eval(constants);
    if (!holds.ok()) return Status::InvalidArgument("constraint: " + holds.status().message());
    if (!kernelspec::IsTrue(*holds)) space.empty_ = true;
  }
  return space;
}

bool SearchSpace::Walk(int depth, const std::function<bool(const uint32_t*)>& visit,
                       const std::function<bool(double walked)>* keep_going) const {
  if (empty_) return true;
  if (depth == 0) {
    visit(nullptr);
    return true;
  }
  Walker walker(*this);
  std::vector<uint32_t> index(depth, 0);
  int p = 0;
  uint32_t steps = 0;
  while (true) {
    if (index[p] == walker.size(p)) {  // this level is exhausted: back up
      if (p == 0) return true;
      ++index[--p];
      continue;
    }
    // Checked on every kind of step: a walk whose constraints reject nearly
    // everything visits nothing for a long time.
    if (keep_going && ++steps % (1u << 16) == 0) {
      double walked = 0, share = 1;
      for (int q = 0; q <= p; ++q) {
        share /= walker.size(q);
        walked += index[q] * share;
      }
      if (!(*keep_going)(walked)) return false;
    }
    if (walker.Bind(p, index[p])) {
      if (p + 1 < depth) {
        index[++p] = 0;
        continue;
      }
      if (!visit(index.data())) return true;
    }
    ++index[p];
  }
}

uint64_t SearchSpace::ProductOfSizes(int from_param, int to_param) const {
  uint64_t product = 1;
  for (int p = from_param; p < to_param; ++p) {
    product = SaturatingMul(product, params_[p].values.size());
  }
  return product;
}

uint64_t SearchSpace::CountValid() const {
  bool complete = false;
  return CountValid([](uint64_t, double) { return true; }, &complete);
}

uint64_t SearchSpace::CountValid(const KeepGoing& keep_going, bool* complete) const {
  uint64_t per_prefix = FreeProduct();
  uint64_t count = 0;
  const std::function<bool(double)> check = [&](double walked) {
    return keep_going(count, walked);
  };
  *complete = Walk(
      constrained_depth_,
      [&](const uint32_t*) {
        count = count > kSaturated - per_prefix ? kSaturated : count + per_prefix;
        return true;
      },
      &check);
  return count;
}

void SearchSpace::EnumerateIndices(
    const std::function<bool(const uint32_t* value_index)>& visit) const {
  Walk(static_cast<int>(params_.size()), visit);
}

bool SearchSpace::EnumerateIndices(const std::function<bool(const uint32_t* value_index)>& visit,
                                   const KeepGoing& keep_going) const {
  uint64_t found = 0;
  const std::function<bool(double)> check = [&](double walked) {
    return keep_going(found, walked);
  };
  return Walk(
      static_cast<int>(params_.size()),
      [&](const uint32_t* index) {
        ++found;
        return visit(index);
      },
      &check);
}

v1::Config SearchSpace::MakeConfig(const uint32_t* value_index) const {
  v1::Config config;
  for (size_t p = 0; p < params_.size(); ++p) {
    v1::ParamSetting* setting = config.add_settings();
    setting->set_name(params_[p].name);
    *setting->mutable_value() = params_[p].values[value_index[p]];
  }
  return config;
}

void SearchSpace::Enumerate(const std::function<bool(const v1::Config&)>& visit) const {
  v1::Config config;  // names set once; only values change per configuration
  bool started = false;
  EnumerateIndices([&](const uint32_t* index) {
    if (!started) {
      config = MakeConfig(index);
      started = true;
    } else {
      for (size_t p = 0; p < params_.size(); ++p) {
        *config.mutable_settings(p)->mutable_value() = params_[p].values[index[p]];
      }
    }
    return visit(config);
  });
}

Result<std::vector<v1::Config>> SearchSpace::Select(const v1::Search& search,
                                                    uint64_t limit) const {
  uint64_t max_candidates = static_cast<uint64_t>(std::max<int64_t>(search.max_candidates(), 0));
  if (search.strategy() == "random" && max_candidates > 0) {
    uint64_t count = std::min(max_candidates, limit);
    if (cartesian_size_ != kSaturated &&
        ProductOfSizes(0, constrained_depth_) <= kMaxExactSamplingPrefixes) {
      return SampleExact(count, search.seed());
    }
    return SampleByRejection(count, search.seed());
  }
  uint64_t valid = CountValid();
  if (valid > limit) {
    return Status::ResourceExhausted("the space has " + std::to_string(valid) +
                                     " valid configurations, more than the limit of " +
                                     std::to_string(limit) +
                                     "; add constraints, or use search.strategy random with "
                                     "search.max_candidates");
  }
  std::vector<v1::Config> configs;
  configs.reserve(valid);
  Enumerate([&](const v1::Config& config) {
    configs.push_back(config);
    return true;
  });
  return configs;
}

bool SearchSpace::Satisfies(const uint32_t* value_index) const {
  if (empty_) return false;
  Walker walker(*this);
  for (size_t p = 0; p < params_.size(); ++p) {
    if (!walker.Bind(static_cast<int>(p), value_index[p])) return false;
  }
  return true;
}

// Draws distinct ranks among the valid configurations (Floyd's algorithm),
// then finds them in one walk over the constrained prefixes: each valid
// prefix stands for FreeProduct() configurations, the
// free parameters counting in mixed radix.
std::vector<v1::Config> SearchSpace::SampleExact(uint64_t count, uint64_t seed) const {
  uint64_t valid = CountValid();
  std::vector<uint64_t> ranks;
  if (valid <= count) {
    ranks.resize(valid);
    for (uint64_t r = 0; r < valid; ++r) ranks[r] = r;
  } else {
    std::mt19937_64 rng(seed);
    std::unordered_set<uint64_t> chosen;
    for (uint64_t j = valid - count; j < valid; ++j) {
      uint64_t t = UniformBelow(rng, j + 1);
      chosen.insert(chosen.count(t) ? j : t);
    }
    ranks.assign(chosen.begin(), chosen.end());
    std::sort(ranks.begin(), ranks.end());
  }

  int num_params = static_cast<int>(params_.size());
  uint64_t per_prefix = FreeProduct();
  std::vector<v1::Config> configs;
  configs.reserve(ranks.size());
  std::vector<uint32_t> index(num_params);
  uint64_t first_rank = 0;  // of the current prefix
  size_t next = 0;
  Walk(constrained_depth_, [&](const uint32_t* prefix) {
    for (; next < ranks.size() && ranks[next] < first_rank + per_prefix; ++next) {
      std::copy(prefix, prefix + constrained_depth_, index.begin());
      uint64_t offset = ranks[next] - first_rank;
      for (int p = num_params - 1; p >= constrained_depth_; --p) {
        index[p] = static_cast<uint32_t>(offset % params_[p].values.size());
        offset /= params_[p].values.size();
      }
      configs.push_back(MakeConfig(index.data()));
    }
    first_rank += per_prefix;
    return next < ranks.size();
  });
  return configs;
}

// For spaces too large to walk: uniform draws over the cartesian space, kept
// when valid and new. Returns fewer than `count` when valid configurations
// are too rare to find this way.
std::vector<v1::Config> SearchSpace::SampleByRejection(uint64_t count, uint64_t seed) const {
  std::vector<v1::Config> configs;
  if (empty_) return configs;
  std::mt19937_64 rng(seed);
  Walker walker(*this);
  std::set<std::vector<uint32_t>> seen;
  std::vector<uint32_t> index(params_.size());
  uint64_t max_draws = std::min(SaturatingMul(count, kDrawsPerCandidate), kMaxDraws);
  for (uint64_t draw = 0; draw < max_draws && configs.size() < count; ++draw) {
    bool valid = true;
    for (size_t p = 0; p < params_.size() && valid; ++p) {
      index[p] = static_cast<uint32_t>(UniformBelow(rng, walker.size(p)));
      valid = walker.Bind(static_cast<int>(p), index[p]);
    }
    if (valid && seen.insert(index).second) configs.push_back(MakeConfig(index.data()));
  }
  return configs;
}

}  // namespace tf::kernelspec
