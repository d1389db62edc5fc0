// Translates a Kernel Tuner T1 input file (the community's JSON description
// of a tuning problem) into a TuneFleet spec, for `tunefleet import
// kerneltuner`. The kernel is taken as it is: its knobs become define-style
// parameters (macros), its conditions constraints (Python syntax, which the
// expression language reads), and the launch is Kernel Tuner's own rule:
//   block = LocalSize
//   grid  = ceil(ProblemSize[d] / product of GridDiv{X,Y,Z})  (default: LocalSize[d])
// GlobalSize is not used, as Kernel Tuner does not use it either.
// Arguments become buffers in order (a `MemType: Constant` one is also copied
// into the module's __constant__ symbol of its name), their sizes evaluated
// with the Python evaluator (ProblemSize and each parameter's list bound);
// ProblemSize becomes one problem {problem_size_x, _y, _z}.
//
// What has no TuneFleet meaning (scalar arguments, float parameters, fills
// other than random, 0 and 1, unknown kernel keys) is an error naming the T1
// field, e.g. "KernelSpecification.Arguments[2].FillType: ...".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tf::client {

struct ImportedSpec {
  std::string yaml;                // the spec
  std::string kernel_file;         // KernelFile, as the T1 file names it
  std::vector<std::string> notes;  // what the translation chose, for the user
};

// `source_path` is what the spec's `source:` says (where the kernel file will
// be, relative to the spec); `t1_name` names the file in messages. T1 has no
// reference; `reference`, when given, names a kernel of the same source that
// computes the outputs with one thread per problem element (bounds-checked),
// launched over the problem in 16x16 blocks (256 in 1D, 8x8x4 in 3D).
// `languages`: those a spec may name (vendors::Languages()); T1's Language,
// in lower case, must be one of them.
Result<ImportedSpec> ImportKernelTunerT1(std::string_view t1_json, const std::string& t1_name,
                                         const std::string& source_path,
                                         const std::vector<std::string>& languages,
                                         const std::string& reference = "");

// KernelFile of a T1 file, to find the kernel before translating.
Result<std::string> KernelTunerT1KernelFile(std::string_view t1_json, const std::string& t1_name);

}  // namespace tf::client
