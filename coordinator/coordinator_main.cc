// tunefleet-coordinator: serves the client- and worker-facing APIs over gRPC,
// keeps jobs and results in the tuning database, compiles candidates.
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <filesystem>
#include <thread>

#include "auth/tls.h"
#include "auth/token_file.h"
#include "common/address.h"
#include "common/daemon_flags.h"
#include "common/files.h"
#include "common/flag_checks.h"
#include "coordinator/grpc_services.h"
#include "coordinator/health_server.h"
#include "db/database.h"
#include "web/dashboard_server.h"
#include "web/rpc_metrics.h"

namespace {

std::atomic<bool> g_stop{false};

// For the HOST:PORT flags: checked while parsing, so that a bad one exits 2
// before anything is created.
const CLI::Validator kListenAddress(
    [](std::string& address) {
      tf::Status checked = tf::CheckListenAddress(address);
      return checked.ok() ? std::string() : checked.message();
    },
    "");

// The operator's way in: the admin token in `path`, made valid in the
// database, or a new one written there (mode 0600) when `path` is missing.
tf::Status SetUpAdminToken(tf::coordinator::Coordinator& coordinator, const std::string& path) {
  if (std::filesystem::exists(path)) {
    TF_RETURN_IF_ERROR(tf::auth::CheckOwnerOnly(path));
    TF_ASSIGN_OR_RETURN(std::string token, tf::auth::ReadTokenFile(path));
    tf::Status ensured = coordinator.EnsureAdminToken(token);
    if (!ensured.ok()) {
      return tf::Status::FailedPrecondition(path + ": " + ensured.message() +
                                            "; remove the file to get a new admin token");
    }
    spdlog::info("admin token: {}", path);
    return tf::Status::Ok();
  }
  tunefleet::v1::CreateTokenRequest request;
  request.set_name("admin");
  request.set_role(tunefleet::v1::ROLE_ADMIN);
  TF_ASSIGN_OR_RETURN(auto created, coordinator.CreateToken(request));
  tf::Status written = tf::auth::WriteTokenFile(path, created.token());
  if (!written.ok()) {
    (void)coordinator.RevokeToken(created.info().token_id());  // no one holds it
    return written;
  }
  spdlog::info("new admin token written to {} (mode 0600)", path);
  return coordinator.EnsureAdminToken(created.token());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "TuneFleet coordinator: accepts tuning jobs, compiles candidates, leases them to "
      "workers and keeps the best configurations in the tuning database.\n"
      "Example: tunefleet-coordinator --listen 127.0.0.1:50051 --db tunefleet.db --tls-cert "
      "server.pem --tls-key server.key "
      "--artifacts artifacts/\n"
      "With PostgreSQL: --db postgresql://tunefleet@db.example/tunefleet --admin-token-file "
      "admin.token; a second coordinator on the same database stands by and takes over when "
      "the first one's connection ends."};
  tf::coordinator::CoordinatorOptions options;
  std::string listen = "127.0.0.1:50051";
  std::string sync = "full";
  std::string port_file;
  app.add_option("--listen", listen, "address to serve on, HOST:PORT")
      ->check(kListenAddress)
      ->capture_default_str();
  app.add_option("--db", options.db_path,
                 "tuning database: an SQLite file (created if missing), or a PostgreSQL "
                 "connection URI postgresql://USER@HOST:PORT/DATABASE (the password from "
                 "PGPASSWORD or ~/.pgpass, not the command line); coordinators on one "
                 "PostgreSQL database take turns: one serves, the others stand by")
      ->required();
  app.add_option("--artifacts", options.artifact_dir, "directory of compiled artifacts")
      ->required();
  app.add_option("--lease-ttl-ms", options.lease_ttl_ms,
                 "a lease not renewed by heartbeats for this long goes to another worker")
      ->check(tf::kPositive)
      ->capture_default_str();
  app.add_option("--heartbeat-ms", options.heartbeat_interval_ms,
                 "worker heartbeat interval, shorter than --lease-ttl-ms")
      ->check(tf::kPositive)
      ->capture_default_str();
  app.add_option("--worker-retention-ms", options.worker_retention_ms,
                 "a worker silent this long with no lease is forgotten: gone from `tunefleet "
                 "workers` and the dashboard, its results and its id's owner kept; it registers "
                 "again if it comes back (restarted workers register under new ids)")
      ->check(tf::kPositive)
      ->capture_default_str();
  app.add_option("--batch-size", options.build_batch_size, "configurations per compiled batch")
      ->check(tf::kPositive)
      ->capture_default_str();
  app.add_option("--build-jobs", options.build_parallelism,
                 "compiler processes in parallel (0: one per core)")
      ->check(tf::kNonNegative)
      ->capture_default_str();
  app.add_option("--db-sync", sync,
                 "full: every commit is on disk before it is acknowledged (survives power loss; "
                 "PostgreSQL: synchronous_commit on); normal: survives crashes of the "
                 "coordinator only")
      ->check(CLI::IsMember({"full", "normal"}))
      ->capture_default_str();
  int max_message_mb = 64;
  app.add_option("--max-message-mb", max_message_mb,
                 "largest request accepted, MiB (a job's spec and sources travel in one)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--max-jobs-in-flight", options.max_jobs_in_flight,
                 "queued and running jobs at once; more submissions are refused (0: no limit)")
      ->check(tf::kNonNegative)
      ->capture_default_str();
  app.add_option("--max-jobs-in-flight-per-token", options.max_jobs_in_flight_per_token,
                 "queued and running jobs of one token at once (0: no limit)")
      ->check(tf::kNonNegative)
      ->capture_default_str();
  app.add_option("--max-source-bytes", options.limits.max_source_bytes,
                 "a job's sources together, bytes")
      ->check(tf::kPositive)
      ->capture_default_str();
  tf::auth::ServerTls tls;
  bool plaintext = false;
  app.add_option("--tls-cert", tls.cert_file,
                 "TLS certificate (PEM) presented to clients and workers");
  app.add_option("--tls-key", tls.key_file, "private key of --tls-cert (PEM)");
  CLI::Option* client_ca_option = app.add_option(
      "--tls-client-ca", tls.client_ca_file,
      "require every client and worker to present a certificate signed by this CA (mutual TLS)");
  CLI::Option* plaintext_flag = app.add_flag(
      "--plaintext", plaintext,
      "serve without TLS: bearer tokens cross the network in the clear (meant for loopback, or a "
      "network something else encrypts; it warns at start)");
  std::string admin_token_file;
  app.add_option("--admin-token-file", admin_token_file,
                 "file holding the admin token (created with a new one, mode 0600, when missing; "
                 "default: the SQLite database's path + .admin-token; required with PostgreSQL)");
  bool allow_anonymous = false;
  app.add_flag("--allow-anonymous", allow_anonymous,
               "serve calls without a bearer token with every right (calls with one are still "
               "checked)");
  app.add_option("--port-file", port_file,
                 "write the port being served on to this file once ready (for scripts and tests)");
  std::string health_listen;
  std::string health_port_file;
  CLI::Option* health_option =
      app.add_option("--health-listen", health_listen,
                     "also serve grpc.health.v1, and only it, in plaintext on HOST:PORT (for "
                     "Kubernetes' gRPC probes, which speak no TLS)")
          ->check(kListenAddress);
  app.add_option("--health-port-file", health_port_file,
                 "write the port of --health-listen to this file once listening")
      ->needs(health_option);
  std::string http_listen;
  std::string http_port_file;
  CLI::Option* http_option =
      app.add_option("--http", http_listen,
                     "also serve the web dashboard and Prometheus /metrics on HOST:PORT, e.g. "
                     "127.0.0.1:8080, with the same tokens and TLS as the gRPC API (off by "
                     "default)")
          ->check(kListenAddress);
  app.add_option("--http-port-file", http_port_file,
                 "write the port of --http to this file once listening")
      ->needs(http_option);
  client_ca_option->excludes(plaintext_flag);
  if (std::optional<int> exit_code = tf::ParseDaemonFlags(app, argc, argv)) return *exit_code;
  options.db_synchronous_full = sync == "full";
  if (admin_token_file.empty() && tf::db::Database::IsPostgresUrl(options.db_path)) {
    spdlog::critical(
        "--db is a PostgreSQL URI: pass --admin-token-file too (there is no database file to "
        "keep the admin token beside)");
    return 2;
  }

  // A heartbeat as long as the lease would let every lease lapse between beats.
  if (options.heartbeat_interval_ms >= options.lease_ttl_ms) {
    spdlog::critical("--heartbeat-ms {} must be shorter than --lease-ttl-ms {}",
                     options.heartbeat_interval_ms, options.lease_ttl_ms);
    return 2;
  }
  std::shared_ptr<grpc::ServerCredentials> credentials;
  if (plaintext && !(tls.cert_file.empty() && tls.key_file.empty())) {
    spdlog::critical("--plaintext serves without TLS: pass it or --tls-cert and --tls-key");
    return 2;
  }
  if (!plaintext && (tls.cert_file.empty() || tls.key_file.empty())) {
    spdlog::critical(tls.cert_file.empty() && tls.key_file.empty()
                         ? "pass --tls-cert and --tls-key to serve over TLS, or --plaintext to "
                           "serve without it"
                         : "--tls-cert and --tls-key go together: pass both");
    return 2;
  }
  if (plaintext) {
    credentials = grpc::InsecureServerCredentials();
  } else {
    auto made = tf::auth::MakeServerCredentials(tls);
    if (!made.ok()) {
      spdlog::critical("{}", made.status().message());
      return 2;
    }
    credentials = *made;
  }

  // Listening before the database is opened, so that a long recovery passes
  // liveness probes (service "") while readiness waits for SetServing.
  std::unique_ptr<tf::coordinator::HealthServer> health;
  if (!health_listen.empty()) {
    auto started = tf::coordinator::HealthServer::Start(health_listen);
    if (!started.ok()) {
      spdlog::critical("{}", started.status().message());
      return 1;
    }
    health = std::move(*started);
    spdlog::info("health (grpc.health.v1, plaintext) on {} (port {})", health_listen,
                 health->port());
    if (!health_port_file.empty()) {
      tf::Status written =
          tf::WriteFileAtomic(health_port_file, std::to_string(health->port()) + "\n");
      if (!written.ok()) spdlog::error("{}", written.message());
    }
  }

  // Counted from the start, when there is a port to read them on.
  std::unique_ptr<tf::web::Metrics> metrics;
  // A standby's answers while it waits for the database, then the dashboard
  // on the same socket; reset before the coordinator it serves goes.
  std::unique_ptr<tf::web::DashboardServer> dashboard;
  auto start_dashboard = [&](tf::coordinator::Coordinator* serving) -> tf::Status {
    TF_ASSIGN_OR_RETURN(
        dashboard, tf::web::DashboardServer::Start({http_listen, plaintext, tls, allow_anonymous},
                                                   *metrics, serving));
    spdlog::info("{} ({}) on {} (port {})",
                 serving ? "dashboard and /metrics" : "standby: /metrics and /healthz",
                 plaintext ? "http" : "https", http_listen, dashboard->port());
    if (!http_port_file.empty()) {
      tf::Status written =
          tf::WriteFileAtomic(http_port_file, std::to_string(dashboard->port()) + "\n");
      if (!written.ok()) spdlog::error("{}", written.message());
    }
    return tf::Status::Ok();
  };
  if (!http_listen.empty()) {
    metrics = std::make_unique<tf::web::Metrics>();
    options.observer = metrics.get();
    // So that a standby's scrapes and probes are answered, not refused.
    options.standing_by = [&] { return start_dashboard(nullptr); };
  }
  auto coordinator = tf::coordinator::Coordinator::Start(options);
  if (!coordinator.ok()) {
    spdlog::critical("cannot start: {}", coordinator.status().message());
    return 1;
  }
  const auto anonymous =
      allow_anonymous ? tf::coordinator::Anonymous::kAllowed : tf::coordinator::Anonymous::kRefused;
  tf::coordinator::TuneFleetService client_service(**coordinator, anonymous);
  tf::coordinator::TuningResultsService results_service(**coordinator, anonymous);
  tf::coordinator::WorkerServiceImpl worker_service(**coordinator, anonymous);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  // gRPC sets SO_REUSEPORT by default, with which a second coordinator on a
  // port in use would start and answer part of its connections from another
  // database. Without it, that start fails here.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Clients ping every 2 s while a call is in flight (a watch, quiet for as
  // long as its job is: client/channel_setup.cc), workers every 10 s even
  // without one; gRPC's defaults answer both with GOAWAY "too many pings".
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 1000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  int port = 0;
  builder.AddListeningPort(listen, credentials, &port);
  builder.RegisterService(&client_service);
  builder.RegisterService(&results_service);
  builder.RegisterService(&worker_service);
  builder.SetMaxReceiveMessageSize(max_message_mb << 20);
  if (metrics)
    builder.experimental().SetInterceptorCreators(tf::web::RpcMetricsInterceptors(*metrics));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    spdlog::critical("cannot listen on {} (is another process serving there?)", listen);
    return 1;
  }
  // Only now that the port is ours: a start that fails on it, a second
  // coordinator started by mistake, leaves no admin token file or token.
  if (admin_token_file.empty()) admin_token_file = options.db_path + ".admin-token";
  if (tf::Status admin = SetUpAdminToken(**coordinator, admin_token_file); !admin.ok()) {
    spdlog::critical("{}", admin.message());
    return 2;
  }
  if (dashboard) {
    dashboard->Serve(**coordinator);
    spdlog::info("dashboard and /metrics on port {}, taken over from the standby's",
                 dashboard->port());
  } else if (metrics) {
    if (tf::Status started = start_dashboard(coordinator->get()); !started.ok()) {
      spdlog::critical("{}", started.message());
      return 1;
    }
  }
  // Before anything says it is ready (health, --port-file), so that a stop
  // asked for from then on is a clean one.
  std::signal(SIGINT, [](int) { g_stop = true; });
  std::signal(SIGTERM, [](int) { g_stop = true; });
  if (health) health->SetServing(true, server.get());
  if (plaintext) {
    spdlog::warn(
        "serving PLAINTEXT on {} (port {}) (--plaintext): no TLS; bearer tokens and everything "
        "else cross the network in the clear; use it on loopback only",
        listen, port);
  } else {
    spdlog::info("serving TLS on {} (port {}){}", listen, port,
                 tls.client_ca_file.empty() ? "" : ", client certificates required");
  }
  if (allow_anonymous) {
    spdlog::warn(
        "ANONYMOUS ACCESS (--allow-anonymous): calls without a bearer token may do anything; "
        "anyone who reaches port {} can submit, cancel and read every job, manage tokens and "
        "act as a worker",
        port);
  }
  spdlog::info("database {}, artifacts {}", tf::db::Database::DisplayName(options.db_path),
               options.artifact_dir);
  if (!port_file.empty()) {
    tf::Status written = tf::WriteFileAtomic(port_file, std::to_string(port) + "\n");
    if (!written.ok()) spdlog::error("{}", written.message());
  }

  while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  spdlog::info("shutting down");
  if (health) health->SetServing(false, server.get());
  dashboard.reset();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return 0;
}
