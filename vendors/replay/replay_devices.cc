#include "vendors/replay/replay_devices.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "common/number_text.h"
#include "kernelspec/config.h"
#include "search/recorded_space.h"
#include "vendors/device_kinds.h"
#include "vendors/replay/replay_backend.h"
#include "vendors/replay/replay_vendor.h"

namespace tf::replay {
namespace {

constexpr const char* kSpeedProperty = "replay_speed_permille";
constexpr double kMinSpeed = 0.001, kMaxSpeed = 1e6;

// The last part of `path`, a file's name or a folder's ("dir/" included).
std::string NameOf(const std::string& path) {
  std::filesystem::path p = std::filesystem::path(path).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  return p.filename().string();
}

// The recordings in a folder (*.json, *.json.gz), in name order.
Result<std::vector<std::string>> FolderRecordings(const std::string& folder) {
  std::vector<std::string> paths;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && (name.ends_with(".json") || name.ends_with(".json.gz"))) {
      paths.push_back(entry.path().string());
    }
  }
  if (error) return Status::InvalidArgument(error.message());
  if (paths.empty()) return Status::InvalidArgument("no *.json or *.json.gz recordings");
  std::sort(paths.begin(), paths.end());
  return paths;
}

}  // namespace

Result<runner::Device> DiscoverReplayDevice(const std::string& path, int index,
                                            const std::string& label, double speed) {
  // Carried in thousandths (kSpeedProperty): a finer factor would be 0, a larger one overflow.
  if (!(speed == 0 || (speed >= kMinSpeed && speed <= kMaxSpeed))) {
    return Status::InvalidArgument("--replay-speed must be 0 (no sleeping) or from " +
                                   NumberText(kMinSpeed) + " to " + NumberText(kMaxSpeed) +
                                   ", got " + NumberText(speed));
  }
  const std::string where = "replay:" + path;
  std::vector<std::string> paths = {path};
  if (std::filesystem::is_directory(path)) {
    auto found = FolderRecordings(path);
    if (!found.ok()) return Status::InvalidArgument(where + ": " + found.status().message());
    paths = *std::move(found);
  }
  std::string model;
  std::set<std::string> problems;  // kernelspec::ProblemKey of each
  runner::Device device;
  for (const std::string& file : paths) {
    auto recordings = search::ReadRecordedSpaces(file);
    if (!recordings.ok()) {
      return Status::InvalidArgument(where + ": " + recordings.status().message());
    }
    const search::RecordedSpace& recording = recordings->front();
    for (const search::RecordedSpace& r : *recordings) {
      if (r.problem.empty()) {
        if (paths.size() == 1) break;
        return Status::InvalidArgument(where + ": " + file +
                                       " names no problem; in a folder each recording needs its "
                                       "own (a top-level \"problem\": \"M=1024,...\")");
      }
      Result<v1::Problem> problem = kernelspec::ParseProblem(r.problem);
      if (!problem.ok()) {
        return Status::InvalidArgument(where + ": " + file + ": its problem " + r.problem + ": " +
                                       problem.status().message());
      }
      if (!problems.insert(kernelspec::ProblemKey(*problem)).second) {
        return Status::InvalidArgument(where + ": " + file + " records " + r.problem + " again");
      }
    }
    const std::string recorded_on = recording.device.empty() ? NameOf(path) : recording.device;
    if (!model.empty() && recorded_on != model) {
      return Status::InvalidArgument(where + ": " + file + " was recorded on " + recorded_on +
                                     ", the others on " + model + ": one device per folder");
    }
    model = recorded_on;
    device.files.push_back(std::filesystem::absolute(file).string());
  }
  v1::DeviceInfo& info = device.info;
  info.set_index(index);
  info.set_vendor("replay");
  info.set_model(model);
  info.set_arch("replay");
  std::string device_class = "replay/" + runner::SanitizeForDeviceClass(model);
  if (!label.empty()) {
    device_class += "/" + label;
    info.add_labels(label);
  }
  info.set_device_class(device_class);
  (*info.mutable_properties())[kSpeedProperty] = std::llround(speed * 1000);
  return device;
}

Result<std::unique_ptr<runner::Backend>> MakeReplayBackend(const v1::DeviceInfo& device, int) {
  std::vector<search::RecordedSpace> recordings;
  for (size_t n = 0; n == 0 || std::filesystem::exists(runner::DeviceFileName(n)); ++n) {
    TF_ASSIGN_OR_RETURN(std::vector<search::RecordedSpace> in_file,
                        search::ReadRecordedSpaces(runner::DeviceFileName(n)));
    std::move(in_file.begin(), in_file.end(), std::back_inserter(recordings));
  }
  auto speed = device.properties().find(kSpeedProperty);
  const double factor = speed == device.properties().end() ? 1.0 : speed->second / 1000.0;
  return std::unique_ptr<runner::Backend>(
      new ReplayBackend(std::move(recordings), device.model(), factor));
}

void ConfineReplayRunner(uint64_t memory_bytes, sandbox::Policy& policy) {
  policy.allow_processes = false;
  policy.max_open_files = 256;
  policy.max_address_space_bytes = memory_bytes;
}

const vendors::DeviceKind kDeviceKind = {
    kNames.vendor,
    "replay:FILE (repeatable) answers from a recorded space, a Kernel Tuner cache or T4 file, "
    "gzip or not, instead of running; replay:FOLDER, from one recording per problem",
    nullptr,
    nullptr,
    MakeReplayBackend,
    ConfineReplayRunner,
    false,
    DiscoverReplayDevice};

}  // namespace tf::replay
