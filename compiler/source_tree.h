// The job's source files on disk. Paths come from clients, so they are checked
// before anything is written: a path must stay inside the directory it is
// written to and be usable in an #include "..." line.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "tunefleet/v1/spec.pb.h"

namespace tf::compiler {

// Relative, no empty, "." or ".." components, no quotes, backslashes or
// control characters (kernelspec::IsSafeRelativePath, the rule a submitted
// spec's sources are checked by).
Status CheckSourcePath(const std::string& path);

// Writes every source under `dir` (creating subdirectories); fails before
// writing anything when a path is unsafe or given twice.
Status WriteSourceTree(const std::string& dir,
                       const std::vector<::tunefleet::v1::SourceFile>& sources);

}  // namespace tf::compiler
