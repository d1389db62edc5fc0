// grpc.health.v1 on a plaintext port of its own (--health-listen), for
// Kubernetes' gRPC probes and load balancers, which speak neither TLS nor
// bearer tokens. It tells only whether the coordinator serves, nothing else.
//
// Service "" is SERVING from the moment the process listens (liveness: the
// process is up, even while it recovers a large database or waits as a
// standby); kServedServices are SERVING only while the coordinator answers
// RPCs (readiness: send traffic here).
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "common/status.h"

namespace tf::scheduler {

inline constexpr const char* kServedServices[] = {"tunefleet.v1.TuneFleet",
                                                  "tunefleet.v1.WorkerService"};

class HealthServer {
 public:
  // Listens on `listen` (HOST:PORT, port 0 picks one) with only the health service.
  static Result<std::unique_ptr<HealthServer>> Start(const std::string& listen);
  ~HealthServer();

  int port() const { return port_; }
  // Marks kServedServices SERVING or NOT_SERVING on this server and on `also`
  // (the coordinator's own server, so that its TLS port says the same).
  void SetServing(bool serving, grpc::Server* also = nullptr);

 private:
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace tf::scheduler
