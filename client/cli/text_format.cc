#include "client/cli/text_format.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ctime>

namespace tf::cli {
namespace {

std::string Printf(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

}  // namespace

void Table::Print(std::FILE* out) const {
  std::vector<size_t> widths(header_.size());
  for (size_t c = 0; c < header_.size(); ++c) widths[c] = header_[c].size();
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size() && c < widths.size(); ++c) {
      widths[c] = std::max(widths[c], row[c].size());
    }
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < widths.size(); ++c) {
      const std::string cell = c < row.size() ? row[c] : "";
      line += cell;
      if (c + 1 < widths.size()) line += std::string(widths[c] - cell.size() + 2, ' ');
    }
    line.erase(line.find_last_not_of(' ') + 1);
    std::fprintf(out, "%s\n", line.c_str());
  };
  print_row(header_);
  for (const auto& row : rows_) print_row(row);
}

std::string FormatNanos(double ns) {
  if (ns <= 0) return "-";
  if (ns < 1e3) return Printf("%.0f ns", ns);
  if (ns < 1e6) return Printf("%.1f us", ns / 1e3);
  if (ns < 1e9) return Printf("%.2f ms", ns / 1e6);
  return Printf("%.2f s", ns / 1e9);
}

std::string FormatSeconds(double seconds) {
  const int64_t s = std::max<int64_t>(0, std::llround(seconds));
  char buffer[32];
  if (s < 60) {
    std::snprintf(buffer, sizeof(buffer), "%llds", static_cast<long long>(s));
  } else if (s < 3600) {
    std::snprintf(buffer, sizeof(buffer), "%lldm%02llds", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  } else {
    std::snprintf(buffer, sizeof(buffer), "%lldh%02lldm", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60));
  }
  return buffer;
}

std::string FormatGflops(double gflops) {
  if (gflops <= 0) return "-";
  return Printf("%.1f", gflops);
}

std::string FormatTime(int64_t unix_ms) {
  if (unix_ms == 0) return "-";
  std::time_t seconds = unix_ms / 1000;
  std::tm utc;
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", &utc);
  return text;
}

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace tf::cli
