#include "search/random_order.h"
#include "search/strategies.h"

namespace tf::search {

namespace {

class RandomSearch : public Strategy {
 public:
  RandomSearch(const Space& space, uint64_t seed) : order_(space.size(), seed) {}

  std::vector<ConfigId> Ask(size_t n) override {
    std::vector<ConfigId> batch;
    while (batch.size() < n) {
      std::optional<ConfigId> next = order_.Next();
      if (!next) break;
      batch.push_back(*next);
    }
    return batch;
  }

  void Tell(ConfigId config, std::optional<double>) override { order_.Skip(config); }
  bool Adaptive() const override { return false; }

 private:
  RandomOrder order_;
};

}  // namespace

std::unique_ptr<Strategy> MakeRandom(const Space& space, const StrategyOptions& options) {
  return std::make_unique<RandomSearch>(space, options.seed);
}

}  // namespace tf::search
