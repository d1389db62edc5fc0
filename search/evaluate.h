// Offline evaluation of a strategy on a recorded space (bench/search_eval):
// the strategy proposes one configuration at a time, each answered from the
// recording (a failure counts as an evaluation), and the best time found is
// followed along the budget.
//
// Fraction of optimum after b evaluations: the space's best recorded time
// over the best time found in b evaluations (0 while nothing has succeeded).
// The random baseline is the exact expectation of that fraction for uniform
// sampling without replacement, not a sampled estimate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "search/recorded_space.h"

namespace tf::search {

struct Evaluation {
  // fraction[b]: mean fraction of optimum over the seeds after b+1 evaluations.
  std::vector<double> fraction;
  // Per seed, the fraction of optimum after the whole budget: runs often end
  // either at the optimum or in another basin well below it, so the spread
  // says whether two strategies' means differ by more than the seeds' luck.
  std::vector<double> final_fraction;
  double strategy_ms = 0;  // CPU time spent in Ask and Tell, all seeds
  uint64_t proposals = 0;  // configurations proposed, all seeds
};

// The best recorded time; an error when no configuration succeeded.
Result<double> Optimum(const RecordedSpace& recorded);
// Configuration `id`'s recorded time; std::nullopt for a recorded failure.
std::optional<double> RecordedTime(const RecordedSpace& recorded, ConfigId id);

// Runs the strategy once per seed (seeds first_seed, first_seed+1, ...), each
// for min(budget, configurations) evaluations, asking `batch` at a time.
// Seeds run on `threads` threads. `warm`: a warm start, evaluated first (in
// that order, each counted as an evaluation and told with TellSeed), as the
// coordinator's SearchDriver proposes its seeds before the strategy's.
Result<Evaluation> EvaluateStrategy(const RecordedSpace& recorded, const std::string& strategy,
                                    uint64_t budget, int seeds, uint64_t first_seed, size_t batch,
                                    int threads, const std::vector<ConfigId>& warm = {});

// The problems of one job: `spaces` searched together, one strategy each, each
// for min(budget, its configurations) evaluations, `batch` asked of each in
// turn, and `warm[i]` (when given) as space i's warm start. With `share` and a
// strategy that learns, a problem's new best is proposed next to every other
// problem whose space holds that configuration (by parameter names and
// values), as the coordinator's SearchDriver does. One Evaluation per space.
Result<std::vector<Evaluation>> EvaluateJob(const std::vector<const RecordedSpace*>& spaces,
                                            const std::string& strategy, uint64_t budget, int seeds,
                                            uint64_t first_seed, size_t batch, int threads,
                                            const std::vector<std::vector<ConfigId>>& warm,
                                            bool share);

// The standard error of the mean of `values` (0 for fewer than two).
double StandardError(const std::vector<double>& values);

// random[b]: expected fraction of optimum after b+1 uniform draws without replacement.
std::vector<double> RandomFractionCurve(const RecordedSpace& recorded, uint64_t budget);

// Kernel Tuner's methodology score (Willemsen et al.) on one space: the mean
// over the budget of (f_strategy - f_random) / (1 - f_random); points where
// random is already at the optimum are left out. 1: the optimum at once;
// 0: no better than random; negative: worse.
double MethodologyScore(const std::vector<double>& strategy, const std::vector<double>& random);

}  // namespace tf::search
