// Flag parsing for the daemons (coordinator, worker). A bad flag exits 2, not
// CLI11's own codes, because the systemd units (deploy/systemd) do not restart
// on 2: a restart would not fix it. --help exits 0.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace tf {

// Parses argv into `app`; the code main returns when it should stop here
// (after --help or a bad flag), nullopt to go on.
inline std::optional<int> ParseDaemonFlags(CLI::App& app, int argc, char** argv) {
  try {
    // CLI11 reports a missing required flag before an unknown one, but a
    // mistyped flag is the likelier mistake: it is named first.
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--") break;
      if (arg.rfind("--", 0) == 0 && !app.get_option_no_throw(arg.substr(0, arg.find('=')))) {
        throw CLI::ExtrasError({arg});
      }
    }
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }
  return std::nullopt;
}

}  // namespace tf
