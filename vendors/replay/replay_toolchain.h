// The compile side of replay devices (replay_devices.h): a job of language
// `replay` describes a recorded space (its parameters as the recording names
// them, the recording's restrictions as constraints), and nothing is
// compiled. A batch's artifact is a text file listing its configurations;
// each configuration's symbol is its config key (kernelspec::ConfigKey), by
// which the replay backend finds the recorded outcome.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/toolchain.h"

namespace tf::replay {

namespace v1 = ::tunefleet::v1;

// The first line of every replay artifact.
inline constexpr const char* kArtifactHeader = "tunefleet replay artifact";

class ReplayToolchain : public compiler::Toolchain {
 public:
  std::string name() const override { return "replay"; }
  std::string version() const override { return "replay 1"; }
  std::string target() const override { return "replay"; }

  // Compile options mean nothing to a recording: refused, so that no spec
  // believes they had an effect.
  Status Validate(const v1::KernelSpec& spec) const override;
  Result<std::string> GenerateBatch(const v1::KernelSpec& spec,
                                    const std::vector<v1::SourceFile>& sources,
                                    const std::vector<v1::Config>& configs) const override;
  // Copies the batch's listing to `out_path`; no process runs.
  Result<compiler::CompileOutcome> Compile(const std::string& work_dir, const std::string& tu_path,
                                           const std::string& out_path, const v1::KernelSpec& spec,
                                           const std::vector<v1::Config>& configs,
                                           double timeout_s) const override;
};

// The toolchain of kCompileSide (replay_vendor.h), for "replay".
Result<std::unique_ptr<compiler::Toolchain>> MakeReplayToolchain(const v1::KernelSpec& spec,
                                                                 const std::string& device_arch);

}  // namespace tf::replay
