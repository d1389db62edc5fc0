// libFuzzer target: the coordinator's RPC handlers, called as gRPC calls them,
// on a real Coordinator over a real SQLite file. An input is the method name
// on the first line and the request in protobuf text format after it, e.g.
//   SubmitJob
//   spec { name: "k" language: "cpp" ... }
// Text rather than wire format keeps the seed corpus readable; libFuzzer
// still mutates into malformed and oversized fields. Register and
// AcquireLease are left out: a registered device starts compiler processes
// and AcquireLease long-polls, neither of which a fuzzer iteration can afford.
#include <google/protobuf/text_format.h>
#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "coordinator/coordinator.h"
#include "coordinator/grpc_services.h"

namespace {

namespace v1 = ::tunefleet::v1;

struct Target {
  std::unique_ptr<tf::coordinator::Coordinator> coordinator;
  std::unique_ptr<tf::coordinator::TuneFleetService> client_service;
  std::unique_ptr<tf::coordinator::WorkerServiceImpl> worker_service;
};

Target& Get() {
  static Target* target = [] {
    spdlog::set_level(spdlog::level::off);
    char dir[] = "/tmp/tf-rpc-fuzz-XXXXXX";
    if (mkdtemp(dir) == nullptr) abort();
    tf::coordinator::CoordinatorOptions options;
    options.db_path = std::string(dir) + "/fuzz.db";
    options.artifact_dir = std::string(dir) + "/artifacts";
    options.db_synchronous_full = false;
    auto coordinator = tf::coordinator::Coordinator::Start(options);
    if (!coordinator.ok()) abort();
    // Anonymous calls get every right: tokens are tests/integration/roles_test.cc's subject.
    auto* t = new Target;
    t->coordinator = std::move(*coordinator);
    t->client_service = std::make_unique<tf::coordinator::TuneFleetService>(
        *t->coordinator, tf::coordinator::Anonymous::kAllowed);
    t->worker_service = std::make_unique<tf::coordinator::WorkerServiceImpl>(
        *t->coordinator, tf::coordinator::Anonymous::kAllowed);
    return t;
  }();
  return *target;
}

template <typename Request>
bool Parse(std::string_view text, Request* request) {
  google::protobuf::TextFormat::Parser parser;
  parser.AllowPartialMessage(true);
  return parser.ParseFromString(std::string(text), request);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t newline = input.find('\n');
  if (newline == std::string_view::npos) return 0;
  const std::string_view method = input.substr(0, newline);
  const std::string_view body = input.substr(newline + 1);
  Target& t = Get();
  grpc::ServerContext context;

  if (method == "SubmitJob") {
    v1::SubmitJobRequest request;
    v1::Job response;
    if (Parse(body, &request)) (void)t.client_service->SubmitJob(&context, &request, &response);
  } else if (method == "GetJob" || method == "CancelJob" || method == "ListResults") {
    v1::GetJobRequest request;
    if (!Parse(body, &request)) return 0;
    v1::Job job;
    v1::ListResultsResponse results;
    if (method == "GetJob") (void)t.client_service->GetJob(&context, &request, &job);
    if (method == "CancelJob") (void)t.client_service->CancelJob(&context, &request, &job);
    if (method == "ListResults") (void)t.client_service->ListResults(&context, &request, &results);
  } else if (method == "ListJobs") {
    v1::ListJobsRequest request;
    v1::ListJobsResponse response;
    if (Parse(body, &request)) (void)t.client_service->ListJobs(&context, &request, &response);
  } else if (method == "QueryBest") {
    // The callback handler needs a live call; what it does besides its two
    // argument checks is this.
    v1::QueryBestRequest request;
    if (Parse(body, &request)) (void)t.coordinator->QueryBest(request);
  } else if (method == "Heartbeat") {
    v1::HeartbeatRequest request;
    v1::HeartbeatResponse response;
    if (Parse(body, &request)) (void)t.worker_service->Heartbeat(&context, &request, &response);
  } else if (method == "ReportResults") {
    v1::ReportResultsRequest request;
    v1::ReportResultsResponse response;
    if (Parse(body, &request)) (void)t.worker_service->ReportResults(&context, &request, &response);
  } else if (method == "FetchArtifact") {
    v1::FetchArtifactRequest request;
    if (Parse(body, &request)) (void)t.coordinator->ArtifactPath(request.sha256());
  }
  return 0;
}
