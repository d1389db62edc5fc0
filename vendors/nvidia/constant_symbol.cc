#include "vendors/nvidia/constant_symbol.h"

#include "kernelspec/config.h"

namespace tf::nvidia {

std::string ConstantSymbol(std::string_view kernel_symbol, const std::string& name) {
  const int64_t copy = kernelspec::CopyIndexInSymbol(kernel_symbol);
  if (copy < 0) return name;
  const std::string ns = kernelspec::CopyNamespace(static_cast<size_t>(copy));
  return "_ZN" + std::to_string(ns.size()) + ns + std::to_string(name.size()) + name + "E";
}

}  // namespace tf::nvidia
