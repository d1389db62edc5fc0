#include "compiler/fingerprint.h"

#include <algorithm>
#include <cstdio>

#include "common/files.h"
#include "kernelspec/config.h"

namespace tf::compiler {
namespace {

// Length-prefixed, so that no two different field sequences serialise alike.
class Canonical {
 public:
  Canonical& Add(std::string_view field) {
    text_ += std::to_string(field.size());
    text_ += ':';
    text_ += field;
    return *this;
  }
  template <typename Strings>
  Canonical& AddList(const Strings& fields) {
    Add(std::to_string(fields.size()));
    for (const auto& field : fields) Add(field);
    return *this;
  }
  // 17 significant digits read back as the same double.
  Canonical& AddNumber(double number) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", number);
    return Add(std::string_view(text));
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

}  // namespace

std::string KernelFingerprint(const ::tunefleet::v1::KernelSpec& spec,
                              const std::vector<::tunefleet::v1::SourceFile>& sources,
                              const std::string& toolchain_version) {
  Canonical c;
  // v2 added what decides whether a result is correct or allowed (below).
  c.Add("tunefleet-kernel-v2").Add(toolchain_version).Add(spec.language()).Add(spec.source());
  c.Add(spec.entry()).AddList(spec.compile_options());
  // Only when not the default: left out (a raw gRPC client) or written out,
  // "template" is the same kernel.
  if (spec.param_style() == "define") c.Add("param_style=define");
  c.Add(spec.target().vendor()).Add(spec.target().arch());
  c.AddList(spec.launch().grid()).AddList(spec.launch().block());
  c.Add(spec.launch().shared_mem_bytes());
  c.Add(std::to_string(spec.buffers_size()));
  for (const auto& buffer : spec.buffers()) {
    c.Add(buffer.name()).Add(buffer.dtype()).Add(buffer.output() ? "out" : "in");
    if (buffer.memory() == "constant") c.Add("memory=constant");
  }
  c.AddList(kernelspec::ScalarNames(spec)).Add(spec.verify().reference());

  // What decides whether a result is right or allowed: a candidate checked
  // against looser tolerances, other inputs or a smaller output, or kept
  // where a stricter spec prunes it, proves nothing for this one.
  const auto& verify = spec.verify();
  c.AddNumber(verify.rtol()).AddNumber(verify.atol());
  c.AddList(verify.grid()).AddList(verify.block());
  for (const auto& buffer : spec.buffers()) {
    const std::string init = buffer.init().empty() ? "random" : buffer.init();
    c.Add(buffer.count()).Add(init);
    if (init == "random") c.AddNumber(buffer.random_min()).AddNumber(buffer.random_max());
  }
  c.Add(std::to_string(spec.tensor_maps_size()));
  for (const auto& map : spec.tensor_maps()) {
    c.Add(map.buffer()).AddList(map.dims()).AddList(map.box());
    c.Add(std::to_string(map.swizzle_bytes()));
  }
  c.Add(spec.forbid_spills() ? "forbid_spills" : "");
  c.Add(spec.forbid_performance_warnings() ? "forbid_performance_warnings" : "");

  std::vector<const ::tunefleet::v1::SourceFile*> sorted;
  for (const auto& source : sources) sorted.push_back(&source);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto* a, const auto* b) { return a->path() < b->path(); });
  c.Add(std::to_string(sorted.size()));
  for (const auto* source : sorted) c.Add(source->path()).Add(source->content());
  return Sha256Hex(c.text());
}

}  // namespace tf::compiler
