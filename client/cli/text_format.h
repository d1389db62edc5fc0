// Plain-text output of the command line: aligned tables and readable units.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace tf::cli {

// Columns padded to their widest cell, two spaces apart.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  // A row with fewer cells than the header leaves the rest empty.
  void AddRow(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  bool empty() const { return rows_.empty(); }
  void Print(std::FILE* out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// "850 ns", "12.3 us", "4.56 ms", "1.20 s"; "-" for 0 (not measured).
std::string FormatNanos(double ns);
// "42s", "3m07s", "2h05m".
std::string FormatSeconds(double seconds);
// "1234.5"; "-" for 0 (no flops expression).
std::string FormatGflops(double gflops);
// "2026-12-03 06:15 UTC"; "-" for 0.
std::string FormatTime(int64_t unix_ms);

// Up to the first newline: one line of a multi-line error in a table.
std::string FirstLine(const std::string& text);

}  // namespace tf::cli
