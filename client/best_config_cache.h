// BestConfigCache: best-config lookups answered from memory after the first
// one reached the coordinator. Built for the hot path of an application that
// picks a kernel configuration per call: a hit on a tuned kernel with a
// prebuilt BestConfigKey takes a shared lock, one hash probe and a clock
// read, and allocates nothing.
//
// Offline, it answers from a file of exported best configurations instead,
// for applications that ship their tuned configurations.
//
// Answers expire after a TTL so that newly tuned results are picked up;
// "not tuned" answers expire sooner. An expired answer is asked again by one
// lookup while the others go on with it. When the coordinator cannot be
// reached (down, or no answer within the client's call timeout), the last
// answer is kept and served, and a key never answered returns that error;
// either way the coordinator is asked again only after `unreachable_retry`,
// so an outage costs one timeout per key per retry, not one per lookup.
// Other errors (a refused token) are returned and not kept. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "client/client.h"

namespace tf::client {

struct BestConfigCacheOptions {
  std::chrono::steady_clock::duration ttl = std::chrono::seconds(60);
  std::chrono::steady_clock::duration not_found_ttl = std::chrono::seconds(5);
  std::chrono::steady_clock::duration unreachable_retry = std::chrono::seconds(5);
};

// A lookup key built once (kernel, problem, device class; the problem's
// variable order does not matter) and reused for every lookup.
class BestConfigKey {
 public:
  BestConfigKey(std::string kernel, v1::Problem problem, std::string device_class);

  const std::string& kernel() const { return kernel_; }
  const v1::Problem& problem() const { return problem_; }
  const std::string& device_class() const { return device_class_; }

 private:
  friend class BestConfigCache;

  std::string kernel_;
  v1::Problem problem_;
  std::string device_class_;
  std::string text_;  // identity: kernel, problem key and device class
  size_t hash_;
};

// A shared, immutable answer: handing it out costs a reference count.
using BestConfig = std::shared_ptr<const v1::QueryBestResponse>;

class BestConfigCache {
 public:
  // `client` must outlive the cache.
  explicit BestConfigCache(Client* client, BestConfigCacheOptions options = {});
  // Offline mode: answers from an exported JSON file (`tunefleet export
  // --format json`, client/best_export.h) as the coordinator would, the
  // nearest tuned problem included; no coordinator is ever asked. Errors name
  // the file and the field.
  static Result<std::unique_ptr<BestConfigCache>> Offline(const std::string& export_json_path,
                                                          BestConfigCacheOptions options = {});

  // The hot path. Code::kNotFound when nothing of the kernel is tuned on a
  // matching device, saying what it is tuned for, and then *not_found_reason,
  // when given, says which way (kernelspec::ExplainNotTuned, online and
  // offline alike): NOT_TUNED, for an application to fall back on its own
  // configuration quietly, or OTHER_VARIABLES / OTHER_DEVICE_CLASS, a query
  // that will not find anything until it is mended (a misspelt variable or
  // device class), worth telling someone. kInvalidArgument for no kernel, no
  // problem variables or one given twice.
  Result<BestConfig> Lookup(const BestConfigKey& key,
                            v1::NotFoundReason* not_found_reason = nullptr);
  // Convenience for occasional lookups: builds the key and copies the answer.
  Result<v1::QueryBestResponse> Lookup(const std::string& kernel, const v1::Problem& problem,
                                       const std::string& device_class,
                                       v1::NotFoundReason* not_found_reason = nullptr);

  // The next lookup of the key asks the coordinator again.
  void Invalidate(const BestConfigKey& key);
  void InvalidateAll();

 private:
  struct Entry {
    Result<BestConfig> answer;  // a configuration, not-found, or unreachable
    v1::NotFoundReason not_found_reason = v1::NOT_FOUND_REASON_UNSPECIFIED;  // of a not-found
    std::chrono::steady_clock::time_point expires;
    bool asking = false;  // a lookup is asking again; the others serve `answer`
  };
  struct KeyHash {
    size_t operator()(const BestConfigKey& key) const { return key.hash_; }
  };
  struct KeyEqual {
    bool operator()(const BestConfigKey& a, const BestConfigKey& b) const {
      return a.text_ == b.text_;
    }
  };

  Result<v1::QueryBestResponse> Ask(const BestConfigKey& key,
                                    v1::NotFoundReason* not_found_reason) const;
  // entry.answer, its reason given to *not_found_reason when it is a not-found.
  static Result<BestConfig> Answer(const Entry& entry, v1::NotFoundReason* not_found_reason);

  Client* client_;                               // null: offline
  std::vector<v1::QueryBestResponse> exported_;  // offline: what answers
  BestConfigCacheOptions options_;
  std::shared_mutex mu_;
  std::unordered_map<BestConfigKey, Entry, KeyHash, KeyEqual> entries_;
};

}  // namespace tf::client
