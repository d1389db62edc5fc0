// Reads a kernel spec written in YAML into a v1::KernelSpec, filling the
// defaults of everything it leaves out. The keys are those of KernelSpec
// (kernel: is the name), plus includes: extra source files shipped along.
//
// Errors give file, line and field, for example
//   gemm.yaml:12: params.BM: expected a list of values or a range {from, to, step}
// Unknown keys are errors, so that a typo is not silently ignored. Semantic
// checks (names, expressions, limits) are ValidateSpec's.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::kernelspec {

namespace v1 = ::tunefleet::v1;

struct LoadedSpec {
  v1::KernelSpec spec;
  // The main source first, then the includes; paths relative to the spec's folder.
  std::vector<v1::SourceFile> sources;
  std::string path;
  // The line (from 1) of every key and list item, by its field as errors
  // name it: "kernel", "benchmark.timeout_s", "constraints[0]", "problems[1].M".
  std::map<std::string, int> field_lines;
};

// Reads the spec, its source and includes (relative to the spec's folder).
Result<LoadedSpec> LoadSpecFile(const std::string& path);

// The same from YAML text: `name` stands for the file in messages, and the
// sources are read relative to `folder` (empty: the current directory).
Result<LoadedSpec> LoadSpec(std::string_view yaml, const std::string& name,
                            const std::string& folder);

// `errors`, ValidateSpec's or the coordinator's ("FIELD: message", a line
// each), with each line led by the spec's path and the line of FIELD, or of
// the nearest field around it that the file has:
//   gemm.yaml:14: constraints[0]: 'BK <= BMM * 4' uses 'BMM', ...
std::string LocateErrors(const LoadedSpec& loaded, std::string_view errors);

// `file_name` is only used in messages; includes are left to LoadSpecFile.
Result<v1::KernelSpec> ParseSpecYaml(std::string_view yaml, std::string_view file_name);

}  // namespace tf::kernelspec
