#include "search/space.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <numeric>

namespace tf::search {

std::string ValueText(const Value& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) {
    // The shortest text that reads back as the same number: 0.1, not
    // 0.10000000000000001, as a user writes it in a spec.
    char text[32];
    return std::string(text, std::to_chars(text, text + sizeof text, *d).ptr);
  }
  return std::get<std::string>(value);
}

bool Parameter::ordinal() const {
  return std::none_of(values.begin(), values.end(),
                      [](const Value& v) { return std::holds_alternative<std::string>(v); });
}

Result<Space> Space::Create(std::vector<Parameter> params, std::vector<uint32_t> value_indices) {
  if (params.empty()) return Status::InvalidArgument("a search space needs at least one parameter");
  for (const Parameter& p : params) {
    if (p.values.empty()) return Status::InvalidArgument("parameter " + p.name + " has no values");
  }
  if (value_indices.size() % params.size() != 0) {
    return Status::InvalidArgument("value indices are not a whole number of configurations");
  }
  Space space;
  space.params_ = std::move(params);
  space.indices_ = std::move(value_indices);
  space.count_ = space.indices_.size() / space.params_.size();
  if (space.count_ > UINT32_MAX) {
    return Status::InvalidArgument("a search space holds at most 2^32-1 configurations");
  }
  const size_t width = space.params_.size();
  for (size_t i = 0; i < space.indices_.size(); ++i) {
    const Parameter& p = space.params_[i % width];
    if (space.indices_[i] >= p.values.size()) {
      return Status::InvalidArgument("configuration " + std::to_string(i / width) +
                                     ": value index " + std::to_string(space.indices_[i]) +
                                     " is outside the " + std::to_string(p.values.size()) +
                                     " values of " + p.name);
    }
  }
  space.sorted_.resize(space.count_);
  std::iota(space.sorted_.begin(), space.sorted_.end(), ConfigId{0});
  std::sort(space.sorted_.begin(), space.sorted_.end(), [&](ConfigId a, ConfigId b) {
    return space.Compare(space.config(a), space.config(b)) < 0;
  });
  for (size_t i = 1; i < space.count_; ++i) {
    if (space.Compare(space.config(space.sorted_[i - 1]), space.config(space.sorted_[i])) == 0) {
      return Status::InvalidArgument("configuration " + space.Describe(space.sorted_[i]) +
                                     " is listed twice");
    }
  }
  return space;
}

int Space::Compare(const uint32_t* a, const uint32_t* b) const {
  for (size_t p = 0; p < params_.size(); ++p) {
    if (a[p] != b[p]) return a[p] < b[p] ? -1 : 1;
  }
  return 0;
}

std::optional<ConfigId> Space::Find(const uint32_t* value_index) const {
  auto it = std::lower_bound(
      sorted_.begin(), sorted_.end(), value_index,
      [&](ConfigId id, const uint32_t* key) { return Compare(config(id), key) < 0; });
  if (it == sorted_.end() || Compare(config(*it), value_index) != 0) return std::nullopt;
  return *it;
}

std::string Space::Describe(ConfigId id) const {
  std::string text;
  const uint32_t* c = config(id);
  for (size_t p = 0; p < params_.size(); ++p) {
    if (p) text += ',';
    text += params_[p].name + "=" + ValueText(params_[p].values[c[p]]);
  }
  return text;
}

std::string Space::Key(ConfigId id) const {
  std::map<std::string, std::string> values;
  const uint32_t* c = config(id);
  for (size_t p = 0; p < params_.size(); ++p) {
    values[params_[p].name] = ValueText(params_[p].values[c[p]]);
  }
  std::string key;
  for (const auto& [name, value] : values) key += (key.empty() ? "" : ",") + name + "=" + value;
  return key;
}

}  // namespace tf::search
