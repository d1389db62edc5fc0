#include "kernelspec/params.h"

#include <string>

#include "kernelspec/config.h"

namespace tf::kernelspec {

namespace {

Status RangeError(const v1::Param& param, const std::string& message) {
  return Status::InvalidArgument("params." + param.name() + ": " + message);
}

Status CheckRange(const v1::Param& param) {
  const v1::Range& r = param.range();
  if (r.start() > r.stop()) {
    return RangeError(param, "range from " + std::to_string(r.start()) + " is after to " +
                                 std::to_string(r.stop()));
  }
  if (r.factor() != 0) {
    if (r.factor() < 2) {
      return RangeError(param, "range times must be > 1, got " + std::to_string(r.factor()));
    }
    if (r.start() <= 0) {
      return RangeError(param,
                        "a geometric range must start above 0, got " + std::to_string(r.start()));
    }
  } else if (r.step() <= 0) {
    return RangeError(param, "range step must be > 0, got " + std::to_string(r.step()));
  }
  return Status::Ok();
}

// Calls visit(value) for each value of a valid range, in increasing order.
template <typename Visit>
void ForEachInRange(const v1::Range& r, Visit visit) {
  if (r.factor() != 0) {
    for (int64_t v = r.start(); v <= r.stop(); v *= r.factor()) {
      visit(v);
      if (v > r.stop() / r.factor()) break;  // the next value would pass stop (or overflow)
    }
    return;
  }
  for (int64_t v = r.start();; v += r.step()) {
    visit(v);
    // Unsigned: stop - v may not fit in int64.
    if (static_cast<uint64_t>(r.stop()) - static_cast<uint64_t>(v) <
        static_cast<uint64_t>(r.step())) {
      break;
    }
  }
}

}  // namespace

uint64_t ParamSize(const v1::Param& param) {
  if (param.values_size() > 0 || !param.has_range()) return param.values_size();
  if (!CheckRange(param).ok()) return 0;
  const v1::Range& r = param.range();
  if (r.factor() == 0) {
    uint64_t span = static_cast<uint64_t>(r.stop()) - static_cast<uint64_t>(r.start());
    return span / static_cast<uint64_t>(r.step()) + 1;
  }
  uint64_t n = 0;
  ForEachInRange(r, [&](int64_t) { ++n; });
  return n;
}

Result<std::vector<v1::Value>> ParamValues(const v1::Param& param) {
  if (param.values_size() > 0 || !param.has_range()) {
    return std::vector<v1::Value>(param.values().begin(), param.values().end());
  }
  TF_RETURN_IF_ERROR(CheckRange(param));
  uint64_t size = ParamSize(param);
  if (size > kMaxParamValues) {
    return RangeError(param, "range has " + std::to_string(size) + " values; at most " +
                                 std::to_string(kMaxParamValues) + " are allowed");
  }
  std::vector<v1::Value> values;
  values.reserve(size);
  ForEachInRange(param.range(), [&](int64_t v) { values.push_back(IntValue(v)); });
  return values;
}

}  // namespace tf::kernelspec
