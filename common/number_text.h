// Numbers in messages as people read them: six significant digits at most
// ("2.5", "0.001", "1e+06", "inf").
#pragma once

#include <cstdio>
#include <string>

namespace tf {

inline std::string NumberText(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace tf
