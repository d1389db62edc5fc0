#include "search/proposed_set.h"
#include "search/strategies.h"

namespace tf::search {

namespace {

class Exhaustive : public Strategy {
 public:
  explicit Exhaustive(const Space& space) : proposed_(space.size()), size_(space.size()) {}

  std::vector<ConfigId> Ask(size_t n) override {
    std::vector<ConfigId> batch;
    for (; next_ < size_ && batch.size() < n; ++next_) {
      if (proposed_.Add(next_)) batch.push_back(next_);
    }
    return batch;
  }

  void Tell(ConfigId config, std::optional<double>) override { proposed_.Add(config); }
  bool Adaptive() const override { return false; }

 private:
  ProposedSet proposed_;
  size_t size_;
  ConfigId next_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> MakeExhaustive(const Space& space, const StrategyOptions&) {
  return std::make_unique<Exhaustive>(space);
}

}  // namespace tf::search
