// The name a `__constant__` variable has in a CUBIN: the one the device side
// looks up to fill a constant buffer. At namespace scope (a template-style
// kernel's source) it is the variable's own name; in a define-style batch each
// configuration's copy of the source lives in its own namespace
// (compiler/source_copies.h), named in its kernel's symbol, and C++ mangles
// the variable as _ZN<len>tf_copyN<len>NAMEE.
#pragma once

#include <string>
#include <string_view>

namespace tf::nvidia {

std::string ConstantSymbol(std::string_view kernel_symbol, const std::string& name);

}  // namespace tf::nvidia
