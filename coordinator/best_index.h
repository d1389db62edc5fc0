// In-memory index of the best configuration per (kernel, problem, device
// class), answering QueryBest without touching the database. When the exact
// problem was never tuned, the nearest tuned problem of the kernel answers
// (kernelspec::ProblemDistance: sum over variables of |log2(a/b)|), marked
// inexact.
//
// Per (kernel, device class), one fingerprint answers: the newest (by its
// first submission) of those with a completed tuning there (Complete: a job
// of it that succeeded on the class, or imported results) and an entry
// there. The entries of a fingerprint still being tuned, or whose jobs were
// cancelled or failed, are kept but do not answer; until it completes, the
// previous completed fingerprint goes on answering.
//
// The kernels it answers for are listed too (Kernels), with when each was
// last tuned: the newest completed tuning per (kernel, device class).
//
// Thread-safe: many readers, one writer at a time.
#pragma once

#include <map>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "db/tuning_db.h"
#include "tunefleet/v1/results.pb.h"
#include "tunefleet/v1/tunefleet.pb.h"

namespace tf::coordinator {

namespace v1 = ::tunefleet::v1;

class BestIndex {
 public:
  // Adds or replaces the entry of (fingerprint, problem, device class).
  void Put(const db::BestRow& row, int64_t job_id_hint = 0);
  // The kernel's fingerprint has a completed tuning on the device class: its
  // entries there may answer from now on. Every completion counts for when
  // the kernel was last tuned, another of the same fingerprint too.
  void Complete(const db::CompletedTuning& tuning);
  // device_class empty: any device class, each answering from its own
  // fingerprint; the exact problem, else the nearest, the fastest on ties.
  // Found nothing: `not_found` says why and `not_found_reason` which way
  // (kernelspec::ExplainNotTuned, as the offline client says it).
  v1::QueryBestResponse Query(const v1::QueryBestRequest& request) const;
  // Every (problem, device class) of the kernel (of `device_class` only when
  // not empty), each as an exact query for its class answers; by problem
  // key, then device class.
  std::vector<v1::QueryBestResponse> List(const std::string& kernel,
                                          const std::string& device_class) const;
  // Every kernel with an entry that List would list (of `device_class` only
  // when not empty), by name: its count of those entries, their device
  // classes, and the newest completion on those classes. The owner is not
  // the index's to know: left empty.
  std::vector<v1::TunedKernel> Kernels(const std::string& device_class) const;
  // The job of the entry of (fingerprint, problem, device class), answering
  // or not; 0 when there is none.
  int64_t JobOf(const std::string& kernel, const std::string& fingerprint,
                const std::string& problem_key, const std::string& device_class) const;
  size_t size() const;

 private:
  struct Entry {
    std::string fingerprint;
    int64_t fingerprint_created_ms = 0;
    bool completed = false;  // its fingerprint's tuning on its class
    std::string device_class;
    std::string problem_key;
    v1::Problem problem;
    v1::QueryBestResponse answer;  // exact form; Query adjusts `exact`
  };
  // The answering fingerprint's creation time for `device_class` of the
  // kernel; -1 when none answers.
  int64_t NewestLocked(const std::string& kernel, const std::string& device_class) const;
  // Whether `e` answers a query for `device_class` (empty: any): it is of its
  // class's answering fingerprint, so that every class answers from its own.
  bool AnswersLocked(const std::string& kernel, const Entry& e,
                     const std::string& device_class) const;
  // Makes a completed fingerprint with entries on `device_class` answer
  // there if it is newer than the one answering.
  void AnswerLocked(const std::string& kernel, const std::string& device_class,
                    int64_t fingerprint_created_ms);
  const Entry* Nearest(const std::vector<Entry>& entries,
                       const v1::QueryBestRequest& request) const;
  // Per (problem key, device class) of the kernel's `entries`: the fastest
  // that answers for `device_class` (empty: any), as an exact query for its
  // class answers.
  std::map<std::pair<std::string, std::string>, const Entry*> ListedLocked(
      const std::string& kernel, const std::vector<Entry>& entries,
      const std::string& device_class) const;

  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, std::vector<Entry>> by_kernel_;
  // kernel + '\n' + problem key -> entries of any class and fingerprint, so
  // that an exact answer costs one hash probe, however many shapes are tuned.
  std::unordered_map<std::string, std::vector<Entry>> by_problem_;
  // kernel -> device class -> the answering fingerprint's created_ms: asked
  // for every entry a query looks at, so without building a key.
  std::unordered_map<std::string, std::unordered_map<std::string, int64_t>> newest_;
  // kernel + '\n' + fingerprint + '\n' + device class, for each completed
  // tuning: two kernels of one source complete apart.
  std::unordered_set<std::string> completed_;
  // kernel -> device class -> when its newest completed tuning there ended.
  std::unordered_map<std::string, std::unordered_map<std::string, int64_t>> last_completed_ms_;
};

}  // namespace tf::coordinator
