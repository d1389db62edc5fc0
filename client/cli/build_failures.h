// Build failures as a person reads them: configurations that failed alike
// (the same first line, that is the same first compiler error, batch file
// names aside) are shown once, with the compiler's own text from the first
// of them. Machine output (--json) keeps every configuration's full text.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace tf::cli {

struct FailedBuild {
  std::string config;  // kernelspec::ConfigKey
  std::string text;    // "compilation failed: <first error>\n<compiler output>"
};

void PrintBuildFailures(std::FILE* out, const std::vector<FailedBuild>& failures);

}  // namespace tf::cli
