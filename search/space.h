// The space a search strategy sees: named parameters with ordered values, and
// the valid configurations among their combinations, each a tuple of value
// indices. Numeric parameters are ordinal (values ascending, neighbours are
// adjacent indices); string parameters are categorical.
//
// A configuration is named by its ConfigId, its position in the list the
// space was created from. Memory is the index tuples plus one uint32_t per
// configuration for lookup, so spaces of 10^6 configurations stay small.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/status.h"

namespace tf::search {

using ConfigId = uint32_t;
using Value = std::variant<int64_t, double, std::string>;

// "64", "0.5", "half": the form Kernel Tuner writes in cache keys.
std::string ValueText(const Value& value);

struct Parameter {
  std::string name;
  std::vector<Value> values;
  // Every value a number: ordered ascending, and distances between indices mean something.
  bool ordinal() const;
};

class Space {
 public:
  Space() = default;  // empty: no parameters, no configurations
  // `value_indices` holds params.size() indices per configuration, one
  // configuration after another. Errors: an index outside its parameter's
  // values, a configuration listed twice, a parameter without values.
  static Result<Space> Create(std::vector<Parameter> params, std::vector<uint32_t> value_indices);

  size_t size() const { return count_; }
  size_t num_params() const { return params_.size(); }
  const std::vector<Parameter>& params() const { return params_; }

  // The value indices of configuration `id` (< size()), num_params() of them.
  const uint32_t* config(ConfigId id) const { return &indices_[size_t{id} * params_.size()]; }

  // The configuration with these value indices, if it is in the space.
  // O(num_params * log size).
  std::optional<ConfigId> Find(const uint32_t* value_index) const;

  // "block_size_x=16,block_size_y=2,..." for messages.
  std::string Describe(ConfigId id) const;
  // Describe with the parameters sorted by name: one configuration has one
  // key in spaces that list the parameters in different orders.
  std::string Key(ConfigId id) const;

 private:
  int Compare(const uint32_t* a, const uint32_t* b) const;

  std::vector<Parameter> params_;
  std::vector<uint32_t> indices_;
  std::vector<ConfigId> sorted_;  // ids in lexicographic order of their tuples
  size_t count_ = 0;
};

}  // namespace tf::search
