#include "client/best_config_cache.h"

#include <functional>
#include <mutex>
#include <set>
#include <utility>

#include "client/best_export.h"
#include "common/files.h"
#include "kernelspec/best_query.h"
#include "kernelspec/config.h"

namespace tf::client {

BestConfigKey::BestConfigKey(std::string kernel, v1::Problem problem, std::string device_class)
    : kernel_(std::move(kernel)),
      problem_(std::move(problem)),
      device_class_(std::move(device_class)),
      text_(kernel_ + '\0' + kernelspec::ProblemKey(problem_) + '\0' + device_class_),
      hash_(std::hash<std::string>()(text_)) {}

BestConfigCache::BestConfigCache(Client* client, BestConfigCacheOptions options)
    : client_(client), options_(options) {}

Result<std::unique_ptr<BestConfigCache>> BestConfigCache::Offline(
    const std::string& export_json_path, BestConfigCacheOptions options) {
  TF_ASSIGN_OR_RETURN(std::string text, ReadFile(export_json_path));
  TF_ASSIGN_OR_RETURN(auto entries, ReadExportJson(text, export_json_path));
  auto cache = std::make_unique<BestConfigCache>(nullptr, options);
  cache->exported_ = std::move(entries);
  return cache;
}

Result<v1::QueryBestResponse> BestConfigCache::Ask(const BestConfigKey& key,
                                                   v1::NotFoundReason* not_found_reason) const {
  if (client_) {
    return client_->QueryBest(key.kernel(), key.problem(), key.device_class(), not_found_reason);
  }
  v1::QueryBestRequest request;
  request.set_kernel(key.kernel());
  *request.mutable_problem() = key.problem();
  request.set_device_class(key.device_class());
  // Refused and explained as the coordinator does (kernelspec/best_query.h).
  TF_RETURN_IF_ERROR(kernelspec::CheckBestQuery(request));
  bool exact = false;
  const v1::QueryBestResponse* found = LookupExported(exported_, request, &exact);
  if (!found) {
    std::vector<const v1::QueryBestResponse*> tuned;
    std::set<std::string> kernels;
    for (const auto& e : exported_) {
      if (e.kernel() == key.kernel()) tuned.push_back(&e);
      kernels.insert(e.kernel());
    }
    kernelspec::NotTuned not_tuned = kernelspec::ExplainNotTuned(
        request, tuned, " in the exported file", {kernels.begin(), kernels.end()});
    *not_found_reason = not_tuned.reason;
    return Status::NotFound(std::move(not_tuned.message));
  }
  v1::QueryBestResponse answer = *found;
  answer.set_exact(exact);
  return answer;
}

Result<BestConfig> BestConfigCache::Answer(const Entry& entry,
                                           v1::NotFoundReason* not_found_reason) {
  if (not_found_reason && entry.answer.status().code() == Code::kNotFound) {
    *not_found_reason = entry.not_found_reason;
  }
  return entry.answer;
}

Result<BestConfig> BestConfigCache::Lookup(const BestConfigKey& key,
                                           v1::NotFoundReason* not_found_reason) {
  using Clock = std::chrono::steady_clock;
  {
    std::shared_lock lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end() && Clock::now() < it->second.expires) {
      return Answer(it->second, not_found_reason);
    }
  }
  {
    std::unique_lock lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      if (Clock::now() < it->second.expires || it->second.asking) {
        return Answer(it->second, not_found_reason);
      }
      it->second.asking = true;
    }
  }
  // Asked without the lock: a slow coordinator must not stall hits on other
  // keys. Concurrent first lookups of one key may each ask.
  v1::NotFoundReason reason = v1::NOT_FOUND_REASON_UNSPECIFIED;
  Result<v1::QueryBestResponse> answer = Ask(key, &reason);
  const Code code = answer.status().code();
  const bool unreachable = code == Code::kUnavailable || code == Code::kDeadlineExceeded;
  std::unique_lock lock(mu_);
  auto it = entries_.find(key);
  if (!answer.ok() && code != Code::kNotFound && !unreachable) {
    if (it != entries_.end()) it->second.asking = false;
    return answer.status();
  }
  if (unreachable) {
    Entry& entry =
        it != entries_.end()
            ? it->second
            : entries_.insert_or_assign(key, Entry{answer.status(), {}, {}}).first->second;
    entry.expires = Clock::now() + options_.unreachable_retry;
    entry.asking = false;
    return Answer(entry, not_found_reason);
  }
  const bool found = answer.ok();
  Entry entry{found ? Result<BestConfig>(
                          std::make_shared<const v1::QueryBestResponse>(std::move(answer).value()))
                    : Result<BestConfig>(answer.status()),
              found ? v1::NOT_FOUND_REASON_UNSPECIFIED : reason,
              Clock::now() + (found ? options_.ttl : options_.not_found_ttl)};
  entries_.insert_or_assign(key, entry);
  return Answer(entry, not_found_reason);
}

Result<v1::QueryBestResponse> BestConfigCache::Lookup(const std::string& kernel,
                                                      const v1::Problem& problem,
                                                      const std::string& device_class,
                                                      v1::NotFoundReason* not_found_reason) {
  TF_ASSIGN_OR_RETURN(BestConfig best,
                      Lookup(BestConfigKey(kernel, problem, device_class), not_found_reason));
  return *best;
}

void BestConfigCache::Invalidate(const BestConfigKey& key) {
  std::unique_lock lock(mu_);
  entries_.erase(key);
}

void BestConfigCache::InvalidateAll() {
  std::unique_lock lock(mu_);
  entries_.clear();
}

}  // namespace tf::client
