#include "runner/problem_cache.h"

namespace tf::runner {

int64_t PreparedProblem::bytes() const { return buffers == nullptr ? 0 : buffers->bytes(); }

ProblemCache::ProblemCache(int64_t max_bytes, size_t max_problems)
    : max_bytes_(max_bytes), max_problems_(max_problems) {}

PreparedProblem* ProblemCache::Find(const std::string& key) {
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return nullptr;
  entries_.splice(entries_.begin(), entries_, it->second);
  return &it->second->problem;
}

PreparedProblem* ProblemCache::Insert(const std::string& key, PreparedProblem problem) {
  const int64_t bytes = problem.bytes();
  entries_.push_front(Entry{key, bytes, std::move(problem)});
  by_key_[key] = entries_.begin();
  bytes_ += bytes;
  while (entries_.size() > 1 && (bytes_ > max_bytes_ || entries_.size() > max_problems_)) {
    bytes_ -= entries_.back().bytes;
    by_key_.erase(entries_.back().key);
    entries_.pop_back();
  }
  return &entries_.front().problem;
}

void ProblemCache::Clear() {
  by_key_.clear();
  entries_.clear();
  bytes_ = 0;
}

}  // namespace tf::runner
