// Number checks for command-line flags. CLI11's NonNegativeNumber and
// PositiveNumber refuse with their range written out up to DBL_MAX; these
// refuse with the value and what it must be, and show the same names in --help.
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <string>

namespace tf {

namespace flag_checks_detail {
inline CLI::Validator AtLeast(bool zero_allowed) {
  return CLI::Validator(
      [zero_allowed](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a number";
        if (!std::isfinite(value)) return text + " is not a finite number";
        if (value > 0 || (zero_allowed && value == 0)) return "";
        return text + (zero_allowed ? " is negative" : " is not above 0");
      },
      zero_allowed ? "NONNEGATIVE" : "POSITIVE");
}
}  // namespace flag_checks_detail

inline const CLI::Validator kNonNegative = flag_checks_detail::AtLeast(true);
inline const CLI::Validator kPositive = flag_checks_detail::AtLeast(false);
// A job or token id: a whole number above 0.
inline const CLI::Validator kId = CLI::Validator(
    [](std::string& text) -> std::string {
      // from_chars, not CLI11's cast, which clamps an overflow to the largest id.
      long long value = 0;
      const char* end = text.data() + text.size();
      auto [stop, error] = std::from_chars(text.data(), end, value);
      if (error == std::errc::result_out_of_range) return text + " is too large for an id";
      if (error != std::errc() || stop != end) return "'" + text + "' is not a whole number";
      return value > 0 ? "" : text + " is not above 0";
    },
    "ID");

}  // namespace tf
