// Numbers in messages as people read them: six significant digits at most
// ("2.5", "0.001", "1e+06", "inf"), and counts of things ("1 device",
// "3 devices").
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace tf {

inline std::string NumberText(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

// `count` and `noun`, in `plural` (default: noun + "s") unless there is one.
inline std::string CountText(uint64_t count, std::string_view noun, std::string_view plural = {}) {
  std::string text = std::to_string(count) + " ";
  if (count == 1) return text.append(noun);
  return plural.empty() ? text.append(noun).append("s") : text.append(plural);
}

}  // namespace tf
