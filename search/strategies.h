// The strategies behind MakeStrategy (search/strategy.h), one file each.
// Callers use MakeStrategy; this header is for the factory and the tests.
#pragma once

#include <memory>

#include "search/strategy.h"

namespace tf::search {

// Every configuration, in the space's order.
std::unique_ptr<Strategy> MakeExhaustive(const Space& space, const StrategyOptions& options);
// Uniform sampling without replacement.
std::unique_ptr<Strategy> MakeRandom(const Space& space, const StrategyOptions& options);
// Hill climbing over one-parameter moves, with restarts near the best.
std::unique_ptr<Strategy> MakeLocal(const Space& space, const StrategyOptions& options);
// Bayesian optimisation over a tree-ensemble surrogate (XGBoost).
std::unique_ptr<Strategy> MakeBayes(const Space& space, const StrategyOptions& options);
// A steady-state genetic algorithm.
std::unique_ptr<Strategy> MakeEvolutionary(const Space& space, const StrategyOptions& options);
// The whole space in a random order where the budget covers it; else bayes,
// then local once the model has had its evaluations.
std::unique_ptr<Strategy> MakeAuto(const Space& space, const StrategyOptions& options);

}  // namespace tf::search
