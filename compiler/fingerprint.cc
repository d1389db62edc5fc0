#include "compiler/fingerprint.h"

#include <algorithm>

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
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

}  // namespace

std::string KernelFingerprint(const ::tunefleet::v1::KernelSpec& spec,
                              const std::vector<::tunefleet::v1::SourceFile>& sources,
                              const std::string& toolchain_version) {
  Canonical c;
  c.Add("tunefleet-kernel-v1").Add(toolchain_version).Add(spec.language()).Add(spec.source());
  c.Add(spec.entry()).AddList(spec.compile_options());
  // Added only when not the default, so that earlier fingerprints stay valid.
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

  std::vector<const ::tunefleet::v1::SourceFile*> sorted;
  for (const auto& source : sources) sorted.push_back(&source);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto* a, const auto* b) { return a->path() < b->path(); });
  c.Add(std::to_string(sorted.size()));
  for (const auto* source : sorted) c.Add(source->path()).Add(source->content());
  return Sha256Hex(c.text());
}

}  // namespace tf::compiler
