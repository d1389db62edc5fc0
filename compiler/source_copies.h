// Grouped builds of define-style kernels (param_style: define), whose knobs
// are preprocessor macros: one translation unit holds one copy of the source
// per configuration, each copy inside its own namespace, after its own
// `#define`s, with the kernel (and the reference) renamed by a macro so that
// even `extern "C"` kernels get one symbol per copy:
//
//   #include <...>                 // the sources' system includes, hoisted
//   namespace tf_copy0 {
//   #define block_size_x 32        // the configuration
//   #define conv conv_tf_copy0     // the entry, renamed
//   #include "conv.cu"
//   #undef block_size_x            // every macro the copy defined
//   ...
//   }  // namespace tf_copy0
//
// The kernel of copy N is then `tf_copy0::conv_tf_copy0`. A source that
// hides its second copy (`#pragma once`, an include guard) cannot be grouped:
// AnalyzeSources says why, and each configuration gets a compiler run of its
// own. Other clashes between copies (an `extern "C"` global besides the
// kernel) make the batch fail to compile, and the batch builder's splitting
// then builds its configurations one by one.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "tunefleet/v1/common.pb.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::compiler {

namespace v1 = ::tunefleet::v1;

struct SourceCopies {
  std::vector<std::string> system_includes;  // "#include <...>" lines, once each
  std::vector<std::string> macros;           // names the sources #define
  std::string ungroupable;                   // non-empty: why one configuration per run
};

SourceCopies AnalyzeSources(const std::vector<v1::SourceFile>& sources);

// True for specs whose parameters are macros.
bool IsDefineStyle(const v1::KernelSpec& spec);

// "tf_copy3::conv_tf_copy3": the qualified name `function` (the entry or the
// reference) has in copy `index`.
std::string CopyFunction(const std::string& function, size_t index);

// The copies of one batch, as above (without the hoisted includes, which the
// toolchain places before its own headers). Fails on a value that is not a
// valid macro body.
Result<std::string> DefineStyleCopies(const v1::KernelSpec& spec, const SourceCopies& copies,
                                      const std::vector<v1::Config>& configs);

// What every toolchain's batch does with either style of spec:

// The kernel function of each configuration: `entry` instantiated with its
// values, or (define-style) its copy's renamed kernel.
Result<std::vector<std::string>> BatchKernelFunctions(const v1::KernelSpec& spec,
                                                      const std::vector<v1::Config>& configs);

// The reference function a batch holds (empty: none): the spec's, or
// (define-style) the first copy's, which serves for all.
std::string BatchReferenceFunction(const v1::KernelSpec& spec);

// The batch's text for the kernel's sources, after the toolchain's own
// headers: `#include "source"`, or (define-style) the sources' system
// includes once, then the copies.
Result<std::string> BatchSourceText(const v1::KernelSpec& spec,
                                    const std::vector<v1::SourceFile>& sources,
                                    const std::vector<v1::Config>& configs);

}  // namespace tf::compiler
