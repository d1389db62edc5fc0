// What every subcommand does the same way: report an error with its exit
// code, connect to the coordinator, print JSON.
#pragma once

#include <memory>

#include "client/cli/commands.h"
#include "client/client.h"
#include "client/json_format.h"
#include "common/status.h"
#include "kernelspec/spec_loader.h"

namespace tf::cli {

namespace v1 = ::tunefleet::v1;

// Unreachable -> kExitUnreachable, not found -> kExitNotFound, invalid input
// -> kExitUsage, refused token -> kExitAuth, anything else -> kExitJobFailed.
int ExitCodeFor(const Status& status);
// Prints "tunefleet: MESSAGE" on stderr and returns ExitCodeFor(status).
int Fail(const Status& status);
// For errors in what the user gave (flags, spec file): kExitUsage whatever the
// code.
int FailUsage(const Status& status);
// For what is wrong in a spec ("FIELD: message" a line): each line led by
// the spec's path and the field's line in it; kExitUsage.
int FailSpec(const kernelspec::LoadedSpec& loaded, const Status& status);
// With the bearer token of --token-file, TUNEFLEET_TOKEN_FILE or
// TUNEFLEET_TOKEN (in that order); none when none is set.
Result<client::ClientOptions> ClientOptionsFor(const GlobalOptions& global);
Result<std::unique_ptr<client::Client>> Connect(const GlobalOptions& global);
// Indented, on stdout.
void PrintJson(const client::Json& json);

}  // namespace tf::cli
