#include "coordinator/search_driver.h"

#include <algorithm>
#include <numeric>

#include "common/number_text.h"
#include "kernelspec/config.h"
#include "kernelspec/params.h"

namespace tf::coordinator {
namespace {

// kSeedPending: a seed under evaluation, whose result the strategy is told
// as a warm start's (Strategy::TellSeed). kSeedQueued: a seed outside a random
// sample, not yet proposed.
enum : uint8_t { kUnseen = 0, kPending = 1, kTold = 2, kSeedPending = 3, kSeedQueued = 4 };

search::Value SearchValue(const v1::Value& value) {
  if (value.kind_case() == v1::Value::kStrValue) return value.str_value();
  return value.int_value();
}

v1::Value SpecValue(const search::Value& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return kernelspec::IntValue(*i);
  return kernelspec::StrValue(search::ValueText(value));
}

}  // namespace

Result<std::unique_ptr<SearchDriver>> SearchDriver::Create(
    const v1::KernelSpec& spec, const kernelspec::DeviceProperties& device, uint64_t max_space_size,
    int64_t started_ms) {
  std::unique_ptr<SearchDriver> driver(new SearchDriver);
  driver->search_ = spec.search();
  driver->started_ms_ = started_ms;
  driver->patience_ = spec.search().patience();
  driver->min_improvement_ = spec.search().min_improvement_percent() / 100;

  // The parameters as strategies see them: numbers ascending, so that
  // neighbouring indices are neighbouring values; `remap[p][k]` is the
  // position of the spec's k-th value of parameter p.
  std::vector<search::Parameter> params;
  std::vector<std::vector<uint32_t>> remap;
  for (const v1::Param& param : spec.params()) {
    TF_ASSIGN_OR_RETURN(std::vector<v1::Value> values, kernelspec::ParamValues(param));
    std::vector<uint32_t> order(values.size());
    std::iota(order.begin(), order.end(), 0u);
    const bool numeric = std::none_of(values.begin(), values.end(), [](const v1::Value& v) {
      return v.kind_case() == v1::Value::kStrValue;
    });
    if (numeric) {
      std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return values[a].int_value() < values[b].int_value();
      });
    }
    search::Parameter& out = params.emplace_back();
    out.name = param.name();
    std::vector<uint32_t>& position = remap.emplace_back(values.size());
    for (uint32_t k = 0; k < order.size(); ++k) {
      position[order[k]] = k;
      out.values.push_back(SearchValue(values[order[k]]));
    }
    driver->spec_index_.push_back(std::move(order));
  }

  for (const v1::Problem& problem : spec.problems()) {
    const std::string text = kernelspec::ProblemText(problem);
    auto fail = [&](const Status& status) {
      return Status(status.code(), "problem " + text + ": " + status.message());
    };
    auto space = kernelspec::SearchSpace::Create(spec, problem, device);
    if (!space.ok()) return fail(space.status());

    Problem& p = driver->problems_.emplace_back();
    p.text = text;
    p.constrained = std::move(space).value();
    for (const search::Parameter& param : params) {
      auto& index = p.index_of_value.emplace_back();
      for (uint32_t k = 0; k < param.values.size(); ++k) {
        index.emplace_back(search::ValueText(param.values[k]), k);
      }
      std::sort(index.begin(), index.end());
    }
    std::vector<uint32_t> indices;
    const size_t width = params.size();
    if (driver->Sampled()) {
      // A sample drawn without walking the space, which may be too large to.
      auto sample = p.constrained->Select(spec.search(), max_space_size);
      if (!sample.ok()) return fail(sample.status());
      for (const v1::Config& config : *sample) {
        for (size_t k = 0; k < width; ++k) {
          const std::string value = kernelspec::ValueText(config.settings(k).value());
          auto& index = p.index_of_value[k];
          auto it = std::lower_bound(index.begin(), index.end(), std::make_pair(value, 0u));
          indices.push_back(it->second);
        }
      }
    } else {
      uint64_t valid = p.constrained->CountValid();
      if (valid > max_space_size) {
        return fail(Status::ResourceExhausted(
            "the space has " + std::to_string(valid) +
            " valid configurations, more than the limit of " + std::to_string(max_space_size) +
            "; add constraints, or use search.strategy random with search.max_candidates"));
      }
      indices.reserve(valid * width);
      p.constrained->EnumerateIndices([&](const uint32_t* value_index) {
        for (size_t k = 0; k < width; ++k) indices.push_back(remap[k][value_index[k]]);
        return true;
      });
    }
    TF_ASSIGN_OR_RETURN(p.space, search::Space::Create(params, std::move(indices)));
    p.state.assign(p.space.size(), kUnseen);
    if (p.space.size() == 0) {
      p.exhausted = true;
      continue;
    }
    search::StrategyOptions options;
    options.seed = spec.search().seed();
    options.budget = static_cast<uint64_t>(spec.search().max_candidates());
    auto strategy = search::MakeStrategy(spec.search().strategy(), p.space, options);
    if (!strategy.ok()) return fail(strategy.status());
    p.strategy = std::move(strategy).value();
  }
  const bool budgeted = spec.search().max_candidates() > 0 || spec.search().max_seconds() > 0 ||
                        spec.search().patience() > 0;
  const bool learns =
      std::any_of(driver->problems_.begin(), driver->problems_.end(),
                  [](const Problem& p) { return p.strategy && p.strategy->Adaptive(); });
  if (learns && !budgeted) {
    driver->patience_ = kDefaultPatience;
    driver->min_improvement_ = kDefaultMinImprovementPercent / 100;
  }
  return driver;
}

std::optional<std::vector<uint32_t>> SearchDriver::Positions(const Problem& p,
                                                             const v1::Config& config) const {
  if (static_cast<size_t>(config.settings_size()) != p.index_of_value.size()) return std::nullopt;
  std::vector<uint32_t> indices;
  for (int k = 0; k < config.settings_size(); ++k) {
    // Another job's configuration may come from a spec whose parameters differ.
    if (config.settings(k).name() != p.space.params()[k].name) return std::nullopt;
    const std::string value = kernelspec::ValueText(config.settings(k).value());
    const auto& index = p.index_of_value[k];
    auto it = std::lower_bound(index.begin(), index.end(), std::make_pair(value, 0u));
    if (it == index.end() || it->first != value) return std::nullopt;
    indices.push_back(it->second);
  }
  return indices;
}

std::optional<search::ConfigId> SearchDriver::Find(const Problem& p,
                                                   const v1::Config& config) const {
  std::optional<std::vector<uint32_t>> positions = Positions(p, config);
  return positions ? p.space.Find(positions->data()) : std::nullopt;
}

bool SearchDriver::Sampled() const {
  return search_.strategy() == "random" && search_.max_candidates() > 0;
}

SearchDriver::Place SearchDriver::Locate(const Problem& p, const v1::Config& config) const {
  Place place;
  std::optional<std::vector<uint32_t>> positions = Positions(p, config);
  if (!positions) return place;
  place.id = p.space.Find(positions->data());
  if (place.id || !Sampled()) return place;
  std::vector<uint32_t> value_index(positions->size());
  for (size_t k = 0; k < value_index.size(); ++k) value_index[k] = spec_index_[k][(*positions)[k]];
  if (p.constrained->Satisfies(value_index.data())) {
    place.outside = p.constrained->MakeConfig(value_index.data());
  }
  return place;
}

v1::Config SearchDriver::ConfigOf(const Problem& p, search::ConfigId id) const {
  v1::Config config;
  const uint32_t* indices = p.space.config(id);
  for (size_t k = 0; k < p.space.num_params(); ++k) {
    const search::Parameter& param = p.space.params()[k];
    v1::ParamSetting* setting = config.add_settings();
    setting->set_name(param.name);
    *setting->mutable_value() = SpecValue(param.values[indices[k]]);
  }
  return config;
}

uint8_t* SearchDriver::StateAt(Problem& p, const Place& place) {
  if (place.id) return &p.state[*place.id];
  if (!place.outside) return nullptr;
  return &p.outside[kernelspec::ConfigKey(*place.outside)];  // kUnseen when new
}

bool SearchDriver::Tell(int problem, const v1::Config& config, std::optional<double> time) {
  Problem& p = problems_[problem];
  const Place place = Locate(p, config);
  const std::optional<search::ConfigId>& id = place.id;
  uint8_t* state = StateAt(p, place);
  if (!state || *state == kTold) return false;
  const bool seed = *state == kSeedPending;
  if (*state == kPending || seed) {
    --p.pending;
  } else {
    ++p.proposed;
  }
  *state = kTold;
  if (p.strategy && id && seed) {
    p.strategy->TellSeed(*id, time);
  } else if (p.strategy && id) {
    p.strategy->Tell(*id, time);
  }
  Count(p, config, time);
  return true;
}

void SearchDriver::Count(Problem& p, const v1::Config& config, std::optional<double> time) {
  ++p.told;
  if (time && (!p.best || *time < *p.best * (1 - min_improvement_))) {
    p.since_improvement = 0;
  } else {
    ++p.since_improvement;
  }
  if (time && (!p.best || *time < *p.best)) {
    p.best = time;
    for (Problem& other : problems_) {
      std::optional<search::ConfigId> same = Find(other, config);
      if (&other != &p && same) Offer(other, *same);
    }
  }
  if (patience_ > 0 && p.since_improvement >= patience_ && p.stop_reason.empty()) {
    p.stop_reason = "no improvement of " + NumberText(min_improvement_ * 100) + "% in " +
                    std::to_string(patience_) + " evaluations";
  }
}

bool SearchDriver::InSpace(int problem, const v1::Config& config) const {
  const Place place = Locate(problems_[problem], config);
  return place.id || place.outside;
}

void SearchDriver::MarkPending(int problem, const v1::Config& config) {
  Problem& p = problems_[problem];
  uint8_t* state = StateAt(p, Locate(p, config));
  if (!state || *state != kUnseen) return;
  *state = kPending;
  ++p.pending;
  ++p.proposed;
}

void SearchDriver::Seed(int problem, const v1::Config& config) {
  Problem& p = problems_[problem];
  Place place = Locate(p, config);
  const std::optional<search::ConfigId>& id = place.id;
  if (!id) {
    // Left out of the sample, proposed in its turn all the same, as the spec writes it.
    std::optional<v1::Config>& outside = place.outside;
    if (!outside) return;
    uint8_t& state = p.outside[kernelspec::ConfigKey(*outside)];
    if (state != kUnseen) return;
    state = kSeedQueued;
    p.seeds.push_back({std::nullopt, *std::move(outside)});
    return;
  }
  if (p.state[*id] != kUnseen || std::any_of(p.seeds.begin(), p.seeds.end(),
                                             [&](const Problem::Seed& s) { return s.id == id; })) {
    return;
  }
  p.seeds.push_back({*id, {}});
}

void SearchDriver::Offer(int problem, const v1::Config& config) {
  Problem& p = problems_[problem];
  if (std::optional<search::ConfigId> id = Find(p, config)) Offer(p, *id);
}

void SearchDriver::Offer(Problem& p, search::ConfigId id) {
  if (!p.strategy || !p.strategy->Adaptive() || p.state[id] != kUnseen ||
      std::find(p.shared.begin(), p.shared.end(), id) != p.shared.end()) {
    return;
  }
  p.shared.push_back(id);
}

bool SearchDriver::Proposing(const Problem& p) const {
  const uint64_t budget = static_cast<uint64_t>(search_.max_candidates());
  return !p.exhausted && p.stop_reason.empty() && (budget == 0 || p.proposed < budget);
}

std::vector<SearchDriver::Proposal> SearchDriver::Ask(size_t window, int64_t now_ms) {
  std::vector<Proposal> proposals;
  if (search_.max_seconds() > 0 && now_ms - started_ms_ >= search_.max_seconds() * 1000) {
    for (Problem& p : problems_) {
      if (Proposing(p))
        p.stop_reason = "search.max_seconds (" + NumberText(search_.max_seconds()) + " s) reached";
    }
    return proposals;
  }
  const bool results_matter = search_.max_seconds() > 0 || patience_ > 0;
  const uint64_t budget = static_cast<uint64_t>(search_.max_candidates());
  // The window is the job's: its problems still proposing share it. A problem
  // has at most an eighth of its budget in flight: asked again when half is
  // back, it proposes with up to that many results untold, and a quarter cost
  // 0.02-0.04 of the optimum at 40 (docs/search.md, "Asked in batches").
  const size_t proposing =
      std::max<size_t>(1, std::count_if(problems_.begin(), problems_.end(),
                                        [&](const Problem& p) { return Proposing(p); }));
  size_t share = (window + proposing - 1) / proposing;
  if (budget > 0) share = std::min<size_t>(share, budget / 8);
  share = std::max<size_t>(share, 2);
  for (size_t i = 0; i < problems_.size(); ++i) {
    Problem& p = problems_[i];
    if (!Proposing(p)) continue;
    size_t want = p.space.size();
    if (p.strategy->Adaptive() || results_matter) {
      if (p.pending > share / 2) continue;
      want = share - p.pending;
    }
    if (budget > 0) want = std::min<uint64_t>(want, budget - p.proposed);
    // `config`, whose state is `slot`, goes out as `state`.
    auto take = [&](uint8_t& slot, uint8_t state, v1::Config config) {
      slot = state;
      ++p.pending;
      ++p.proposed;
      --want;
      proposals.push_back({static_cast<int>(i), std::move(config)});
    };
    auto propose = [&](search::ConfigId id, uint8_t state) {
      if (p.state[id] != kUnseen) return;  // seeded, or pending since a restart
      take(p.state[id], state, ConfigOf(p, id));
    };
    while (want > 0 && !p.seeds.empty()) {
      Problem::Seed seed = std::move(p.seeds.front());
      p.seeds.pop_front();
      if (seed.id) {
        propose(*seed.id, kSeedPending);
        continue;
      }
      uint8_t& state = p.outside[kernelspec::ConfigKey(seed.config)];
      if (state == kSeedQueued) take(state, kSeedPending, std::move(seed.config));  // not told
    }
    while (want > 0 && !p.shared.empty()) {
      propose(p.shared.front(), kPending);
      p.shared.erase(p.shared.begin());
    }
    while (want > 0 && !p.exhausted) {
      std::vector<search::ConfigId> batch = p.strategy->Ask(want);
      if (batch.size() < want) p.exhausted = true;
      for (search::ConfigId id : batch) propose(id, kPending);
    }
  }
  return proposals;
}

bool SearchDriver::Done() const {
  return std::none_of(problems_.begin(), problems_.end(),
                      [&](const Problem& p) { return Proposing(p) || p.pending > 0; });
}

std::string SearchDriver::ReasonOf(const Problem& p) const {
  if (!p.stop_reason.empty()) return p.stop_reason;
  if (p.exhausted) {
    if (p.space.size() == 0) return "no configuration satisfies the constraints";
    if (Sampled()) {
      // Short of max_candidates: the sampler found no more, or gave up drawing.
      return "all " + std::to_string(p.space.size()) +
             " configurations of the random sample evaluated (search.max_candidates asked for " +
             std::to_string(search_.max_candidates()) +
             "; the space has no more valid configurations, or they are too rare to draw)";
    }
    return "all " + std::to_string(p.space.size()) + " valid configurations evaluated";
  }
  return "search.max_candidates (" + std::to_string(search_.max_candidates()) + ") evaluated";
}

std::string SearchDriver::StopReason() const {
  if (std::any_of(problems_.begin(), problems_.end(),
                  [&](const Problem& p) { return Proposing(p); })) {
    return "";
  }
  std::vector<std::string> reasons;
  for (const Problem& p : problems_) reasons.push_back(ReasonOf(p));
  if (std::all_of(reasons.begin(), reasons.end(),
                  [&](const std::string& r) { return r == reasons.front(); })) {
    return reasons.empty() ? "" : reasons.front();
  }
  std::string text;
  for (size_t i = 0; i < problems_.size(); ++i) {
    text += (i ? "; " : "") + problems_[i].text + ": " + reasons[i];
  }
  return text;
}

}  // namespace tf::coordinator
