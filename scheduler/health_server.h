// grpc.health.v1 on a plaintext port of its own (--health-listen), for
// Kubernetes' gRPC probes and load balancers, which speak neither TLS nor
// bearer tokens. It tells only whether the coordinator serves, nothing else.
//
// Service "" is SERVING from the moment the process listens (liveness: the
// process is up, even while it recovers a large database or waits as a
// standby); kServedServices are SERVING only while the coordinator answers
// RPCs (readiness: send traffic here), and NOT_SERVING once it stops.
#pragma once

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/status.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace tf::scheduler {

inline constexpr const char* kServedServices[] = {"tunefleet.v1.TuneFleet",
                                                  "tunefleet.v1.WorkerService"};

class HealthServer {
 public:
  // Listens on `listen` (HOST:PORT, port 0 picks one) with only the health service.
  static Result<std::unique_ptr<HealthServer>> Start(const std::string& listen);
  ~HealthServer();

  int port() const { return port_; }
  // kServedServices SERVING or NOT_SERVING, here and on `also` (the
  // coordinator's own server, whose built-in health service then agrees).
  void SetServing(bool serving, grpc::Server* also = nullptr);

 private:
  using Status = grpc::health::v1::HealthCheckResponse::ServingStatus;
  class Service final : public grpc::health::v1::Health::Service {
   public:
    explicit Service(HealthServer& owner) : owner_(owner) {}
    grpc::Status Check(grpc::ServerContext* context,
                       const grpc::health::v1::HealthCheckRequest* request,
                       grpc::health::v1::HealthCheckResponse* response) override;
    grpc::Status Watch(grpc::ServerContext* context,
                       const grpc::health::v1::HealthCheckRequest* request,
                       grpc::ServerWriter<grpc::health::v1::HealthCheckResponse>* writer) override;

   private:
    HealthServer& owner_;
  };

  HealthServer();
  Status Lookup(const std::string& service);  // with mu_ held

  std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, Status> statuses_;
  bool shutting_down_ = false;
  Service service_{*this};
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace tf::scheduler
