// The coordinator's second port (--http): the web dashboard and the
// Prometheus metrics, served by cpp-httplib.
//
//   /                    the single-page dashboard (web/frontend), no data in it
//   /app.js, /app.css    its bundle
//   /api/jobs            ListJobs       /api/jobs/N           GetJob
//   /api/jobs/N/results  ListResults    /api/workers          ListWorkers, with
//                                                             each device's leases
//   /api/kernels         ListKernels    /api/kernels/K/best   ListBest of kernel K
//     (?device_class=C: of C only)
//   /metrics             Prometheus text exposition (web/metrics.h)
//   /healthz, /readyz    "ok": the process is up; it serves
//
// Everything but the page, its bundle and the probes needs the bearer token
// of the gRPC API in an "Authorization: Bearer" header, checked by the same
// policy table (auth/roles.h) as the RPC the route reads through: a missing
// or unknown token gets 401, a role that may not 403. /metrics counts
// fleet-wide, so it takes the rights of an unrestricted ListJobs (reader or
// admin). TLS uses the gRPC API's certificate (and client CA, if any).
// Under --allow-anonymous, a request without a token is answered only when
// its Host is an IP address or localhost (else 403): a web page that
// re-points its own name at this address cannot read the API.
//
// A standby coordinator (PostgreSQL) listens before it has a coordinator to
// show: until Serve, /healthz answers "ok", /metrics tunefleet_standby 1,
// and every other path 503, all without a token (it has read none, and tells
// nothing but that it stands by). Serve hands the same socket to the
// dashboard, so a scraper or probe is never refused across a takeover.
#pragma once

#include <httplib.h>

#include <atomic>
#include <memory>
#include <optional>
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
  // Listening when it returns, serving `coordinator`'s dashboard, or a
  // standby's answers while it is null (until Serve). Errors name the
  // address or the TLS file.
  static Result<std::unique_ptr<DashboardServer>> Start(const DashboardOptions& options,
                                                        Metrics& metrics,
                                                        coordinator::Coordinator* coordinator);
  // Stops serving, and waits for the connections in flight: about 2 s at
  // most for an idle or stalled one (Start says why).
  ~DashboardServer();

  // A standby's takeover: serves `coordinator`'s dashboard from the next
  // request on. Once only.
  void Serve(coordinator::Coordinator& coordinator);

  int port() const { return port_; }

 private:
  DashboardServer(std::unique_ptr<httplib::Server> server, Metrics& metrics, bool allow_anonymous);
  // `tls`: served over TLS, where browsers are told to keep to https.
  void Route(bool tls);
  // The routes' coordinator: they run only once there is one.
  coordinator::Coordinator& coordinator() const { return *coordinator_.load(); }
  // The caller of a request, allowed what `rpc` needs; else answers it.
  std::optional<auth::Caller> Authorize(const httplib::Request& request,
                                        httplib::Response& response, auth::Rpc rpc) const;

  std::unique_ptr<httplib::Server> server_;
  Metrics& metrics_;
  const bool allow_anonymous_;
  // Set once, by Serve, gate_ first: null while standing by.
  std::optional<auth::Gate> gate_;
  std::atomic<coordinator::Coordinator*> coordinator_{nullptr};
  int port_ = 0;
  socket_t listening_ = INVALID_SOCKET;  // the listening socket, httplib's
  std::thread thread_;
};

}  // namespace tf::web
