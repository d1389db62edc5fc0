#include "client/best_config_cache.h"

#include <functional>
#include <mutex>

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

Result<BestConfig> BestConfigCache::Lookup(const BestConfigKey& key) {
  {
    std::shared_lock lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end() && std::chrono::steady_clock::now() < it->second.expires) {
      return it->second.answer;
    }
  }
  // Asked without the lock: a slow coordinator must not stall hits on other
  // keys. Concurrent misses of one key may each ask; the last answer stays.
  Result<v1::QueryBestResponse> answer =
      client_->QueryBest(key.kernel(), key.problem(), key.device_class());
  const bool not_found = answer.status().code() == Code::kNotFound;
  if (!answer.ok() && !not_found) return answer.status();
  Entry entry{
      answer.ok() ? Result<BestConfig>(
                        std::make_shared<const v1::QueryBestResponse>(std::move(answer).value()))
                  : Result<BestConfig>(answer.status()),
      std::chrono::steady_clock::now() + (not_found ? options_.not_found_ttl : options_.ttl)};
  std::unique_lock lock(mu_);
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
