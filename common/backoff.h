// Exponential backoff for retrying a coordinator that does not answer (the
// worker's calls, the client's watch of a job).
#pragma once

#include <algorithm>
#include <chrono>

namespace tf {

class Backoff {
 public:
  Backoff(std::chrono::milliseconds first, std::chrono::milliseconds max)
      : first_(first), max_(max), next_(first) {}

  // The wait before the next attempt: doubles each time up to max.
  std::chrono::milliseconds Next() {
    auto wait = next_;
    next_ = std::min(next_ * 2, max_);
    return wait;
  }
  void Reset() { next_ = first_; }

 private:
  const std::chrono::milliseconds first_, max_;
  std::chrono::milliseconds next_;
};

}  // namespace tf
