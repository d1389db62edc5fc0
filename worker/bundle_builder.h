// Compilation on the worker host. When a job compiles where its devices are
// (target.compile_on: worker, or a coordinator without the language's
// toolchain), a lease's artifact is a BuildBundle: the job's sources and one
// batch of configurations. The worker compiles it here for the leased
// device's own architecture with the language's toolchain (vendors/
// toolchains.h), grouped and split on failure by the batch builder, each
// compiler run in the build sandbox, once per (bundle, architecture): later
// leases of the same batch find it built.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/status.h"
#include "compiler/artifact_store.h"
#include "compiler/batch_builder.h"
#include "compiler/toolchain.h"

namespace tf::worker {

// One bundle built for one architecture.
struct BuiltBundle {
  std::shared_ptr<const compiler::Toolchain> toolchain;    // for its resource check
  std::map<std::string, compiler::ConfigBuild> by_config;  // by kernelspec::ConfigKey
};

class BundleBuilder {
 public:
  // Built artifacts are stored in `dir`, compiled in `dir`/work.
  static Result<std::unique_ptr<BundleBuilder>> Open(const std::string& dir);

  // The BuildBundle at `bundle_path`, whose hash is `sha256`, built for
  // `arch`; built now unless it was before, and then `built_now` (when
  // given) says how. Fails when the bundle is unreadable or its spec is
  // refused by the toolchain (the message says why); configurations that
  // fail to compile are outcomes, not errors.
  Result<std::shared_ptr<const BuiltBundle>> Get(const std::string& sha256,
                                                 const std::string& bundle_path,
                                                 const std::string& arch,
                                                 std::optional<compiler::BuildStats>* built_now);

  std::string ArtifactPath(const std::string& sha256) const { return store_->PathOf(sha256); }

 private:
  explicit BundleBuilder(std::unique_ptr<compiler::ArtifactStore> store)
      : store_(std::move(store)) {}

  std::unique_ptr<compiler::ArtifactStore> store_;
  std::mutex mu_;  // one build at a time: a second device of the same arch waits, then hits
  std::map<std::string, std::shared_ptr<const BuiltBundle>> built_;  // by sha256 "@" arch
};

}  // namespace tf::worker
