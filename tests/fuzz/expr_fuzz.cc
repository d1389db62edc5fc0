// libFuzzer target: the expression language. The input is an expression;
// when it parses, it is evaluated both ways (Eval and EvalSlots) with every
// variable bound to a value taken from the input itself, so that division,
// overflow and string paths are reached.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernelspec/expr.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto expr = tf::kernelspec::Expr::Parse(text);
  if (!expr.ok()) return 0;

  tf::kernelspec::Bindings bindings;
  std::vector<tf::kernelspec::ScalarRef> slots;
  std::vector<int> slot_of_variable;
  for (size_t k = 0; k < expr->variables().size(); ++k) {
    // Values near the edges of int64 and a string, chosen by the input bytes.
    const uint8_t pick = size > 0 ? data[k % size] : 0;
    tf::kernelspec::Scalar value;
    switch (pick % 5) {
      case 0:
        value = int64_t{pick};
        break;
      case 1:
        value = int64_t{0};
        break;
      case 2:
        value = INT64_MAX - pick;
        break;
      case 3:
        value = double(pick) / 3;
        break;
      default:
        value = std::string("f16");
        break;
    }
    bindings[expr->variables()[k]] = value;
  }
  for (const auto& name : expr->variables()) {
    slot_of_variable.push_back(static_cast<int>(slots.size()));
    slots.push_back(tf::kernelspec::RefOf(bindings[name]));
  }
  (void)expr->Eval(bindings);
  tf::kernelspec::ScalarRef result;
  (void)expr->EvalSlots(slots.data(), slot_of_variable.data(), &result);
  return 0;
}
