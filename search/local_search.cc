// Hill climbing with restarts. The climb sits on its best configuration and
// proposes its unevaluated neighbours nearest first; a neighbour that is
// better becomes the new centre at once (first improvement). When every
// neighbour of the centre has been proposed, the centre is a local optimum:
// the climb restarts from a few random steps off the best configuration
// found (iterated local search), or now and then from a random one.
#include <algorithm>
#include <deque>
#include <limits>

#include "search/neighbours.h"
#include "search/random_order.h"
#include "search/strategies.h"

namespace tf::search {

namespace {

// The neighbourhood of a centre: one parameter changed to any other value
// (Kernel Tuner's Hamming neighbourhood), nearest values first. Adjacent
// values alone (up to 2 steps) miss the moves that matter in real spaces,
// where the good values of a parameter are far apart in its list (block
// sizes 32, 64, 128, 256 among multiples of 16, the ones between them 100x
// slower): the climb then stops where every adjacent value is worse. On the
// six convolution spaces (bench/search_eval, `auto`) every value lifts the
// fraction of the optimum at 400 evaluations from 0.986 to 0.994 (20 seeds;
// 0.986 to 0.988 over 40), the same at 100 (0.902 both, 40 seeds).
constexpr uint32_t kMaxSteps = std::numeric_limits<uint32_t>::max();
// Restarts from a random configuration rather than near the best, one in this many.
constexpr uint64_t kRandomRestartEvery = 4;
// Random steps away from the best configuration for a restart.
constexpr int kKickSteps = 3;

class LocalSearch : public Strategy {
 public:
  LocalSearch(const Space& space, uint64_t seed) : space_(space), order_(space.size(), seed) {}

  std::vector<ConfigId> Ask(size_t n) override {
    std::vector<ConfigId> batch;
    while (batch.size() < n) {
      std::optional<ConfigId> next = NextNeighbour();
      if (!next) next = Restart();
      if (!next) break;
      batch.push_back(*next);
    }
    return batch;
  }

  void Tell(ConfigId config, std::optional<double> objective) override {
    order_.Skip(config);
    if (!objective) return;
    if (!best_ || *objective < best_time_) {
      best_ = config;
      best_time_ = *objective;
    }
    if (!centre_ || *objective < centre_time_) MoveTo(config, *objective);
  }

 private:
  void MoveTo(ConfigId config, double time) {
    centre_ = config;
    centre_time_ = time;
    // Nearest first, in random order among equally near ones.
    std::vector<Neighbour> around = Neighbours(space_, config, kMaxSteps);
    std::shuffle(around.begin(), around.end(), order_.rng());
    std::stable_sort(around.begin(), around.end(),
                     [](const Neighbour& a, const Neighbour& b) { return a.steps < b.steps; });
    queue_.clear();
    for (const Neighbour& n : around) queue_.push_back(n.id);
  }

  std::optional<ConfigId> NextNeighbour() {
    while (!queue_.empty()) {
      ConfigId id = queue_.front();
      queue_.pop_front();
      if (!order_.Taken(id)) {
        order_.Skip(id);
        return id;
      }
    }
    return std::nullopt;
  }

  // A new starting point; the climb continues from it once it is told.
  std::optional<ConfigId> Restart() {
    centre_.reset();
    if (best_ && ++restarts_ % kRandomRestartEvery != 0) {
      if (std::optional<ConfigId> kicked = Kick(*best_)) {
        order_.Skip(*kicked);
        return kicked;
      }
    }
    return order_.Next();
  }

  // A random walk of kKickSteps neighbour moves from `from`, ending on a
  // configuration not proposed yet.
  std::optional<ConfigId> Kick(ConfigId from) {
    ConfigId at = from;
    for (int step = 0; step < kKickSteps; ++step) {
      std::vector<Neighbour> around = Neighbours(space_, at, kMaxSteps);
      if (around.empty()) break;
      at = around[order_.rng()() % around.size()].id;
    }
    if (!order_.Taken(at)) return at;
    for (const Neighbour& n : Neighbours(space_, at, kMaxSteps)) {
      if (!order_.Taken(n.id)) return n.id;
    }
    return std::nullopt;
  }

  const Space& space_;
  RandomOrder order_;
  std::optional<ConfigId> best_, centre_;
  double best_time_ = 0, centre_time_ = 0;
  std::deque<ConfigId> queue_;  // the centre's neighbours not yet proposed, nearest first
  uint64_t restarts_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> MakeLocal(const Space& space, const StrategyOptions& options) {
  return std::make_unique<LocalSearch>(space, options.seed);
}

}  // namespace tf::search
