#include "scheduler/best_index.h"

#include <cmath>
#include <limits>
#include <mutex>

#include "spec/config.h"

namespace tf::scheduler {
namespace {

double ProblemDistance(const v1::Problem& a, const v1::Problem& b) {
  if (a.vars_size() != b.vars_size()) return std::numeric_limits<double>::infinity();
  double distance = 0;
  for (const auto& va : a.vars()) {
    const v1::ProblemVar* match = nullptr;
    for (const auto& vb : b.vars()) {
      if (vb.name() == va.name()) match = &vb;
    }
    if (!match) return std::numeric_limits<double>::infinity();
    double x = std::max<int64_t>(va.value(), 1), y = std::max<int64_t>(match->value(), 1);
    distance += std::abs(std::log2(x / y));
  }
  return distance;
}

}  // namespace

void BestIndex::Put(const db::BestRow& row, int64_t job_id_hint) {
  Entry entry;
  entry.fingerprint = row.fingerprint;
  entry.fingerprint_created_ms = row.fingerprint_created_ms;
  entry.device_class = row.device_class;
  entry.problem_key = row.problem_key;
  auto problem = spec::ParseProblem(row.problem_key);
  if (problem.ok()) entry.problem = *problem;
  auto config = spec::ParseConfigKey(row.result.config_key);
  auto& a = entry.answer;
  a.set_found(true);
  a.set_exact(true);
  a.set_kernel(row.kernel);
  *a.mutable_problem() = entry.problem;
  a.set_device_class(row.device_class);
  if (config.ok()) *a.mutable_config() = *config;
  *a.mutable_timing() = row.result.timing;
  a.set_fingerprint(row.fingerprint);
  a.set_job_id(job_id_hint ? job_id_hint : row.result.job_id);

  std::unique_lock lock(mu_);
  auto& entries = by_kernel_[row.kernel];
  for (auto& e : entries) {
    if (e.fingerprint == entry.fingerprint && e.problem_key == entry.problem_key &&
        e.device_class == entry.device_class) {
      e = std::move(entry);
      return;
    }
  }
  entries.push_back(std::move(entry));
}

const BestIndex::Entry* BestIndex::Nearest(const std::vector<Entry>& entries,
                                           const v1::QueryBestRequest& request,
                                           const std::string& problem_key, bool* exact) const {
  // The newest fingerprint among entries of the requested device class.
  int64_t newest = -1;
  for (const auto& e : entries) {
    if (request.device_class().empty() || e.device_class == request.device_class()) {
      newest = std::max(newest, e.fingerprint_created_ms);
    }
  }
  const Entry* best = nullptr;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const auto& e : entries) {
    if (e.fingerprint_created_ms != newest) continue;
    if (!request.device_class().empty() && e.device_class != request.device_class()) continue;
    double distance = e.problem_key == problem_key ? 0 : ProblemDistance(request.problem(), e.problem);
    bool better = distance < best_distance ||
                  (distance == best_distance && best &&
                   e.answer.timing().median_ns() < best->answer.timing().median_ns());
    if (!best && distance != std::numeric_limits<double>::infinity()) better = true;
    if (better) {
      best = &e;
      best_distance = distance;
    }
  }
  *exact = best && best_distance == 0;
  return best;
}

v1::QueryBestResponse BestIndex::Query(const v1::QueryBestRequest& request) const {
  std::string problem_key = spec::ProblemKey(request.problem());
  std::shared_lock lock(mu_);
  auto it = by_kernel_.find(request.kernel());
  v1::QueryBestResponse response;
  if (it == by_kernel_.end()) return response;
  bool exact = false;
  const Entry* entry = Nearest(it->second, request, problem_key, &exact);
  if (!entry) return response;
  response = entry->answer;
  response.set_exact(exact);
  return response;
}

size_t BestIndex::size() const {
  std::shared_lock lock(mu_);
  size_t n = 0;
  for (const auto& [kernel, entries] : by_kernel_) n += entries.size();
  return n;
}

}  // namespace tf::scheduler
