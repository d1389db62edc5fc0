// The parts of a toolchain's Validate (compiler/toolchain.h) that every
// language makes the same way, so that every toolchain refuses a spec with the
// same words: the main source, and the -D/-U compile options.
#pragma once

#include "common/status.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::compiler {

// Ok, or InvalidArgument: the spec names no main source ("source is empty:
// name the main source file to compile"), or an unsafe path
// (CheckSourcePath, source_tree.h).
Status CheckMainSource(const ::tunefleet::v1::KernelSpec& spec);

// The -D and -U options every toolchain allows, as regex alternatives for its
// IsAllowedFlag: a macro name, and a value of [A-Za-z0-9_.+-] only, so that no
// value can carry quotes, spaces or shell syntax into a compiler's arguments.
inline constexpr char kDefineFlagsPattern[] =
    "-D[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.+-]*)?|-U[A-Za-z_][A-Za-z0-9_]*";
// The same, as AllowedCompileFlags's summary says it.
inline constexpr char kDefineFlagsSummary[] =
    "-DNAME[=VALUE] with VALUE of [A-Za-z0-9_.+-], -UNAME";

}  // namespace tf::compiler
