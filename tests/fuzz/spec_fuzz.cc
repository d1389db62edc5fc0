// libFuzzer target: a kernel spec read from arbitrary YAML, then validated as
// the coordinator validates every submitted spec. Neither may crash, hang or
// invoke undefined behaviour, whatever the bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kernelspec/spec_loader.h"
#include "kernelspec/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view yaml(reinterpret_cast<const char*>(data), size);
  auto spec = tf::kernelspec::ParseSpecYaml(yaml, "fuzz.yaml");
  if (!spec.ok()) return 0;
  tunefleet::v1::SourceFile source;
  source.set_path(spec->source());
  source.set_content("template <int N> void f() {}\n");
  (void)tf::kernelspec::ValidateSpec(*spec, {source}, tf::kernelspec::SpecLimits());
  return 0;
}
