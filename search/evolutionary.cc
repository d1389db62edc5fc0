// A steady-state genetic algorithm. The population is the best configurations
// evaluated so far; each proposal is a child of two parents picked by
// tournament: uniform crossover, then each parameter mutated with
// probability 1/parameters (an ordinal one by one or two steps, a categorical
// one to any value). A child outside the space or already proposed is bred
// again; after kBreedAttempts the proposal is a random configuration.
// Failures never join the population.
#include <algorithm>
#include <map>

#include "search/random_order.h"
#include "search/strategies.h"

namespace tf::search {

namespace {

constexpr size_t kPopulation = 16;
constexpr size_t kTournament = 3;
constexpr int kBreedAttempts = 64;

class Evolutionary : public Strategy {
 public:
  Evolutionary(const Space& space, uint64_t seed) : space_(space), order_(space.size(), seed) {}

  std::vector<ConfigId> Ask(size_t n) override {
    std::vector<ConfigId> batch;
    while (batch.size() < n) {
      std::optional<ConfigId> next = population_.size() >= 2 ? Breed() : std::nullopt;
      if (!next) next = order_.Next();
      if (!next) break;
      batch.push_back(*next);
    }
    return batch;
  }

  void Tell(ConfigId config, std::optional<double> objective) override {
    order_.Skip(config);
    if (!objective) return;
    population_.emplace(*objective, config);
    if (population_.size() > kPopulation) population_.erase(std::prev(population_.end()));
  }

 private:
  ConfigId Tournament() {
    size_t best = population_.size();
    for (size_t i = 0; i < kTournament; ++i)
      best = std::min<size_t>(best, Uniform(population_.size()));
    return std::next(population_.begin(), best)->second;  // the map is ordered by time
  }

  std::optional<ConfigId> Breed() {
    const size_t width = space_.num_params();
    std::vector<uint32_t> child(width);
    for (int attempt = 0; attempt < kBreedAttempts; ++attempt) {
      const uint32_t* a = space_.config(Tournament());
      const uint32_t* b = space_.config(Tournament());
      for (size_t p = 0; p < width; ++p) {
        child[p] = Uniform(2) ? a[p] : b[p];
        if (Uniform(width) == 0) child[p] = Mutate(p, child[p]);
      }
      std::optional<ConfigId> id = space_.Find(child.data());
      if (id && !order_.Taken(*id)) {
        order_.Skip(*id);
        return id;
      }
    }
    return std::nullopt;
  }

  uint32_t Mutate(size_t param, uint32_t value) {
    const Parameter& p = space_.params()[param];
    const uint32_t size = static_cast<uint32_t>(p.values.size());
    if (size < 2) return value;
    if (!p.ordinal()) return (value + 1 + Uniform(size - 1)) % size;
    const int64_t step = (Uniform(2) ? 1 : 2) * (Uniform(2) ? 1 : -1);
    return static_cast<uint32_t>(std::clamp<int64_t>(int64_t{value} + step, 0, size - 1));
  }

  uint32_t Uniform(size_t n) { return static_cast<uint32_t>(order_.rng()() % n); }

  const Space& space_;
  RandomOrder order_;
  std::multimap<double, ConfigId> population_;  // best first
};

}  // namespace

std::unique_ptr<Strategy> MakeEvolutionary(const Space& space, const StrategyOptions& options) {
  return std::make_unique<Evolutionary>(space, options.seed);
}

}  // namespace tf::search
