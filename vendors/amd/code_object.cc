#include "vendors/amd/code_object.h"

#include <yaml-cpp/yaml.h>

#include <regex>
#include <sstream>

namespace tf::amd {
namespace {

namespace v1 = ::tunefleet::v1;

int64_t Field(const YAML::Node& kernel, const char* key) {
  const YAML::Node value = kernel[key];
  return value ? value.as<int64_t>() : 0;
}

// The YAML document of the metadata note: from "---" to "...".
std::string MetadataDocument(std::string_view text) {
  std::istringstream lines{std::string(text)};
  std::string line, document;
  bool inside = false;
  while (std::getline(lines, line)) {
    const size_t first = line.find_first_not_of(' ');
    const std::string_view trimmed =
        first == std::string::npos ? std::string_view() : std::string_view(line).substr(first);
    if (!inside) {
      inside = trimmed == "---";
    } else if (trimmed == "...") {
      break;
    } else {
      document += line + "\n";
    }
  }
  return document;
}

Status ParseKernels(std::string_view text, CodeObjectReport& report) {
  const std::string document = MetadataDocument(text);
  if (document.empty()) {
    return Status::InvalidArgument("llvm-readelf reported no AMDGPU metadata note");
  }
  try {
    const YAML::Node kernels = YAML::Load(document)["amdhsa.kernels"];
    if (!kernels || !kernels.IsSequence()) {
      return Status::InvalidArgument("the AMDGPU metadata has no amdhsa.kernels list");
    }
    for (const YAML::Node& kernel : kernels) {
      v1::ResourceUsage& usage = report.kernels[kernel[".name"].as<std::string>()];
      usage.set_vector_registers(static_cast<int32_t>(Field(kernel, ".vgpr_count")));
      usage.set_scalar_registers(static_cast<int32_t>(Field(kernel, ".sgpr_count")));
      usage.set_accumulator_registers(static_cast<int32_t>(Field(kernel, ".agpr_count")));
      usage.set_shared_bytes(Field(kernel, ".group_segment_fixed_size"));
      usage.set_scratch_bytes(Field(kernel, ".private_segment_fixed_size"));
      usage.set_spill_store_bytes(
          4 * (Field(kernel, ".vgpr_spill_count") + Field(kernel, ".sgpr_spill_count")));
      usage.set_max_threads_per_block(
          static_cast<int32_t>(Field(kernel, ".max_flat_workgroup_size")));
      usage.set_wave_size(static_cast<int32_t>(Field(kernel, ".wavefront_size")));
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(std::string("the AMDGPU metadata does not parse: ") + e.what());
  }
  return Status::Ok();
}

// Marker variables hold a kernel's address: a relative relocation at the
// variable's address whose addend is the kernel's address (protected
// symbols), or an absolute one naming the kernel.
void ParseMarkers(std::string_view text, CodeObjectReport& report) {
  static const std::regex kRelative(
      R"(\s*([0-9a-f]+)\s+[0-9a-f]+\s+R_AMDGPU_RELATIVE64\s+([0-9a-f]+)\s*)");
  static const std::regex kAbsolute(
      R"(\s*([0-9a-f]+)\s+[0-9a-f]+\s+R_AMDGPU_ABS64\s+[0-9a-f]+\s+(\S+)\s*\+\s*0\s*)");
  static const std::regex kSymbol(
      R"(\s*[0-9]+:\s+([0-9a-f]+)\s+\S+\s+(\w+)\s+\w+\s+\w+\s+\S+\s+(\S+)\s*)");
  std::map<uint64_t, uint64_t> relative;               // where -> target address
  std::map<uint64_t, std::string> absolute;            // where -> target symbol
  std::map<uint64_t, std::string> functions, objects;  // address -> symbol
  std::istringstream lines{std::string(text)};
  std::string line;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_match(line, m, kRelative)) {
      relative[std::stoull(m[1], nullptr, 16)] = std::stoull(m[2], nullptr, 16);
    } else if (std::regex_match(line, m, kAbsolute)) {
      absolute[std::stoull(m[1], nullptr, 16)] = m[2];
    } else if (std::regex_match(line, m, kSymbol)) {
      const uint64_t address = std::stoull(m[1], nullptr, 16);
      if (m[2] == "FUNC") functions[address] = m[3];
      if (m[2] == "OBJECT") objects[address] = m[3];
    }
  }
  for (const auto& [address, symbol] : objects) {
    if (auto it = relative.find(address); it != relative.end()) {
      if (auto function = functions.find(it->second); function != functions.end()) {
        report.markers[symbol] = function->second;
      }
    } else if (auto abs = absolute.find(address); abs != absolute.end()) {
      report.markers[symbol] = abs->second;
    }
  }
}

}  // namespace

Result<CodeObjectReport> ParseReadelfReport(std::string_view text) {
  CodeObjectReport report;
  TF_RETURN_IF_ERROR(ParseKernels(text, report));
  ParseMarkers(text, report);
  return report;
}

std::string LocalVariableSymbol(const std::string& name) {
  return "_ZL" + std::to_string(name.size()) + name;
}

}  // namespace tf::amd
