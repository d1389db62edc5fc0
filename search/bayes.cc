// Model-guided search (Bayesian optimisation with a tree-ensemble surrogate).
// After a random initial design, the surrogate (search/surrogate.h) is fitted
// to the log of the observed times, failures counted as twice the slowest
// time seen, so the model learns where configurations fail. Candidates are
// ranked by an optimistic estimate under the ensemble's mean and spread (a
// lower confidence bound); proposals come from the top of that ranking.
//
// Cost per proposal stays small by refitting only when the observations have
// grown by an eighth since the last fit (and whenever the ranking runs out),
// and by ranking a sample of at most kPool unproposed configurations, plus
// the neighbours of the best ones, in spaces larger than that.
//
// Asked for several at once (the coordinator asks 8 per device), the
// proposals not yet told are fitted as if they had come back at the slowest
// time seen so far (a constant liar, Ginsbourger et al. 2010) and count
// toward the initial design and the refit schedule: a batch is what asking
// one at a time would propose had each been told that time, not the top of
// one ranking (mostly neighbours of each other). Asked one at a time,
// nothing changes. Figures: docs/search.md, "Asked in batches".
#include <algorithm>
#include <cmath>
#include <deque>

#include "search/neighbours.h"
#include "search/random_order.h"
#include "search/strategies.h"
#include "search/surrogate.h"

namespace tf::search {

namespace {

constexpr int kModels = 4;
// Candidates are ranked by the lower confidence bound mean - kExploration *
// spread of their predicted log time (expected improvement explored less
// well on the recorded spaces: 0.88 against 0.92 of the optimum at 100).
constexpr double kExploration = 1.0;
// 16,384 took bayes to 10.4 ms a proposal on a 199,680-configuration space (docs/search.md,
// "Spaces larger than the recorded ones").
constexpr size_t kPool = 8192;
constexpr size_t kRanked = 64;       // proposals kept from one ranking
constexpr size_t kRefitDivisor = 8;  // refit after observations grow by 1/8
constexpr size_t kBestNeighbourhoods = 4;

class Bayes : public Strategy {
 public:
  Bayes(const Space& space, const StrategyOptions& options)
      : space_(space),
        order_(space.size(), options.seed),
        surrogate_(kModels, options.seed),
        initial_(options.budget ? std::clamp<size_t>(options.budget / 10, 8, 20) : 16) {
    for (size_t p = 0; p < space.num_params(); ++p) {
      if (space.params()[p].values.size() > 1) varying_.push_back(p);
    }
  }

  std::vector<ConfigId> Ask(size_t n) override {
    std::vector<ConfigId> batch;
    while (batch.size() < n) {
      std::optional<ConfigId> next = Known() >= initial_ ? Ranked() : std::nullopt;
      if (!next) next = order_.Next();
      if (!next) break;
      untold_.push_back(*next);
      batch.push_back(*next);
    }
    return batch;
  }

  void Tell(ConfigId config, std::optional<double> objective) override {
    order_.Skip(config);
    Erase(&untold_, config);
    // A lie the model was fitted on is now a result: the model has that much to learn.
    if (Erase(&believed_, config)) ++believed_told_;
    observations_.push_back({config, objective ? std::log(std::max(*objective, 1e-30)) : NAN});
  }

 private:
  struct Observation {
    ConfigId id;
    double log_time;  // NaN: failed
  };

  // Whether `id` was in `ids`; removes it.
  static bool Erase(std::vector<ConfigId>* ids, ConfigId id) {
    auto it = std::find(ids->begin(), ids->end(), id);
    if (it == ids->end()) return false;
    ids->erase(it);
    return true;
  }

  // Observations and proposals not yet told (the lies).
  size_t Known() const { return observations_.size() + untold_.size(); }

  void AppendFeatures(ConfigId id, std::vector<float>* rows) const {
    const uint32_t* c = space_.config(id);
    for (size_t p : varying_) rows->push_back(static_cast<float>(c[p]));
  }

  // The next proposal from the current ranking, refitting first when due.
  std::optional<ConfigId> Ranked() {
    const size_t grown = Known() - fitted_on_ + believed_told_;
    const bool due = fitted_on_ == 0 || grown * kRefitDivisor >= Known();
    if (due || NextRanked() == std::nullopt) {
      if (!Refit()) return std::nullopt;
    }
    std::optional<ConfigId> next = NextRanked();
    if (next) order_.Skip(*next);
    return next;
  }

  std::optional<ConfigId> NextRanked() {
    while (!ranked_.empty() && order_.Taken(ranked_.front())) ranked_.pop_front();
    if (ranked_.empty()) return std::nullopt;
    return ranked_.front();
  }

  bool Refit() {
    fitted_on_ = Known();
    believed_ = untold_;
    believed_told_ = 0;
    ranked_.clear();
    double worst = -INFINITY;
    for (const Observation& o : observations_) {
      if (std::isnan(o.log_time)) continue;
      worst = std::max(worst, o.log_time);
    }
    if (!std::isfinite(worst)) return false;  // nothing has succeeded yet: keep sampling
    const double failed = worst + std::log(2.0);
    std::vector<float> rows, targets;
    for (const Observation& o : observations_) {
      AppendFeatures(o.id, &rows);
      targets.push_back(std::isnan(o.log_time) ? failed : o.log_time);
    }
    for (ConfigId id : untold_) {  // the lies
      AppendFeatures(id, &rows);
      targets.push_back(worst);
    }
    if (varying_.empty() || !surrogate_.Fit(rows, varying_.size(), targets).ok()) return false;

    std::vector<ConfigId> pool = Pool();
    if (pool.empty()) return false;
    // Trees predict the same for many configurations: ties go at random, not
    // to the first listed, so that the order a space lists its
    // configurations in (a results table's, fastest first) steers nothing.
    std::shuffle(pool.begin(), pool.end(), order_.rng());
    rows.clear();
    for (ConfigId id : pool) AppendFeatures(id, &rows);
    std::vector<float> mean, spread;
    if (!surrogate_.Predict(rows, varying_.size(), &mean, &spread).ok()) return false;
    std::vector<std::pair<double, ConfigId>> scored;
    for (size_t i = 0; i < pool.size(); ++i) {
      scored.push_back({mean[i] - kExploration * spread[i], pool[i]});
    }
    const size_t keep = std::min(kRanked, scored.size());
    std::partial_sort(scored.begin(), scored.begin() + keep, scored.end(),
                      [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < keep; ++i) ranked_.push_back(scored[i].second);
    return true;
  }

  // Every unproposed configuration when there are few, else a random sample
  // and the neighbourhoods of the best observations.
  std::vector<ConfigId> Pool() {
    std::vector<ConfigId> pool;
    if (space_.size() <= kPool) {
      for (ConfigId id = 0; id < space_.size(); ++id) {
        if (!order_.Taken(id)) pool.push_back(id);
      }
      return pool;
    }
    for (size_t i = 0; i < kPool; ++i) {
      ConfigId id = static_cast<ConfigId>(order_.rng()() % space_.size());
      if (!order_.Taken(id)) pool.push_back(id);
    }
    std::vector<Observation> best;
    for (const Observation& o : observations_) {
      if (!std::isnan(o.log_time)) best.push_back(o);
    }
    const size_t keep = std::min(kBestNeighbourhoods, best.size());
    std::partial_sort(best.begin(), best.begin() + keep, best.end(),
                      [](const auto& a, const auto& b) { return a.log_time < b.log_time; });
    for (size_t i = 0; i < keep; ++i) {
      for (const Neighbour& n : Neighbours(space_, best[i].id, 2)) {
        if (!order_.Taken(n.id)) pool.push_back(n.id);
      }
    }
    std::sort(pool.begin(), pool.end());
    pool.erase(std::unique(pool.begin(), pool.end()), pool.end());
    return pool;
  }

  const Space& space_;
  RandomOrder order_;
  Surrogate surrogate_;
  const size_t initial_;
  std::vector<size_t> varying_;  // the parameters with more than one value: the features
  std::vector<Observation> observations_;
  std::vector<ConfigId> untold_;    // proposed, not told yet, in proposal order
  std::vector<ConfigId> believed_;  // of those, the ones the last fit lied about
  size_t believed_told_ = 0;        // lies of the last fit told since
  size_t fitted_on_ = 0;            // Known() at the last fit
  std::deque<ConfigId> ranked_;     // best expected improvement first
};

}  // namespace

std::unique_ptr<Strategy> MakeBayes(const Space& space, const StrategyOptions& options) {
  return std::make_unique<Bayes>(space, options);
}

}  // namespace tf::search
