#include "kernelspec/best_query.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <utility>

#include "kernelspec/config.h"

namespace tf::kernelspec {

namespace v1 = ::tunefleet::v1;

namespace {

// Edits (insert, delete, replace a character) from `a` to `b`.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "; tuned kernels of a similar name: a, b": the nearest few within a
// quarter of the name's length in edits (2 at least), or that begin with it
// or it with them ("gemm" for "gemm_f32_cpu"); empty when none is.
std::string SimilarKernels(const std::string& kernel, const std::vector<std::string>& tuned) {
  constexpr size_t kListed = 3;
  const size_t near = std::max<size_t>(2, kernel.size() / 4);
  std::vector<std::pair<size_t, std::string>> similar;
  for (const std::string& name : tuned) {
    const size_t edits = EditDistance(kernel, name);
    if (edits <= near || name.starts_with(kernel) || kernel.starts_with(name)) {
      similar.emplace_back(edits, name);
    }
  }
  if (similar.empty()) return "";
  std::sort(similar.begin(), similar.end());
  std::string text = "; tuned kernels of a similar name: ";
  for (size_t i = 0; i < std::min(kListed, similar.size()); ++i) {
    text += (i ? ", " : "") + similar[i].second;
  }
  return text;
}

}  // namespace

Status CheckBestQuery(const v1::QueryBestRequest& request) {
  if (request.kernel().empty()) return Status::InvalidArgument("kernel must be set");
  if (request.problem().vars_size() == 0) {
    return Status::InvalidArgument("problem must name at least one variable, e.g. M=4096");
  }
  std::set<std::string> names;
  for (const v1::ProblemVar& var : request.problem().vars()) {
    if (!names.insert(var.name()).second) {
      return Status::InvalidArgument("problem variable " + var.name() + " is given twice in '" +
                                     ProblemText(request.problem()) + "'");
    }
  }
  return Status::Ok();
}

NotTuned ExplainNotTuned(const v1::QueryBestRequest& request,
                         const std::vector<const v1::QueryBestResponse*>& tuned,
                         std::string_view where, const std::vector<std::string>& tuned_kernels) {
  const std::string& device_class = request.device_class();
  std::string message =
      "no tuned configuration of kernel '" + request.kernel() + "' for " +
      ProblemText(request.problem()) + " on " +
      (device_class.empty() ? "any device class" : "device class '" + device_class + "'") +
      std::string(where);
  if (tuned.empty()) {
    return {v1::NOT_FOUND_REASON_NOT_TUNED,
            message + SimilarKernels(request.kernel(), tuned_kernels)};
  }
  std::set<std::string> variables;
  std::set<std::string> classes;
  std::set<std::string> class_variables;  // of the entries of the class asked
  for (const v1::QueryBestResponse* entry : tuned) {
    variables.insert(ProblemVariableNames(entry->problem()));
    classes.insert(entry->device_class());
    if (entry->device_class() == device_class) {
      class_variables.insert(ProblemVariableNames(entry->problem()));
    }
  }
  auto join = [](const std::set<std::string>& items, const char* separator) {
    std::string joined;
    for (const std::string& item : items) joined += (joined.empty() ? "" : separator) + item;
    return joined;
  };
  if (!variables.count(ProblemVariableNames(request.problem()))) {
    return {v1::NOT_FOUND_REASON_OTHER_VARIABLES,
            message + "; its tuned problems have the variables " + join(variables, " or ")};
  }
  if (!device_class.empty() && !classes.count(device_class)) {
    return {v1::NOT_FOUND_REASON_OTHER_DEVICE_CLASS,
            message + "; it is tuned on " + join(classes, ", ")};
  }
  // The class asked is tuned, and other classes have the variables (had it
  // the variables too, or were any class asked, the query would have found
  // an answer): its tuning there is of a kernel source with other variables.
  std::string on_class = "; its tuned problems on device class '" + device_class +
                         "' have the variables " + join(class_variables, " or ");
  return {v1::NOT_FOUND_REASON_OTHER_VARIABLES, message + on_class};
}

void SetNotTuned(const v1::QueryBestRequest& request,
                 const std::vector<const v1::QueryBestResponse*>& tuned,
                 v1::QueryBestResponse* response, const std::vector<std::string>& tuned_kernels) {
  NotTuned not_tuned = ExplainNotTuned(request, tuned, "", tuned_kernels);
  response->set_found(false);
  response->set_not_found(std::move(not_tuned.message));
  response->set_not_found_reason(not_tuned.reason);
}

}  // namespace tf::kernelspec
