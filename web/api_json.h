// The dashboard's JSON: the coordinator's protos and views as the plain
// objects the page reads (numbers as numbers, enums as lower-case names,
// configurations and problems as {name: value} objects).
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "coordinator/coordinator.h"

namespace tf::web {

nlohmann::json JobJson(const tunefleet::v1::Job& job);
nlohmann::json ResultJson(const coordinator::Coordinator::RecordedResult& recorded);
// Workers and their devices, each device with the lease it holds, if any.
nlohmann::json WorkersJson(const std::vector<tunefleet::v1::WorkerInfo>& workers,
                           const coordinator::Activity& activity);

}  // namespace tf::web
