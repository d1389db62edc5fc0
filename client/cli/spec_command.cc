// `tunefleet spec`: prints the request `submit` would send for a spec, so that
// other clients (the Python package) submit exactly what the CLI does without
// a second copy of the YAML loader, or says, with file and line, why the
// coordinator would refuse it.
#include <google/protobuf/util/json_util.h>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <iterator>

#include "client/cli/cli_util.h"
#include "client/cli/commands.h"
#include "kernelspec/spec_loader.h"
#include "kernelspec/validate.h"
#include "tunefleet/v1/tunefleet.pb.h"
#include "vendors/toolchains.h"

namespace tf::cli {

int RunSpec(const std::string& spec_path) {
  // From stdin, the sources are read relative to the current directory.
  Result<kernelspec::LoadedSpec> loaded = [&] {
    if (spec_path != "-") return kernelspec::LoadSpecFile(spec_path);
    const std::string yaml(std::istreambuf_iterator<char>(std::cin), {});
    return kernelspec::LoadSpec(yaml, "<stdin>", "");
  }();
  if (!loaded.ok()) return FailUsage(loaded.status());
  // What the coordinator would refuse, with the spec's lines; its size limits
  // are its own to check.
  if (Status valid =
          kernelspec::ValidateSpec(loaded->spec, loaded->sources, kernelspec::SpecLimits::None());
      !valid.ok()) {
    return FailSpec(*loaded, valid);
  }
  // The language and target.vendor as the coordinator checks them; the request
  // keeps the target as `submit` sends it (the coordinator completes it).
  v1::KernelSpec completed = loaded->spec;
  if (Status target = vendors::CompleteTarget(&completed); !target.ok()) {
    return FailSpec(*loaded, target);
  }
  v1::SubmitJobRequest request;
  *request.mutable_spec() = loaded->spec;
  request.mutable_sources()->Assign(loaded->sources.begin(), loaded->sources.end());
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;  // a false or 0 the spec set shows too
  std::string json;
  if (auto status = google::protobuf::util::MessageToJsonString(request, &json, options);
      !status.ok()) {
    return Fail(Status::Internal("cannot print the spec as JSON: " + status.ToString()));
  }
  std::fputs(json.c_str(), stdout);
  return kExitOk;
}

}  // namespace tf::cli
