// `auto`: the whole space when the budget covers it (or, with no budget
// given, when it is small enough to run whole); else model-guided search
// (bayes) for the first kModelEvaluations evaluations, then hill climbing
// (local) from the best configuration found, both told every result.
//
// Why the hand-over: on the recorded spaces (bench/search_eval) the model
// finds the best region fastest while observations are few, but its ranking
// blurs among the near-optimal configurations; hill climbing with restarts
// near the best refines there. On the six convolution spaces at 400
// evaluations (20 seeds), switching after 100 reached 0.986 of the optimum
// (methodology score 0.66), local alone 0.985 (0.65), bayes alone 0.965
// (0.44); below 100 evaluations auto is bayes.
#include <algorithm>

#include "search/proposed_set.h"
#include "search/strategies.h"

namespace tf::search {

namespace {

// Without a budget, spaces up to this size are run whole.
constexpr size_t kSmallSpace = 1000;
// Evaluations proposed by the model before hill climbing takes over.
constexpr uint64_t kModelEvaluations = 100;

class ModelThenLocal : public Strategy {
 public:
  ModelThenLocal(const Space& space, const StrategyOptions& options)
      : model_(MakeBayes(space, {.seed = options.seed, .budget = ModelBudget(options.budget)})),
        local_(MakeLocal(space, options)),
        proposed_(space.size()) {}

  std::vector<ConfigId> Ask(size_t n) override {
    std::vector<ConfigId> batch;
    while (batch.size() < n) {
      // The model's proposals not yet told are unknown to the local search:
      // it may propose them again, so those are passed over.
      std::vector<ConfigId> next =
          proposed_.count() < kModelEvaluations ? model_->Ask(1) : std::vector<ConfigId>{};
      if (next.empty()) next = local_->Ask(1);
      if (next.empty()) break;
      if (proposed_.Add(next[0])) batch.push_back(next[0]);
    }
    return batch;
  }

  void Tell(ConfigId config, std::optional<double> objective) override {
    proposed_.Add(config);
    model_->Tell(config, objective);
    local_->Tell(config, objective);
  }

 private:
  static uint64_t ModelBudget(uint64_t budget) {
    return budget ? std::min(budget, kModelEvaluations) : kModelEvaluations;
  }

  std::unique_ptr<Strategy> model_, local_;
  ProposedSet proposed_;  // by either, or told
};

}  // namespace

std::unique_ptr<Strategy> MakeAuto(const Space& space, const StrategyOptions& options) {
  const bool whole = options.budget ? options.budget >= space.size() : space.size() <= kSmallSpace;
  if (whole) return MakeExhaustive(space, options);
  return std::make_unique<ModelThenLocal>(space, options);
}

}  // namespace tf::search
