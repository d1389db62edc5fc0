#include "client/best_config_cache.h"

#include <functional>
#include <mutex>

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

Result<v1::QueryBestResponse> BestConfigCache::Ask(const BestConfigKey& key) const {
  if (client_) return client_->QueryBest(key.kernel(), key.problem(), key.device_class());
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
    for (const auto& e : exported_) {
      if (e.kernel() == key.kernel()) tuned.push_back(&e);
    }
    return Status::NotFound(kernelspec::NotTunedMessage(request, tuned, " in the exported file"));
  }
  v1::QueryBestResponse answer = *found;
  answer.set_exact(exact);
  return answer;
}

Result<BestConfig> BestConfigCache::Lookup(const BestConfigKey& key) {
  using Clock = std::chrono::steady_clock;
  {
    std::shared_lock lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end() && Clock::now() < it->second.expires) return it->second.answer;
  }
  {
    std::unique_lock lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      if (Clock::now() < it->second.expires || it->second.asking) return it->second.answer;
      it->second.asking = true;
    }
  }
  // Asked without the lock: a slow coordinator must not stall hits on other
  // keys. Concurrent first lookups of one key may each ask.
  Result<v1::QueryBestResponse> answer = Ask(key);
  const Code code = answer.status().code();
  const bool unreachable = code == Code::kUnavailable || code == Code::kDeadlineExceeded;
  std::unique_lock lock(mu_);
  auto it = entries_.find(key);
  if (!answer.ok() && code != Code::kNotFound && !unreachable) {
    if (it != entries_.end()) it->second.asking = false;
    return answer.status();
  }
  if (unreachable) {
    Entry& entry = it != entries_.end()
                       ? it->second
                       : entries_.insert_or_assign(key, Entry{answer.status(), {}}).first->second;
    entry.expires = Clock::now() + options_.unreachable_retry;
    entry.asking = false;
    return entry.answer;
  }
  const bool found = answer.ok();
  Entry entry{found ? Result<BestConfig>(
                          std::make_shared<const v1::QueryBestResponse>(std::move(answer).value()))
                    : Result<BestConfig>(answer.status()),
              Clock::now() + (found ? options_.ttl : options_.not_found_ttl)};
  entries_.insert_or_assign(key, entry);
  return entry.answer;
}

Result<v1::QueryBestResponse> BestConfigCache::Lookup(const std::string& kernel,
                                                      const v1::Problem& problem,
                                                      const std::string& device_class) {
  TF_ASSIGN_OR_RETURN(BestConfig best, Lookup(BestConfigKey(kernel, problem, device_class)));
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
