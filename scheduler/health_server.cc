#include "scheduler/health_server.h"

#include <grpcpp/health_check_service_interface.h>

namespace tf::scheduler {

Result<std::unique_ptr<HealthServer>> HealthServer::Start(const std::string& listen) {
  grpc::EnableDefaultHealthCheckService(true);
  auto health = std::unique_ptr<HealthServer>(new HealthServer);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &health->port_);
  health->server_ = builder.BuildAndStart();
  if (!health->server_ || health->port_ == 0) {
    return Status::Unavailable("cannot listen on " + listen + " (--health-listen)");
  }
  health->SetServing(false);
  return health;
}

HealthServer::~HealthServer() {
  if (server_) server_->Shutdown(std::chrono::system_clock::now());
}

void HealthServer::SetServing(bool serving, grpc::Server* also) {
  for (grpc::Server* server : {server_.get(), also}) {
    if (!server || !server->GetHealthCheckService()) continue;
    for (const char* service : kServedServices) {
      server->GetHealthCheckService()->SetServingStatus(service, serving);
    }
  }
}

}  // namespace tf::scheduler
