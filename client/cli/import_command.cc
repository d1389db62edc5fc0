// `tunefleet import kerneltuner T1.json [-o spec.yaml]`: a spec from a Kernel
// Tuner T1 file, checked as `submit` would check it before it is written.
#include <cstdio>
#include <filesystem>

#include "client/cli/cli_util.h"
#include "client/cli/commands.h"
#include "client/kerneltuner_import.h"
#include "common/files.h"
#include "kernelspec/spec_loader.h"
#include "kernelspec/validate.h"
#include "vendors/toolchains.h"

namespace tf::cli {
namespace {

namespace fs = std::filesystem;

// Where the kernel file is: beside the T1 file, or one folder up (as Kernel
// Tuner looks for it). A name that leads elsewhere (/etc/passwd, ../../x) is
// refused rather than copied beside the spec.
Result<fs::path> FindKernelFile(const fs::path& t1_path, const std::string& kernel_file) {
  if (!kernelspec::IsSafeRelativePath(kernel_file)) {
    return Status::InvalidArgument("KernelSpecification.KernelFile: '" + kernel_file +
                                   "' is not a relative path inside the T1 file's folder");
  }
  const fs::path folder = t1_path.parent_path();
  for (const fs::path& candidate : {folder / kernel_file, folder.parent_path() / kernel_file}) {
    if (fs::is_regular_file(candidate)) return fs::weakly_canonical(candidate);
  }
  return Status::InvalidArgument("KernelSpecification.KernelFile: '" + kernel_file +
                                 "' is neither in " + folder.string() + " nor one folder up");
}

// The spec's `source:` for `kernel` when the spec lives in `spec_folder`: its
// path inside that folder, or else the name of a copy placed there.
Result<std::string> SourceFor(const fs::path& kernel, const fs::path& spec_folder,
                              std::vector<std::string>* notes) {
  const fs::path folder = fs::weakly_canonical(spec_folder);
  const fs::path relative = kernel.lexically_relative(folder);
  if (!relative.empty() && *relative.begin() != ".." &&
      kernelspec::IsSafeRelativePath(relative.string())) {
    return relative.string();
  }
  const fs::path copy = folder / kernel.filename();
  TF_ASSIGN_OR_RETURN(std::string content, ReadFile(kernel.string()));
  if (fs::exists(copy)) {
    TF_ASSIGN_OR_RETURN(std::string existing, ReadFile(copy.string()));
    if (existing != content) {
      return Status::InvalidArgument(copy.string() + " exists and differs from " + kernel.string() +
                                     "; write the spec elsewhere");
    }
  } else {
    TF_RETURN_IF_ERROR(WriteFileAtomic(copy.string(), content));
    notes->push_back("copied " + kernel.string() + " to " + copy.string());
  }
  return kernel.filename().string();
}

}  // namespace

int RunImportKernelTuner(const GlobalOptions& global, const ImportKernelTunerOptions& options) {
  Result<std::string> t1 = ReadFile(options.t1_path);
  if (!t1.ok()) return FailUsage(t1.status());
  Result<std::string> kernel_file = client::KernelTunerT1KernelFile(*t1, options.t1_path);
  if (!kernel_file.ok()) return FailUsage(kernel_file.status());
  Result<fs::path> kernel = FindKernelFile(options.t1_path, *kernel_file);
  if (!kernel.ok()) return FailUsage(kernel.status());

  // On stdout the spec belongs beside the kernel file.
  const fs::path spec_folder = options.out_path.empty()
                                   ? kernel->parent_path()
                                   : fs::absolute(options.out_path).parent_path();
  std::vector<std::string> notes;
  Result<std::string> source = SourceFor(*kernel, spec_folder, &notes);
  if (!source.ok()) return FailUsage(source.status());
  Result<client::ImportedSpec> imported =
      client::ImportKernelTunerT1(*t1, fs::path(options.t1_path).filename().string(), *source,
                                  vendors::Languages(), options.reference);
  if (!imported.ok()) {
    return FailUsage(Status::InvalidArgument(options.t1_path + ": " + imported.status().message()));
  }
  notes.insert(notes.end(), imported->notes.begin(), imported->notes.end());

  const std::string name = options.out_path.empty() ? "<imported spec>" : options.out_path;
  Result<kernelspec::LoadedSpec> loaded =
      kernelspec::LoadSpec(imported->yaml, name, spec_folder.string());
  Status valid = loaded.ok() ? kernelspec::ValidateSpec(loaded->spec, loaded->sources,
                                                        kernelspec::SpecLimits())
                             : loaded.status();
  if (!valid.ok()) {
    return Fail(Status::Internal("the imported spec does not validate (a bug of the import):\n" +
                                 valid.message() + "\n" + imported->yaml));
  }
  if (options.out_path.empty()) {
    notes.push_back("save it in " + spec_folder.string() + ", beside " + *source);
  } else if (Status written = WriteFileAtomic(options.out_path, imported->yaml); !written.ok()) {
    return FailUsage(written);
  }
  if (global.json) {
    // Without -o the spec itself is a field, so that stdout stays one JSON object.
    client::Json report = {{"kernel", loaded->spec.name()}, {"source", *source}, {"notes", notes}};
    if (options.out_path.empty()) {
      report["yaml"] = imported->yaml;
    } else {
      report["spec"] = options.out_path;
    }
    PrintJson(report);
    return kExitOk;
  }
  if (options.out_path.empty()) std::fputs(imported->yaml.c_str(), stdout);
  for (const std::string& note : notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  if (!options.out_path.empty()) std::printf("wrote %s\n", options.out_path.c_str());
  return kExitOk;
}

}  // namespace tf::cli
