#include "compiler/source_tree.h"

#include <filesystem>
#include <set>

#include "common/files.h"
#include "kernelspec/validate.h"

namespace tf::compiler {

Status CheckSourcePath(const std::string& path) {
  if (kernelspec::IsSafeRelativePath(path)) return Status::Ok();
  return Status::InvalidArgument(
      "source path '" + path +
      "' must be relative to the spec, without empty, '.' or '..' components, quotes, backslashes "
      "or control characters");
}

Status WriteSourceTree(const std::string& dir,
                       const std::vector<::tunefleet::v1::SourceFile>& sources) {
  std::set<std::string> seen;
  for (const auto& source : sources) {
    TF_RETURN_IF_ERROR(CheckSourcePath(source.path()));
    if (!seen.insert(source.path()).second) {
      return Status::InvalidArgument("source path '" + source.path() + "' is given twice");
    }
  }
  for (const auto& source : sources) {
    std::string path = dir + "/" + source.path();
    TF_RETURN_IF_ERROR(MakeDirs(std::filesystem::path(path).parent_path().string()));
    TF_RETURN_IF_ERROR(WriteFileAtomic(path, source.content()));
  }
  return Status::Ok();
}

}  // namespace tf::compiler
