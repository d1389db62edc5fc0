#include "vendors/nvidia/ptxas_log.h"

#include <regex>
#include <sstream>
#include <vector>

namespace tf::nvidia {
namespace {

// The number before `unit` in `line` ("26 registers", "4224 bytes smem"); 0
// when absent, which is how ptxas reports nothing used.
int64_t Amount(const std::string& line, const std::string& unit) {
  std::smatch match;
  std::regex pattern("([0-9]+) " + unit);
  return std::regex_search(line, match, pattern) ? std::stoll(match[1]) : 0;
}

}  // namespace

std::map<std::string, ::tunefleet::v1::ResourceUsage> ParsePtxasResourceUsage(
    std::string_view log) {
  static const std::regex kEntry("Compiling entry function '([^']+)'");
  static const std::regex kProperties("Function properties for (\\S+)");
  // e.g. "(C7512) Potential Performance Loss: wgmma.mma_async instructions
  // are serialized due to ... for the function '_Z9attention...'".
  static const std::regex kPerformanceLoss(
      "\\((C[0-9]+)\\) Potential Performance Loss: (.*?)(?: (?:in|for) the function)? "
      "'([^']+)'\\s*$");
  std::map<std::string, ::tunefleet::v1::ResourceUsage> usage;
  // ptxas prints these ahead of the entry they concern.
  std::map<std::string, std::vector<std::string>> performance_warnings;
  // "Used ..." lines follow their entry; frame lines follow their properties
  // header, which ptxas also prints for non-entry device functions.
  std::string entry, properties_of;
  std::istringstream lines{std::string(log)};
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch match;
    if (std::regex_search(line, match, kPerformanceLoss)) {
      performance_warnings[match[3]].push_back(match[1].str() + ": " + match[2].str());
    } else if (std::regex_search(line, match, kEntry)) {
      entry = match[1];
      usage[entry].set_wave_size(32);  // every NVIDIA architecture's warp
    } else if (std::regex_search(line, match, kProperties)) {
      properties_of = match[1];
    } else if (line.find("bytes stack frame") != std::string::npos) {
      auto found = usage.find(properties_of);
      if (found == usage.end()) continue;
      found->second.set_scratch_bytes(Amount(line, "bytes stack frame"));
      found->second.set_spill_store_bytes(Amount(line, "bytes spill stores"));
      found->second.set_spill_load_bytes(Amount(line, "bytes spill loads"));
    } else if (line.find("Used ") != std::string::npos && !entry.empty()) {
      auto& kernel = usage[entry];
      kernel.set_vector_registers(static_cast<int32_t>(Amount(line, "registers")));
      kernel.set_shared_bytes(Amount(line, "bytes smem"));
    }
  }
  for (auto& [function, warnings] : performance_warnings) {
    auto kernel = usage.find(function);
    if (kernel == usage.end()) continue;  // a device function, which no job launches
    for (auto& warning : warnings) kernel->second.add_performance_warnings(std::move(warning));
  }
  return usage;
}

std::string ExplainPtxasFailure(std::string_view log) {
  std::string explanation;
  for (const auto& [entry, usage] : ParsePtxasResourceUsage(log)) {
    if (usage.shared_bytes() <= kMaxStaticSharedBytes) continue;
    explanation += "error: entry function '" + entry + "' uses " +
                   std::to_string(usage.shared_bytes()) + " bytes of static shared memory, more " +
                   "than the " + std::to_string(kMaxStaticSharedBytes) +
                   " a kernel may declare (ptxas stopped there)\n";
  }
  return explanation;
}

}  // namespace tf::nvidia
