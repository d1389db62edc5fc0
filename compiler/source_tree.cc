#include "compiler/source_tree.h"

#include <filesystem>
#include <set>

#include "common/files.h"

namespace tf::compiler {

Status CheckSourcePath(const std::string& path) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("source path '" + path + "' " + why);
  };
  if (path.empty()) return bad("is empty");
  if (path.front() == '/') return bad("is absolute; give it relative to the spec");
  for (char c : path) {
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return bad("contains a quote, backslash or control character");
    }
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    std::string part = path.substr(start, slash - start);
    if (part.empty() || part == "." || part == "..") {
      return bad("has an empty, '.' or '..' component");
    }
    start = slash + 1;
  }
  return Status::Ok();
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
