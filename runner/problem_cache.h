// Problems the runner prepared for earlier leases: inputs on the device and
// reference outputs, kept so that the leases of one job make each problem
// once instead of once per lease. Bounded by bytes and by count; the least
// recently used problems go first.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernelspec/expr.h"
#include "runner/backend.h"
#include "runner/host_buffers.h"

namespace tf::runner {

// One problem ready for candidates: the device holds its inputs and, when
// the lease has a reference, the reference outputs.
struct PreparedProblem {
  kernelspec::Bindings vars;               // problem variables
  std::vector<int> outputs;                // indices of output buffers
  bool has_reference = false;              // outputs are checked against the reference
  std::vector<int64_t> scalars;            // in ScalarNames(spec) order
  double flops = 0;                        // 0: no throughput
  std::unique_ptr<DeviceBuffers> buffers;  // every spec buffer, inputs pristine
  // The fastest full timing on this device so far, for search.early_stop:
  // the coordinator's best comes with the lease, too late for candidates
  // leased together before any result.
  std::optional<double> best_ns;

  // Device memory held.
  int64_t bytes() const;
};

class ProblemCache {
 public:
  ProblemCache(int64_t max_bytes, size_t max_problems);

  // The problem stored under `key`, now the most recently used; null when
  // there is none.
  PreparedProblem* Find(const std::string& key);
  // Stores `problem` under `key`, which holds none yet, as the most recently
  // used, then drops the least recently used others while over a limit: the
  // newest is kept even when it alone is over. The pointer is valid until
  // the next Insert or Clear.
  PreparedProblem* Insert(const std::string& key, PreparedProblem problem);
  // Drops every problem; their device buffers are freed.
  void Clear();

  // Takes effect at the next Insert.
  void set_max_bytes(int64_t max_bytes) { max_bytes_ = max_bytes; }

  size_t size() const { return entries_.size(); }
  int64_t bytes() const { return bytes_; }

 private:
  struct Entry {
    std::string key;
    int64_t bytes;
    PreparedProblem problem;
  };

  int64_t max_bytes_;
  const size_t max_problems_;
  std::list<Entry> entries_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> by_key_;
  int64_t bytes_ = 0;
};

}  // namespace tf::runner
