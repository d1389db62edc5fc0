// Flag parsing for the daemons (coordinator, worker). A bad flag exits 2, not
// CLI11's own codes, because the systemd units (deploy/systemd) do not restart
// on 2: a restart would not fix it. --help exits 0.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>

namespace tf {

// Parses argv into `app`; the code main returns when it should stop here
// (after --help or a bad flag), nullopt to go on.
inline std::optional<int> ParseDaemonFlags(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }
  return std::nullopt;
}

}  // namespace tf
