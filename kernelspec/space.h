// The search space of one (spec, problem, device): the configurations of the
// tunable parameters that satisfy every constraint.
//
// Parameters are bound in spec order, and each constraint is checked as soon
// as the last parameter it uses is bound, so a failing prefix prunes its whole
// subtree. A constraint that cannot be evaluated for a configuration (division
// by zero, a string in arithmetic) excludes that configuration.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "kernelspec/expr.h"
#include "tunefleet/v1/common.pb.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::kernelspec {

namespace v1 = ::tunefleet::v1;

// Bound in constraints as device.NAME.
using DeviceProperties = std::map<std::string, int64_t>;

class SearchSpace {
 public:
  // Errors name the constraint and the unknown variable or device property.
  static Result<SearchSpace> Create(const v1::KernelSpec& spec, const v1::Problem& problem,
                                    const DeviceProperties& device);

  // Product of the parameter sizes, saturating at UINT64_MAX.
  uint64_t CartesianSize() const { return cartesian_size_; }

  // Counts without visiting configurations: only the parameters that some
  // constraint uses are walked; the rest multiply the count. Saturating.
  uint64_t CountValid() const;

  // Told, about every 2^16 steps of a walk, the valid configurations found and
  // the fraction of the cartesian product walked so far; false stops the walk.
  using KeepGoing = std::function<bool(uint64_t found, double walked)>;
  // CountValid that can be stopped, for a space too large to count in the
  // time one has: the count so far, and whether it is all of them.
  uint64_t CountValid(const KeepGoing& keep_going, bool* complete) const;

  // Valid configurations in odometer order (params in spec order, the last
  // fastest). `visit` returns false to stop. The Config is reused between calls.
  void Enumerate(const std::function<bool(const v1::Config&)>& visit) const;

  // The same walk without building protos: value_index[p] indexes the values of
  // parameter p. MakeConfig turns one into a Config.
  void EnumerateIndices(const std::function<bool(const uint32_t* value_index)>& visit) const;
  // Stopped by `keep_going` as CountValid is; false when it stopped the walk.
  bool EnumerateIndices(const std::function<bool(const uint32_t* value_index)>& visit,
                        const KeepGoing& keep_going) const;
  v1::Config MakeConfig(const uint32_t* value_index) const;

  // Random with search.max_candidates: min(max_candidates, limit) distinct
  // valid configurations drawn uniformly, the same for the same seed; all of
  // them when the space is smaller; fewer when the space is too large to walk
  // and valid configurations too rare to draw that many in a bounded number
  // of draws (about a second). Otherwise every valid configuration, an
  // error when there are more than `limit` (strategies then choose among them).
  Result<std::vector<v1::Config>> Select(const v1::Search& search, uint64_t limit) const;

  // Whether the configuration of these value indices (one per parameter, as for
  // MakeConfig) satisfies every constraint.
  bool Satisfies(const uint32_t* value_index) const;

 private:
  struct Param {
    std::string name;
    std::vector<v1::Value> values;
  };
  struct Constraint {
    kernelspec::Expr expr;
    std::vector<int> slot_of_variable;  // slots: the parameters, then constants_
  };
  // Scratch state of one walk; holds views of params_, so it never outlives *this.
  class Walker;

  SearchSpace() = default;

  // Visits the index tuples of the first `depth` parameters that satisfy the
  // constraints using only those; visit(value_index) returns false to stop.
  // False when `keep_going` (when given) stopped it.
  bool Walk(int depth, const std::function<bool(const uint32_t*)>& visit,
            const std::function<bool(double walked)>* keep_going = nullptr) const;
  // Saturating product of the sizes of parameters [from_param, to_param).
  uint64_t ProductOfSizes(int from_param, int to_param) const;
  // Configurations each valid prefix of the constrained parameters stands for.
  uint64_t FreeProduct() const {
    return ProductOfSizes(constrained_depth_, static_cast<int>(params_.size()));
  }
  std::vector<v1::Config> SampleExact(uint64_t count, uint64_t seed) const;
  std::vector<v1::Config> SampleByRejection(uint64_t count, uint64_t seed) const;

  std::vector<Param> params_;
  std::vector<kernelspec::ScalarRef> constants_;  // problem variables and device properties
  std::vector<std::vector<Constraint>> checks_;   // checks_[p]: checked once parameter p is bound
  int constrained_depth_ = 0;  // parameters at or after this one appear in no constraint
  bool empty_ = false;         // a constraint without parameters is false
  uint64_t cartesian_size_ = 0;
};

}  // namespace tf::kernelspec
