#include "kernelspec/problem_distance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace tf::kernelspec {

double ProblemScale(int64_t value) {
  return value >= 1 ? std::log2(static_cast<double>(value)) : static_cast<double>(value) - 1;
}

double ProblemDistance(const ::tunefleet::v1::Problem& a, const ::tunefleet::v1::Problem& b) {
  if (a.vars_size() != b.vars_size()) return std::numeric_limits<double>::infinity();
  std::vector<const ::tunefleet::v1::ProblemVar*> by_name;
  for (const auto& va : a.vars()) by_name.push_back(&va);
  std::sort(by_name.begin(), by_name.end(),
            [](const auto* x, const auto* y) { return x->name() < y->name(); });
  double distance = 0;
  for (const auto* pa : by_name) {
    const auto& va = *pa;
    const ::tunefleet::v1::ProblemVar* match = nullptr;
    for (const auto& vb : b.vars()) {
      if (vb.name() == va.name()) match = &vb;
    }
    if (!match) return std::numeric_limits<double>::infinity();
    distance += std::abs(ProblemScale(va.value()) - ProblemScale(match->value()));
  }
  return distance;
}

}  // namespace tf::kernelspec
