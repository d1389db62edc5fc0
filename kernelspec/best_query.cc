#include "kernelspec/best_query.h"

#include <set>

#include "kernelspec/config.h"

namespace tf::kernelspec {

namespace v1 = ::tunefleet::v1;

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

std::string NotTunedMessage(const v1::QueryBestRequest& request,
                            const std::vector<const v1::QueryBestResponse*>& tuned,
                            std::string_view where) {
  std::string message =
      "no tuned configuration of kernel '" + request.kernel() + "' for " +
      ProblemText(request.problem()) + " on " +
      (request.device_class().empty() ? "any device class"
                                      : "device class '" + request.device_class() + "'") +
      std::string(where);
  if (tuned.empty()) return message;
  std::set<std::string> variables;
  std::set<std::string> classes;
  for (const v1::QueryBestResponse* entry : tuned) {
    variables.insert(ProblemVariableNames(entry->problem()));
    classes.insert(entry->device_class());
  }
  auto join = [](const std::set<std::string>& items, const char* separator) {
    std::string joined;
    for (const std::string& item : items) joined += (joined.empty() ? "" : separator) + item;
    return joined;
  };
  if (!variables.count(ProblemVariableNames(request.problem()))) {
    return message + "; its tuned problems have the variables " + join(variables, " or ");
  }
  if (!request.device_class().empty() && !classes.count(request.device_class())) {
    return message + "; it is tuned on " + join(classes, ", ");
  }
  return message;
}

}  // namespace tf::kernelspec
