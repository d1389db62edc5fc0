#include "coordinator/health_server.h"

#include <grpcpp/ext/health_check_service_server_builder_option.h>
#include <grpcpp/health_check_service_interface.h>

namespace tf::coordinator {

namespace health = grpc::health::v1;

HealthServer::HealthServer() {
  statuses_[""] = health::HealthCheckResponse::SERVING;
  for (const char* service : kServedServices) {
    statuses_[service] = health::HealthCheckResponse::NOT_SERVING;
  }
}

Result<std::unique_ptr<HealthServer>> HealthServer::Start(const std::string& listen) {
  auto server = std::unique_ptr<HealthServer>(new HealthServer);
  grpc::ServerBuilder builder;
  // This server's health service is ours, not gRPC's built-in one.
  builder.SetOption(std::make_unique<grpc::HealthCheckServiceServerBuilderOption>(nullptr));
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);  // a port in use is refused
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &server->port_);
  builder.RegisterService(&server->service_);
  server->server_ = builder.BuildAndStart();
  if (!server->server_ || server->port_ == 0) {
    return tf::Status::Unavailable("cannot listen on " + listen + " (--health-listen)");
  }
  return server;
}

HealthServer::~HealthServer() {
  {
    std::lock_guard lock(mu_);
    shutting_down_ = true;
  }
  changed_.notify_all();
  if (server_) server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

void HealthServer::SetServing(bool serving, grpc::Server* also) {
  {
    std::lock_guard lock(mu_);
    for (const char* service : kServedServices) {
      statuses_[service] =
          serving ? health::HealthCheckResponse::SERVING : health::HealthCheckResponse::NOT_SERVING;
    }
  }
  changed_.notify_all();
  if (also && also->GetHealthCheckService()) {
    for (const char* service : kServedServices) {
      also->GetHealthCheckService()->SetServingStatus(service, serving);
    }
  }
}

HealthServer::Status HealthServer::Lookup(const std::string& service) {
  auto found = statuses_.find(service);
  return found == statuses_.end() ? health::HealthCheckResponse::SERVICE_UNKNOWN : found->second;
}

grpc::Status HealthServer::Service::Check(grpc::ServerContext*,
                                          const health::HealthCheckRequest* request,
                                          health::HealthCheckResponse* response) {
  std::lock_guard lock(owner_.mu_);
  Status status = owner_.Lookup(request->service());
  if (status == health::HealthCheckResponse::SERVICE_UNKNOWN) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND, "unknown service " + request->service());
  }
  response->set_status(status);
  return grpc::Status::OK;
}

// Sends the status now and at every change, until the caller goes away or
// the server stops.
grpc::Status HealthServer::Service::Watch(grpc::ServerContext* context,
                                          const health::HealthCheckRequest* request,
                                          grpc::ServerWriter<health::HealthCheckResponse>* writer) {
  std::unique_lock lock(owner_.mu_);
  std::optional<Status> sent;
  while (!owner_.shutting_down_ && !context->IsCancelled()) {
    Status status = owner_.Lookup(request->service());
    if (status != sent) {
      health::HealthCheckResponse response;
      response.set_status(status);
      lock.unlock();
      if (!writer->Write(response)) return grpc::Status::OK;
      lock.lock();
      sent = status;
    }
    owner_.changed_.wait_for(lock, std::chrono::milliseconds(500));
  }
  return grpc::Status::OK;
}

}  // namespace tf::coordinator
