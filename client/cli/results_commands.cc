// `tunefleet import results`, `tunefleet export` and `tunefleet kernels`:
// tuning results into the coordinator's database from other tuners' files,
// out of it for applications, and which kernels it holds and whose they are.
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "client/best_export.h"
#include "client/cli/cli_util.h"
#include "client/cli/commands.h"
#include "client/cli/results_import.h"
#include "client/cli/text_format.h"
#include "client/results_client.h"
#include "common/files.h"
#include "common/number_text.h"
#include "kernelspec/config.h"
#include "search/recorded_space.h"

namespace tf::cli {
namespace {

std::string JobsText(const std::set<int64_t>& jobs) {
  std::string text = jobs.size() == 1 ? "job " : "jobs ";
  for (int64_t job : jobs) {
    text += (text.back() == ' ' ? "" : ", ") + std::to_string(job);
  }
  return text;
}

// What the import replaced, when it made another tuning answer for the
// kernel on the class (one fingerprint answers per class: the newest
// completed, docs/coordinator.md) with fewer problems than the one answering
// `before`: the problems it does not cover answer from its nearest ones from
// now on. Empty otherwise.
std::string SupersededNote(const std::string& kernel, const std::string& device_class,
                           const std::vector<v1::QueryBestResponse>& before,
                           const std::vector<v1::QueryBestResponse>& after,
                           const std::set<int64_t>& imported) {
  if (before.empty() || after.empty() || after.size() >= before.size() ||
      before[0].fingerprint() == after[0].fingerprint()) {
    return "";
  }
  std::set<int64_t> jobs;
  for (const v1::QueryBestResponse& entry : before) jobs.insert(entry.job_id());
  return kernel + " on " + device_class + " was answered by " + JobsText(jobs) + " (" +
         CountText(before.size(), "tuned problem") + "); from now on this import (" +
         JobsText(imported) + ") answers for the class, " + CountText(after.size(), "problem") +
         ": the others answer from the nearest of its problems";
}

}  // namespace

int RunImportResults(const GlobalOptions& global, const ImportResultsOptions& options) {
  Result<std::vector<search::RecordedSpace>> recordings = search::ReadRecordedSpaces(options.path);
  if (!recordings.ok()) return FailUsage(recordings.status());
  Result<std::vector<v1::ImportResultsRequest>> requests = ImportRequests(
      *recordings, options.kernel, options.device_class, options.problem, options.device);
  if (!requests.ok()) return FailUsage(requests.status());

  Result<client::ClientOptions> client_options = ClientOptionsFor(global);
  if (!client_options.ok()) return Fail(client_options.status());
  client_options->call_timeout_s = 300;  // a large problem is one transaction
  auto client = client::ResultsClient::Connect(global.coordinator, *client_options);
  if (!client.ok()) return Fail(client.status());
  auto before = (*client)->ListBest(options.kernel, options.device_class);
  if (!before.ok()) return Fail(before.status());
  std::set<int64_t> imported_jobs;
  // One job per problem: a refusal of a later problem leaves the earlier ones imported.
  for (const v1::ImportResultsRequest& request : *requests) {
    const std::string problem = kernelspec::ProblemText(request.problem());
    Result<v1::ImportResultsResponse> imported = (*client)->Import(request);
    if (!imported.ok()) {
      return Fail(Status(imported.status().code(),
                         options.path + ": " + problem + ": " + imported.status().message()));
    }
    imported_jobs.insert(imported->job_id());
    if (global.json) {
      client::Json out = {
          {"job_id", imported->job_id()},     {"problem", problem},
          {"imported", imported->imported()}, {"failed", imported->failed()},
          {"device", request.device()},       {"format", recordings->front().format}};
      if (imported->best().found()) out["best"] = client::BestJson(imported->best());
      PrintJson(out);  // one object per problem imported
      continue;
    }
    std::printf(
        "imported %lld results (%lld failures) of %s for %s on %s, recorded on %s, as "
        "job %lld\n",
        static_cast<long long>(imported->imported()), static_cast<long long>(imported->failed()),
        options.kernel.c_str(), problem.c_str(), options.device_class.c_str(),
        request.device().c_str(), static_cast<long long>(imported->job_id()));
    if (imported->best().found()) {
      // The imported problem, in the file's order as the line above (the
      // coordinator answers with its variables sorted by name).
      std::printf("best for %s: %s (%.6g ms)\n", problem.c_str(),
                  kernelspec::ConfigKey(imported->best().config()).c_str(),
                  imported->best().timing().median_ns() / 1e6);
    }
  }
  auto after = (*client)->ListBest(options.kernel, options.device_class);
  if (!after.ok()) return Fail(after.status());
  const std::string note =
      SupersededNote(options.kernel, options.device_class, *before, *after, imported_jobs);
  if (!note.empty()) std::fprintf(stderr, "note: %s\n", note.c_str());
  return kExitOk;
}

int RunExport(const GlobalOptions& global, const ExportOptions& options) {
  if (options.format != "json" && options.format != "cpp") {
    return FailUsage(
        Status::InvalidArgument("--format: '" + options.format + "'; use json or cpp"));
  }
  if (global.json && options.format == "cpp" && options.out_path.empty()) {
    return FailUsage(Status::InvalidArgument(
        "--json with --format cpp: a C++ header is not JSON; write it with -o FILE, and --json "
        "describes the file"));
  }
  Result<client::ClientOptions> client_options = ClientOptionsFor(global);
  if (!client_options.ok()) return Fail(client_options.status());
  auto client = client::ResultsClient::Connect(global.coordinator, *client_options);
  if (!client.ok()) return Fail(client.status());
  auto entries = (*client)->ListBest(options.kernel, options.device_class);
  if (!entries.ok()) return Fail(entries.status());
  if (entries->empty()) {
    return Fail(Status::NotFound("no tuned configuration of kernel '" + options.kernel + "' on " +
                                 (options.device_class.empty()
                                      ? "any device class"
                                      : "device class '" + options.device_class + "'")));
  }
  std::string text;
  if (options.format == "json") {
    text = client::ExportJson(options.kernel, *entries);
  } else {
    Result<std::string> header = client::ExportCppHeader(options.kernel, *entries);
    if (!header.ok()) return Fail(header.status());
    text = *std::move(header);
  }
  if (options.out_path.empty()) {
    std::fputs(text.c_str(), stdout);
    return kExitOk;
  }
  if (Status written = WriteFileAtomic(options.out_path, text); !written.ok()) {
    return FailUsage(written);
  }
  if (global.json) {
    PrintJson({{"file", options.out_path},
               {"format", options.format},
               {"kernel", options.kernel},
               {"configurations", entries->size()}});
    return kExitOk;
  }
  std::fprintf(stderr, "wrote %s of %s to %s\n",
               CountText(entries->size(), "configuration").c_str(), options.kernel.c_str(),
               options.out_path.c_str());
  return kExitOk;
}

int RunKernels(const GlobalOptions& global, const std::string& device_class) {
  Result<client::ClientOptions> client_options = ClientOptionsFor(global);
  if (!client_options.ok()) return Fail(client_options.status());
  auto client = client::ResultsClient::Connect(global.coordinator, *client_options);
  if (!client.ok()) return Fail(client.status());
  auto kernels = (*client)->ListKernels(device_class);
  if (!kernels.ok()) return Fail(kernels.status());
  if (kernels->empty()) {
    return Fail(Status::NotFound(
        "no kernel is tuned on " +
        (device_class.empty() ? "any device class" : "device class '" + device_class + "'")));
  }
  if (global.json) {
    client::Json out = client::Json::array();
    for (const v1::TunedKernel& kernel : *kernels) out.push_back(client::KernelJson(kernel));
    PrintJson(out);
    return kExitOk;
  }
  Table table({"KERNEL", "OWNER", "TUNED", "DEVICE CLASSES", "LAST TUNED"});
  for (const v1::TunedKernel& kernel : *kernels) {
    std::string classes;
    for (const std::string& c : kernel.device_classes()) {
      classes += (classes.empty() ? "" : " ") + c;
    }
    table.AddRow({kernel.name(), kernel.owner().empty() ? "-" : kernel.owner(),
                  std::to_string(kernel.tuned()), classes,
                  FormatTime(kernel.last_tuned_unix_ms())});
  }
  table.Print(stdout);
  return kExitOk;
}

int RunKernelSetOwner(const GlobalOptions& global, const KernelOwnerOptions& options) {
  if (options.none == !options.team.empty()) {
    return FailUsage(Status::InvalidArgument(
        options.none ? "give TEAM or --none, not both"
                     : "give the TEAM to hand " + options.kernel + " to, or --none for no one"));
  }
  auto client = Connect(global);
  if (!client.ok()) return Fail(client.status());
  auto changed = (*client)->SetKernelOwner(options.kernel, options.team);
  if (!changed.ok()) return Fail(changed.status());
  if (global.json) {
    PrintJson({{"kernel", changed->kernel()},
               {"previous_owner", changed->previous_owner()},
               {"owner", changed->owner()}});
    return kExitOk;
  }
  auto text = [](const std::string& owner) { return owner.empty() ? "none" : owner; };
  std::printf("%s: owner %s -> %s\n", changed->kernel().c_str(),
              text(changed->previous_owner()).c_str(), text(changed->owner()).c_str());
  return kExitOk;
}

}  // namespace tf::cli
