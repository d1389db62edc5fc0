// `auto`: the whole space when the budget covers it (or, with no budget
// given, when it is small enough to run whole), else the strategy that
// search_eval measures best on recorded spaces.
#include "search/strategies.h"

namespace tf::search {

namespace {

// Without a budget, spaces up to this size are run whole.
constexpr size_t kSmallSpace = 1000;

}  // namespace

std::unique_ptr<Strategy> MakeAuto(const Space& space, const StrategyOptions& options) {
  const bool whole = options.budget ? options.budget >= space.size() : space.size() <= kSmallSpace;
  return whole ? MakeExhaustive(space, options) : MakeBayes(space, options);
}

}  // namespace tf::search
