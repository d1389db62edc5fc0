// Exported best configurations (`tunefleet export`): what a coordinator's
// best index holds for one kernel, one entry per tuned (problem, device
// class), written for applications that ship them without a coordinator.
//
// JSON: {"format": "tunefleet-best-configs/1", "kernel": K, "entries": [E...]}
// with each E as `tunefleet best --json` prints it (kernel, problem,
// device_class, config, median_ns, ...). BestConfigCache::Offline reads it.
//
// C++17: a header with, in namespace tunefleet_best::<kernel> (<kernel>_ for
// a C++ keyword or a name the header uses: new_, std_, Lookup_), a `Config`
// struct (one member per parameter: int64_t, or const char* for strings), a
// `Problem` struct (one member per variable, by name), a constexpr table
// `kEntries` and `Lookup(device_class, problem)`, which answers as the
// coordinator does: the exact problem, else the nearest tuned one (sum over
// variables of |log2(a/b)|; below 1, values count by their difference:
// kernelspec::ProblemScale), the fastest on ties; device_class nullptr or
// "": any. The problem is a Problem, which C++20 designated initializers name
// ({.K = 1, .M = 2}; out of order, g++ refuses them): in braces by position,
// the values go in the order of the variables' names, which is seldom the
// application's (K, M, N for a GEMM of M, N, K).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "tunefleet/v1/tunefleet.pb.h"

namespace tf::client {

namespace v1 = ::tunefleet::v1;

inline constexpr const char* kExportFormat = "tunefleet-best-configs/1";

std::string ExportJson(const std::string& kernel,
                       const std::vector<v1::QueryBestResponse>& entries);
// Errors name `name` (the file) and the field: "best.json: entries[2].config.BM: ...".
Result<std::vector<v1::QueryBestResponse>> ReadExportJson(std::string_view text,
                                                          const std::string& name);

// kInvalidArgument when the entries do not share their parameters and
// problem variables (names and kinds), which one table cannot hold.
Result<std::string> ExportCppHeader(const std::string& kernel,
                                    const std::vector<v1::QueryBestResponse>& entries);

// The coordinator's answer among `entries` (exact set when the problem was
// tuned), or nullptr when none of the kernel matches.
const v1::QueryBestResponse* LookupExported(const std::vector<v1::QueryBestResponse>& entries,
                                            const v1::QueryBestRequest& request, bool* exact);

}  // namespace tf::client
