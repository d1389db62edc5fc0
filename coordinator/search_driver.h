// One job's search: for each of its problems, a search strategy
// (search/strategy.h) over the configurations that satisfy the constraints on
// the bound device, asked what to evaluate next and told every result, and
// the job's budgets (spec.search: max_candidates per problem, max_seconds for
// the job, patience and min_improvement_percent per problem).
//
// Strategies that learn are asked for a window of configurations at a time
// (sized by the caller to the devices and compiler runs free, shared by the
// job's problems, at most an eighth of max_candidates per problem) and asked
// again when half of it has come back, so that results steer what follows
// while every device stays busy. Strategies that do not learn (exhaustive, random)
// are asked for everything at once when no budget depends on the results
// (max_seconds, patience), so that the builds batch as well as they can.
//
// A problem stops proposing when its strategy has proposed its whole space,
// when max_candidates configurations were proposed, when `patience`
// evaluations in a row improved its best by less than min_improvement_percent,
// or when the job has run max_seconds; configurations already proposed are
// still evaluated. Failures count as evaluations. Not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "kernelspec/space.h"
#include "search/space.h"
#include "search/strategy.h"
#include "tunefleet/v1/common.pb.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::coordinator {

namespace v1 = ::tunefleet::v1;

// A strategy that learns, given none of max_candidates, max_seconds and
// patience, stops a problem after this many evaluations without a 1%
// improvement rather than walk the whole space.
inline constexpr int64_t kDefaultPatience = 100;
inline constexpr double kDefaultMinImprovementPercent = 1.0;

class SearchDriver {
 public:
  struct Proposal {
    int problem = 0;  // index into spec.problems
    v1::Config config;
  };

  // Enumerates each problem's valid configurations with the device's
  // properties (random with max_candidates samples them instead), at most
  // `max_space_size` each. `started_ms`: when the job started on a device,
  // the origin of max_seconds. Errors name the problem.
  static Result<std::unique_ptr<SearchDriver>> Create(const v1::KernelSpec& spec,
                                                      const kernelspec::DeviceProperties& device,
                                                      uint64_t max_space_size, int64_t started_ms);

  // The result of `config` on problem `problem`: its time, std::nullopt for
  // a failure. False (and ignored) when the configuration is not in the
  // problem's space or was told before. The problems of a job share what they
  // find: a problem's new best is offered (Offer) to every other problem.
  bool Tell(int problem, const v1::Config& config, std::optional<double> time);
  // Whether `config` satisfies the problem's constraints on the bound device (a random
  // sample's space holds only some of those): other jobs' results outside it are not reused.
  bool InSpace(int problem, const v1::Config& config) const;
  // A configuration under evaluation whose result comes later (a resumed
  // job's): never proposed again.
  void MarkPending(int problem, const v1::Config& config);
  // A warm start: proposed before anything the strategy proposes (in the
  // order seeded), when it is in the problem's space and not yet proposed;
  // its result is told to the strategy with TellSeed.
  void Seed(int problem, const v1::Config& config);
  // Another problem's best, of this job or of another job of the kernel
  // running at the same time: with a strategy that learns, proposed next
  // (after the seeds) when in the problem's space and not yet proposed, and
  // told to the strategy as any result (docs/search.md, "Problems of one job
  // share their bests").
  void Offer(int problem, const v1::Config& config);

  // What to evaluate next: for strategies that learn, at most `window`
  // configurations of the job in flight, shared by the problems still
  // proposing. Applies max_seconds against `now_ms`.
  std::vector<Proposal> Ask(size_t window, int64_t now_ms);

  // True once no problem will propose more and every proposal was told.
  bool Done() const;
  // Why each problem stopped (one reason when they agree); empty while any
  // problem may still propose.
  std::string StopReason() const;

  size_t Evaluated(int problem) const { return problems_[problem].told; }
  // The problem's best time told so far.
  std::optional<double> Best(int problem) const { return problems_[problem].best; }
  size_t SpaceSize(int problem) const { return problems_[problem].space.size(); }

 private:
  struct Problem {
    std::string text;                                    // "M=256,N=256" for reasons
    std::optional<kernelspec::SearchSpace> constrained;  // every valid configuration
    search::Space space;  // the strategy's: the valid configurations, or a random sample
    std::unique_ptr<search::Strategy> strategy;
    // Per parameter: value text -> the value's index in `space`.
    std::vector<std::vector<std::pair<std::string, uint32_t>>> index_of_value;
    std::vector<uint8_t> state;  // per configuration: kUnseen, kPending, kTold
    // To propose first, in the order seeded: in the space, or a valid configuration outside
    // a random sample's.
    struct Seed {
      std::optional<search::ConfigId> id;
      v1::Config config;  // when outside
    };
    std::deque<Seed> seeds;
    // A random sample's space: the valid configurations outside it that were reused, seeded
    // or leased before a restart, by config key, and their state.
    std::map<std::string, uint8_t> outside;
    std::vector<search::ConfigId> shared;  // other problems' bests, to propose next
    size_t proposed = 0;                   // pending or told
    size_t pending = 0;
    size_t told = 0;
    std::optional<double> best;
    int64_t since_improvement = 0;
    bool exhausted = false;   // the strategy has nothing more to propose
    std::string stop_reason;  // set when it stopped for a budget
  };

  SearchDriver() = default;
  // Per parameter, the index of the configuration's value among the space's (ascending).
  std::optional<std::vector<uint32_t>> Positions(const Problem& p, const v1::Config& config) const;
  std::optional<search::ConfigId> Find(const Problem& p, const v1::Config& config) const;
  // Whether each problem's space is a random sample (random with max_candidates).
  bool Sampled() const;
  // Where a configuration stands in a problem: its id in the strategy's space or, when it
  // satisfies the constraints but is not in the problem's random sample, itself as the spec
  // writes it; neither for any other.
  struct Place {
    std::optional<search::ConfigId> id;
    std::optional<v1::Config> outside;
  };
  // Looks the configuration's values up once for both.
  Place Locate(const Problem& p, const v1::Config& config) const;
  // The state of the configuration at `place`; null when it is in neither.
  uint8_t* StateAt(Problem& p, const Place& place);
  // Counts a result toward the problem's budget, patience and best, and offers a new best.
  void Count(Problem& p, const v1::Config& config, std::optional<double> time);
  v1::Config ConfigOf(const Problem& p, search::ConfigId id) const;
  bool Proposing(const Problem& p) const;
  void Offer(Problem& p, search::ConfigId id);
  std::string ReasonOf(const Problem& p) const;

  // Per parameter: the spec's index of its value at each ascending position.
  std::vector<std::vector<uint32_t>> spec_index_;
  v1::Search search_;
  int64_t patience_ = 0;
  double min_improvement_ = 0;  // a fraction
  int64_t started_ms_ = 0;
  // A deque: each strategy refers to its problem's space, which must not move
  // when a later problem is added.
  std::deque<Problem> problems_;
};

}  // namespace tf::coordinator
