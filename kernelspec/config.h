// Canonical text forms of configurations and problems, and the names a
// configuration gets in generated code. Keys are stable: they are stored in
// the tuning database and compared across jobs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "kernelspec/expr.h"
#include "tunefleet/v1/common.pb.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::kernelspec {

namespace v1 = ::tunefleet::v1;

// "64" or "half": a value as it is substituted into source text.
std::string ValueText(const v1::Value& value);
v1::Value IntValue(int64_t v);
v1::Value StrValue(std::string v);

// "BM=64,BN=128,DT=half" in spec order of the parameters.
std::string ConfigKey(const v1::Config& config);
// "K=4096,M=4096,N=4096": variables sorted by name, so that the same shape
// written in another order has the same key.
std::string ProblemKey(const v1::Problem& problem);
// "M=4096,N=4096,K=4096" in the order given (for display).
std::string ProblemText(const v1::Problem& problem);
// The variable names, sorted: "K,M,N".
std::string ProblemVariableNames(const v1::Problem& problem);
// Parses "M=4096,N=4096,K=4096" (order kept).
Result<v1::Problem> ParseProblem(std::string_view text);
// Inverse of ConfigKey: values that parse as integers become integers.
Result<v1::Config> ParseConfigKey(std::string_view key);

// Substitutes {NAME} placeholders of `entry` by the configuration's values:
// "gemm<{BM},{BN}>" -> "gemm<64,128>". Fails on an unknown placeholder.
Result<std::string> InstantiateEntry(std::string_view entry, const v1::Config& config);

// The exported symbol of a configuration in a batch artifact.
std::string CandidateSymbol(const v1::Config& config);
inline constexpr const char* kReferenceSymbol = "tf_reference";

// Define-style batches (compiler/source_copies.h) put configuration `index`'s
// copy of the source in namespace "tf_copy<index>"; its kernel's symbol, as the
// compiler lowered it, contains that name. CopyIndexInSymbol finds it again
// (for the device side, which looks up the copy's other symbols): the index,
// or -1 for a symbol of no copy.
std::string CopyNamespace(size_t index);
int64_t CopyIndexInSymbol(std::string_view symbol);

// The symbol of the `__constant__` variable `name` that the kernel of
// `kernel_symbol` reads, as the device side looks it up to fill a constant
// buffer: the name itself at namespace scope, or in a define-style copy's
// namespace, which the kernel's symbol names, _ZN<len>tf_copyN<len>NAMEE
// (Itanium C++ mangling, as the GPU toolchains give it).
std::string ConstantSymbol(std::string_view kernel_symbol, const std::string& name);

// Binds each parameter of `config` (a string or an integer) and each variable
// of `problem` by its name, for expressions evaluated on a candidate.
void BindConfig(const v1::Config& config, Bindings* vars);
void BindProblem(const v1::Problem& problem, Bindings* vars);

// The problem variables passed to the kernel after the buffers, in order:
// spec.scalars when given, else the first problem's variables in spec order.
std::vector<std::string> ScalarNames(const v1::KernelSpec& spec);

}  // namespace tf::kernelspec
