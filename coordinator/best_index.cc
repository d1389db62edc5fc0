#include "coordinator/best_index.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <set>

#include "kernelspec/best_query.h"
#include "kernelspec/config.h"
#include "kernelspec/problem_distance.h"

namespace tf::coordinator {

using kernelspec::ProblemDistance;

namespace {

std::string CompletedKey(const std::string& kernel, const std::string& fingerprint,
                         const std::string& device_class) {
  return kernel + '\n' + fingerprint + '\n' + device_class;
}

}  // namespace

void BestIndex::Put(const db::BestRow& row, int64_t job_id_hint) {
  Entry entry;
  entry.fingerprint = row.fingerprint;
  entry.fingerprint_created_ms = row.fingerprint_created_ms;
  entry.device_class = row.device_class;
  entry.problem_key = row.problem_key;
  auto problem = kernelspec::ParseProblem(row.problem_key);
  if (problem.ok()) entry.problem = *problem;
  auto config = kernelspec::ParseConfigKey(row.result.config_key);
  auto& a = entry.answer;
  a.set_found(true);
  a.set_exact(true);
  a.set_kernel(row.kernel);
  *a.mutable_problem() = entry.problem;
  a.set_device_class(row.device_class);
  if (config.ok()) *a.mutable_config() = *config;
  // A re-timing's winner answers with the figure it won by.
  *a.mutable_timing() = db::AnsweringTiming(row.result);
  a.set_confirmed_by_retiming(row.result.retime_winner);
  a.set_fingerprint(row.fingerprint);
  a.set_job_id(job_id_hint ? job_id_hint : row.result.job_id);

  std::unique_lock lock(mu_);
  entry.completed =
      completed_.count(CompletedKey(row.kernel, entry.fingerprint, entry.device_class)) > 0;
  if (entry.completed) AnswerLocked(row.kernel, entry.device_class, entry.fingerprint_created_ms);
  auto upsert = [&](std::vector<Entry>& entries) {
    for (auto& e : entries) {
      if (e.fingerprint == entry.fingerprint && e.problem_key == entry.problem_key &&
          e.device_class == entry.device_class) {
        e = entry;
        return;
      }
    }
    entries.push_back(entry);
  };
  upsert(by_problem_[row.kernel + '\n' + entry.problem_key]);
  upsert(by_kernel_[row.kernel]);
}

void BestIndex::Complete(const db::CompletedTuning& tuning) {
  std::unique_lock lock(mu_);
  int64_t& last = last_completed_ms_[tuning.kernel][tuning.device_class];
  last = std::max(last, tuning.completed_ms);
  if (!completed_.insert(CompletedKey(tuning.kernel, tuning.fingerprint, tuning.device_class))
           .second)
    return;
  auto it = by_kernel_.find(tuning.kernel);
  if (it == by_kernel_.end()) return;
  auto complete = [&](Entry& e) {
    if (e.fingerprint != tuning.fingerprint || e.device_class != tuning.device_class) return false;
    e.completed = true;
    return true;
  };
  bool any = false;
  for (Entry& e : it->second) {
    if (!complete(e)) continue;
    any = true;
    for (Entry& same : by_problem_[tuning.kernel + '\n' + e.problem_key]) complete(same);
  }
  if (any) AnswerLocked(tuning.kernel, tuning.device_class, tuning.fingerprint_created_ms);
}

void BestIndex::AnswerLocked(const std::string& kernel, const std::string& device_class,
                             int64_t fingerprint_created_ms) {
  auto [it, inserted] = newest_[kernel].emplace(device_class, fingerprint_created_ms);
  if (!inserted) it->second = std::max(it->second, fingerprint_created_ms);
}

int64_t BestIndex::NewestLocked(const std::string& kernel, const std::string& device_class) const {
  auto classes = newest_.find(kernel);
  if (classes == newest_.end()) return -1;
  auto it = classes->second.find(device_class);
  return it == classes->second.end() ? -1 : it->second;
}

bool BestIndex::AnswersLocked(const std::string& kernel, const Entry& e,
                              const std::string& device_class) const {
  return e.completed && (device_class.empty() || e.device_class == device_class) &&
         e.fingerprint_created_ms == NewestLocked(kernel, e.device_class);
}

const BestIndex::Entry* BestIndex::Nearest(const std::vector<Entry>& entries,
                                           const v1::QueryBestRequest& request) const {
  const Entry* best = nullptr;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const auto& e : entries) {
    if (!AnswersLocked(request.kernel(), e, request.device_class())) continue;
    double distance = ProblemDistance(request.problem(), e.problem);
    if (!best ? distance < best_distance
              : kernelspec::AnswersBefore(distance, e.answer.timing().median_ns(), best_distance,
                                          best->answer.timing().median_ns())) {
      best = &e;
      best_distance = distance;
    }
  }
  return best;
}

v1::QueryBestResponse BestIndex::Query(const v1::QueryBestRequest& request) const {
  std::string problem_key = kernelspec::ProblemKey(request.problem());
  v1::QueryBestResponse response;
  std::shared_lock lock(mu_);
  // Exact: the fastest answering entry for this problem.
  const Entry* exact = nullptr;
  if (auto it = by_problem_.find(request.kernel() + '\n' + problem_key); it != by_problem_.end()) {
    for (const auto& e : it->second) {
      if (!AnswersLocked(request.kernel(), e, request.device_class())) continue;
      if (!exact || e.answer.timing().median_ns() < exact->answer.timing().median_ns()) exact = &e;
    }
  }
  const Entry* entry = exact;
  if (!entry) {
    auto it = by_kernel_.find(request.kernel());
    if (it == by_kernel_.end()) {
      std::vector<std::string> kernels;  // for a misspelt name's hint
      for (const auto& [kernel, entries] : by_kernel_) kernels.push_back(kernel);
      kernelspec::SetNotTuned(request, {}, &response, kernels);
      return response;
    }
    entry = Nearest(it->second, request);
    if (!entry) {
      // What answers on any class: what the kernel is tuned for.
      std::vector<const v1::QueryBestResponse*> tuned;
      for (const auto& e : it->second) {
        if (AnswersLocked(request.kernel(), e, "")) tuned.push_back(&e.answer);
      }
      kernelspec::SetNotTuned(request, tuned, &response);
      return response;
    }
  }
  response = entry->answer;
  response.set_exact(entry == exact);
  return response;
}

std::map<std::pair<std::string, std::string>, const BestIndex::Entry*> BestIndex::ListedLocked(
    const std::string& kernel, const std::vector<Entry>& entries,
    const std::string& device_class) const {
  std::map<std::pair<std::string, std::string>, const Entry*> listed;
  for (const auto& e : entries) {
    if (!AnswersLocked(kernel, e, device_class)) continue;
    const Entry*& c = listed[{e.problem_key, e.device_class}];
    if (!c || e.answer.timing().median_ns() < c->answer.timing().median_ns()) c = &e;
  }
  return listed;
}

std::vector<v1::QueryBestResponse> BestIndex::List(const std::string& kernel,
                                                   const std::string& device_class) const {
  std::shared_lock lock(mu_);
  auto it = by_kernel_.find(kernel);
  if (it == by_kernel_.end()) return {};
  std::vector<v1::QueryBestResponse> entries;
  for (const auto& [key, e] : ListedLocked(kernel, it->second, device_class)) {
    entries.push_back(e->answer);
  }
  return entries;
}

std::vector<v1::TunedKernel> BestIndex::Kernels(const std::string& device_class) const {
  std::shared_lock lock(mu_);
  std::vector<v1::TunedKernel> kernels;
  for (const auto& [kernel, entries] : by_kernel_) {
    const auto listed = ListedLocked(kernel, entries, device_class);
    if (listed.empty()) continue;
    std::set<std::string> classes;
    for (const auto& [key, e] : listed) classes.insert(key.second);
    v1::TunedKernel& tuned = kernels.emplace_back();
    tuned.set_name(kernel);
    tuned.set_tuned(static_cast<int64_t>(listed.size()));
    // Only a completed tuning answers: each class listed has completed.
    const auto& completed_ms = last_completed_ms_.at(kernel);
    for (const std::string& c : classes) {
      tuned.add_device_classes(c);
      tuned.set_last_tuned_unix_ms(std::max(tuned.last_tuned_unix_ms(), completed_ms.at(c)));
    }
  }
  std::sort(kernels.begin(), kernels.end(),
            [](const v1::TunedKernel& a, const v1::TunedKernel& b) { return a.name() < b.name(); });
  return kernels;
}

int64_t BestIndex::JobOf(const std::string& kernel, const std::string& fingerprint,
                         const std::string& problem_key, const std::string& device_class) const {
  std::shared_lock lock(mu_);
  auto it = by_problem_.find(kernel + '\n' + problem_key);
  if (it == by_problem_.end()) return 0;
  for (const Entry& e : it->second) {
    if (e.fingerprint == fingerprint && e.device_class == device_class) return e.answer.job_id();
  }
  return 0;
}

size_t BestIndex::size() const {
  std::shared_lock lock(mu_);
  size_t n = 0;
  for (const auto& [kernel, entries] : by_kernel_) n += entries.size();
  return n;
}

}  // namespace tf::coordinator
