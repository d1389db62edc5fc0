// Search strategies: which configurations of a Space to evaluate next.
//
// Ask/tell: Ask(n) proposes n configurations (n: the devices free), the
// caller evaluates them in any order, in parallel, and reports each with
// Tell; Ask may be called again before the results of earlier proposals are
// told. A strategy never proposes a configuration twice, nor one already
// told, and proposes only configurations of the space (so only valid ones).
// Ask returns fewer than n only when fewer are left: an empty answer means
// the whole space has been proposed.
//
// A failed evaluation (compile error, crash, wrong result, timeout) is told
// as std::nullopt: it counts as evaluated and the strategy learns from it
// (as bad, and about its neighbours). Telling a configuration that was never
// asked (a result the database already held) is allowed and marks it
// proposed; a warm start's is told with TellSeed.
//
// The same seed, space and sequence of calls give the same proposals.
// A Strategy is not thread-safe; the Space must outlive it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "search/space.h"

namespace tf::search {

class Strategy {
 public:
  virtual ~Strategy() = default;

  virtual std::vector<ConfigId> Ask(size_t n) = 0;
  // objective: lower is better (a time); std::nullopt: the evaluation failed.
  virtual void Tell(ConfigId config, std::optional<double> objective) = 0;
  // The result of a warm start: a configuration seeded from the kernel's
  // results on other devices or problems (search/transfer.h), evaluated
  // before the strategy's own proposals. Told as any result unless the
  // strategy keeps seeds apart (`auto`: docs/search.md, "Warm starts from
  // other devices").
  virtual void TellSeed(ConfigId config, std::optional<double> objective) {
    Tell(config, objective);
  }
  // False when its proposals do not depend on what it is told (exhaustive,
  // random): the caller may then ask for all of them at once and build them
  // together, as it would without a strategy.
  virtual bool Adaptive() const { return true; }
};

struct StrategyOptions {
  uint64_t seed = 0;
  // Evaluations the caller expects to afford; 0: unknown. `auto` evaluates
  // the whole space when it fits, and strategies pace exploration by it.
  uint64_t budget = 0;
};

// exhaustive, random, bayes, evolutionary, local, auto. An unknown name is an
// error that lists the known ones.
Result<std::unique_ptr<Strategy>> MakeStrategy(std::string_view name, const Space& space,
                                               const StrategyOptions& options);

const std::vector<std::string>& StrategyNames();
// Whether `name` is one of them; the error MakeStrategy gives otherwise.
Status CheckStrategyName(std::string_view name);

}  // namespace tf::search
