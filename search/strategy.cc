#include "search/strategy.h"

#include <functional>
#include <utility>

#include "search/strategies.h"

namespace tf::search {

namespace {

using Factory = std::function<std::unique_ptr<Strategy>(const Space&, const StrategyOptions&)>;

const std::vector<std::pair<std::string, Factory>>& Factories() {
  static const auto* factories = new std::vector<std::pair<std::string, Factory>>{
      // clang-format off
      {"exhaustive", MakeExhaustive},
      {"random", MakeRandom},
      {"bayes", MakeBayes},
      {"evolutionary", MakeEvolutionary},
      {"local", MakeLocal},
      {"auto", MakeAuto},
      // clang-format on
  };
  return *factories;
}

}  // namespace

const std::vector<std::string>& StrategyNames() {
  static const auto* names = [] {
    auto* list = new std::vector<std::string>;
    for (const auto& [name, factory] : Factories()) list->push_back(name);
    return list;
  }();
  return *names;
}

Status CheckStrategyName(std::string_view name) {
  for (const std::string& n : StrategyNames()) {
    if (n == name) return Status::Ok();
  }
  std::string known;
  for (const std::string& n : StrategyNames()) known += (known.empty() ? "" : ", ") + n;
  return Status::InvalidArgument("unknown search strategy \"" + std::string(name) +
                                 "\"; known: " + known);
}

Result<std::unique_ptr<Strategy>> MakeStrategy(std::string_view name, const Space& space,
                                               const StrategyOptions& options) {
  for (const auto& [known, factory] : Factories()) {
    if (known == name) return factory(space, options);
  }
  return CheckStrategyName(name);
}

}  // namespace tf::search
