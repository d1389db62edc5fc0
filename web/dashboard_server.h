// The coordinator's second port (--http): the web dashboard and the
// Prometheus metrics, served by cpp-httplib.
//
//   /                    the single-page dashboard (web/frontend), no data in it
//   /app.js, /app.css    its bundle
//   /api/jobs            ListJobs       /api/jobs/N           GetJob
//   /api/jobs/N/results  ListResults    /api/workers          ListWorkers, with
//                                                             each device's leases
//   /metrics             Prometheus text exposition (web/metrics.h)
//
// Everything but the page and its bundle needs the bearer token of the gRPC
// API in an "Authorization: Bearer" header, checked by the same policy
// table (auth/roles.h) as the RPC the route reads through: a missing or
// unknown token gets 401, a role that may not 403. /metrics counts
// fleet-wide, so it takes the rights of an unrestricted ListJobs (reader or
// admin). TLS uses the gRPC API's certificate (and client CA, if any).
#pragma once

#include <httplib.h>

#include <memory>
#include <string>
#include <thread>

#include "auth/bearer.h"
#include "auth/tls.h"
#include "coordinator/coordinator.h"
#include "web/metrics.h"

namespace tf::web {

struct DashboardOptions {
  std::string listen;  // HOST:PORT; port 0 picks a free one
  bool plaintext = false;
  auth::ServerTls tls;  // unless plaintext
  bool allow_anonymous = false;
};

class DashboardServer {
 public:
  // Listening when it returns; errors name the address or the TLS file.
  static Result<std::unique_ptr<DashboardServer>> Start(const DashboardOptions& options,
                                                        coordinator::Coordinator& coordinator,
                                                        Metrics& metrics);
  // Stops serving, and waits for the connections in flight: about 2 s at
  // most for an idle or stalled one (Start says why).
  ~DashboardServer();

  int port() const { return port_; }

 private:
  DashboardServer(std::unique_ptr<httplib::Server> server, coordinator::Coordinator& coordinator,
                  Metrics& metrics, bool allow_anonymous);
  void Route();
  // The caller of a request, allowed what `rpc` needs; else answers it.
  std::optional<auth::Caller> Authorize(const httplib::Request& request,
                                        httplib::Response& response, auth::Rpc rpc) const;

  std::unique_ptr<httplib::Server> server_;
  coordinator::Coordinator& coordinator_;
  Metrics& metrics_;
  const auth::Gate gate_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace tf::web
