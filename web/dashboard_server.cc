#include "web/dashboard_server.h"

#include <arpa/inet.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "web/api_json.h"
#include "web/assets.h"

namespace tf::web {
namespace {

using nlohmann::json;

constexpr const char* kJson = "application/json";
constexpr const char* kText = "text/plain; charset=utf-8";
constexpr const char* kPrometheusText = "text/plain; version=0.0.4; charset=utf-8";
constexpr size_t kConnectionThreads = 32;  // connections served at once
constexpr int kListenBacklog = 128;        // connections waiting to be accepted

int HttpStatusOf(Code code) {
  switch (code) {
    case Code::kUnauthenticated:
      return 401;
    case Code::kPermissionDenied:
      return 403;
    case Code::kNotFound:
      return 404;
    case Code::kInvalidArgument:
      return 400;
    case Code::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

// Whether the request's Host names this machine by an address or as
// localhost, which no web page can rename itself to; true without a Host
// (browsers always send one).
bool AddressedByIpOrLocalhost(const httplib::Request& request) {
  if (!request.has_header("Host")) return true;
  std::string host = request.get_header_value("Host");
  if (host.starts_with('[')) {  // [IPv6] or [IPv6]:PORT
    const size_t close = host.find(']');
    if (close == std::string::npos) return false;
    const std::string port = host.substr(close + 1);
    if (!port.empty() && (port.size() < 2 || port[0] != ':' ||
                          port.find_first_not_of("0123456789", 1) != std::string::npos)) {
      return false;
    }
    in6_addr ip6;
    return inet_pton(AF_INET6, host.substr(1, close - 1).c_str(), &ip6) == 1;
  }
  host = host.substr(0, host.rfind(':'));
  in_addr ip4;
  return host == "localhost" || inet_pton(AF_INET, host.c_str(), &ip4) == 1;
}

// A query parameter that is a whole number of 0 or more, `absent` when not
// given; anything else is refused naming it and `what` it is.
Result<int64_t> WholeNumberParam(const httplib::Request& request, const char* name, int64_t absent,
                                 const char* what) {
  if (!request.has_param(name)) return absent;
  const std::string text = request.get_param_value(name);
  int64_t value = -1;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) {
    return Status::InvalidArgument(std::string(name) + ": '" + text + "' is not " + what);
  }
  return value;
}

// `limit` of /api/jobs: absent or 0, the newest 100; at most 1000.
Result<int> JobsLimit(const httplib::Request& request) {
  TF_ASSIGN_OR_RETURN(
      int64_t limit,
      WholeNumberParam(request, "limit", 0, "a number of jobs (0 or more; 0: the newest 100)"));
  return limit == 0 ? 100 : static_cast<int>(std::min<int64_t>(limit, 1000));
}

// The message of a refusal httplib made by itself, before or instead of a
// route: only a 404 is a page that does not exist.
std::string RefusalMessage(const httplib::Request& request, int status) {
  switch (status) {
    case 404:
      return "no such page: " + request.path;
    case 400:
      return "bad request (400): malformed, sent too slowly, or with a header line over " +
             std::to_string(CPPHTTPLIB_HEADER_MAX_LENGTH) + " bytes";
    case 414:
      return "URI too long (414): over " + std::to_string(CPPHTTPLIB_REQUEST_URI_MAX_LENGTH) +
             " bytes";
    case 416:
      return "range not satisfiable (416)";
    case 500:
      return "internal server error (500)";
    default:
      return "HTTP status " + std::to_string(status);
  }
}

void Fail(httplib::Response& response, const Status& status) {
  response.status = HttpStatusOf(status.code());
  if (status.code() == Code::kUnauthenticated) {
    response.set_header("WWW-Authenticate", "Bearer realm=\"tunefleet\"");
  }
  response.set_content(json{{"error", status.message()}}.dump(), kJson);
}

void Reply(httplib::Response& response, const client::Json& body) {
  response.set_header("Cache-Control", "no-store");
  response.set_content(body.dump(), kJson);
}

// "HOST:PORT" or "[V6]:PORT".
Result<std::pair<std::string, int>> ParseListen(const std::string& listen) {
  size_t colon = listen.rfind(':');
  std::string host = colon == std::string::npos ? "" : listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  int port = -1;
  try {
    size_t used = 0;
    port = std::stoi(listen.substr(colon + 1), &used);
    if (used != listen.size() - colon - 1) port = -1;
  } catch (const std::exception&) {
  }
  if (host.empty() || port < 0 || port > 65535) {
    return Status::InvalidArgument("--http " + listen +
                                   ": expected HOST:PORT, e.g. 127.0.0.1:8080");
  }
  return std::make_pair(host, port);
}

// A standby's answer to any request: the liveness probe's "ok", the
// process's gauges (tunefleet_standby 1), or 503 saying why nothing else.
void AnswerAsStandby(const httplib::Request& request, httplib::Response& response,
                     const Metrics& metrics) {
  if (request.path == "/healthz") return response.set_content("ok\n", kText);
  if (request.path == "/metrics")
    return response.set_content(metrics.ScrapeStandby(), kPrometheusText);
  response.status = 503;
  response.set_content("standby: waiting for the active coordinator's database lock\n", kText);
}

Result<std::unique_ptr<httplib::Server>> MakeServer(const DashboardOptions& options) {
  if (options.plaintext) return std::make_unique<httplib::Server>();
  for (const std::string* file :
       {&options.tls.cert_file, &options.tls.key_file, &options.tls.client_ca_file}) {
    if (!file->empty() && !std::filesystem::is_regular_file(*file)) {
      return Status::InvalidArgument("cannot read " + *file);
    }
  }
  auto server = std::make_unique<httplib::SSLServer>(
      options.tls.cert_file.c_str(), options.tls.key_file.c_str(),
      options.tls.client_ca_file.empty() ? nullptr : options.tls.client_ca_file.c_str());
  if (!server->is_valid()) {
    return Status::InvalidArgument("the dashboard cannot use the TLS certificate " +
                                   options.tls.cert_file + " with the key " + options.tls.key_file);
  }
  return std::unique_ptr<httplib::Server>(std::move(server));
}

}  // namespace

Result<std::unique_ptr<DashboardServer>> DashboardServer::Start(
    const DashboardOptions& options, Metrics& metrics, coordinator::Coordinator* coordinator) {
  TF_ASSIGN_OR_RETURN(auto address, ParseListen(options.listen));
  TF_ASSIGN_OR_RETURN(auto server, MakeServer(options));
  std::unique_ptr<DashboardServer> dashboard(
      new DashboardServer(std::move(server), metrics, options.allow_anonymous));
  if (coordinator) dashboard->Serve(*coordinator);
  httplib::Server& http = *dashboard->server_;
  // httplib's default sets SO_REUSEPORT, with which a second coordinator's
  // dashboard on a port in use would start and answer part of its
  // connections. SO_REUSEADDR alone still lets a restart bind past TIME_WAIT.
  socket_t* listening = &dashboard->listening_;
  http.set_socket_options([listening](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    *listening = sock;
  });
  // httplib serves a connection on one pool thread for its whole life, the
  // waits for its first request and between requests included, and the
  // destructor waits for those threads: idle or slow clients, unauthenticated
  // ones too, would hold up /metrics, the page and the coordinator's stop.
  // So a connection that sends nothing is dropped after 2 s (the keep-alive
  // timeout, which covers the wait for a first request too; the page asks
  // every second, so it keeps its connection), one whose request stalls for
  // 2 s too (browsers and scrapers send their headers at once; 2 s rides out
  // a retransmitted packet), and the pool is larger than httplib's default
  // (8 threads up to 9 cores): a browser keeps up to 6 connections open, a
  // scraper one. httplib 0.11 has no deadline for a whole request: a client
  // that sends a byte a second still holds a thread.
  http.set_keep_alive_timeout(2);
  http.set_read_timeout(2);
  http.new_task_queue = [] { return new httplib::ThreadPool(kConnectionThreads); };
  if (address.second == 0) {
    dashboard->port_ = http.bind_to_any_port(address.first);
  } else if (http.bind_to_port(address.first, address.second)) {
    dashboard->port_ = address.second;
  }
  if (dashboard->port_ <= 0) {
    return Status::Unavailable("the dashboard cannot listen on " + options.listen);
  }
  // libcpp-httplib listens with a backlog of 5: a burst of connections while
  // its accept loop is busy would be dropped by the kernel (retried a second
  // later, or never noticed by a client that waits to be spoken to). Linux
  // takes a second listen() on the socket as a new backlog.
  if (::listen(dashboard->listening_, kListenBacklog) != 0) {
    return Status::Unavailable("the dashboard cannot listen on " + options.listen + ": " +
                               std::strerror(errno));
  }
  dashboard->Route(!options.plaintext);
  dashboard->thread_ = std::thread([&http] { http.listen_after_bind(); });
  return dashboard;
}

DashboardServer::DashboardServer(std::unique_ptr<httplib::Server> server, Metrics& metrics,
                                 bool allow_anonymous)
    : server_(std::move(server)), metrics_(metrics), allow_anonymous_(allow_anonymous) {}

DashboardServer::~DashboardServer() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

void DashboardServer::Serve(coordinator::Coordinator& coordinator) {
  gate_.emplace(coordinator.tokens(), allow_anonymous_);
  coordinator_.store(&coordinator);  // after gate_: the routes read it once they see this
}

std::optional<auth::Caller> DashboardServer::Authorize(const httplib::Request& request,
                                                       httplib::Response& response,
                                                       auth::Rpc rpc) const {
  std::optional<std::string> header;
  if (request.has_header("Authorization")) header = request.get_header_value("Authorization");
  // Served without a token, a page on any site that re-pointed its own name
  // at this address (DNS rebinding) could read the API as its own origin.
  if (!header && allow_anonymous_ && !AddressedByIpOrLocalhost(request)) {
    Fail(response, Status::PermissionDenied(
                       "without a token, this coordinator (--allow-anonymous) answers only "
                       "requests addressed to an IP address or localhost, not to '" +
                       request.get_header_value("Host") +
                       "': a web page could take that name (DNS rebinding); use the address, "
                       "or send a token"));
    return std::nullopt;
  }
  auto caller = gate_->CheckHeader(header, rpc);
  if (!caller.ok()) {
    Status status = caller.status();
    if (!header) {
      status = Status::Unauthenticated(
          "no bearer token: sign in with a token, or send the header 'Authorization: Bearer "
          "TOKEN' (" +
          request.path + " needs one)");
    }
    Fail(response, status);
    return std::nullopt;
  }
  return *caller;
}

void DashboardServer::Route(bool tls) {
  httplib::Server& http = *server_;
  // The page runs its own script only, is framed by no one, and neither
  // posts a form (sign-in stays in the script) nor takes another base URL.
  httplib::Headers headers = {
      {"Content-Security-Policy",
       "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "frame-ancestors 'none'; form-action 'none'; base-uri 'none'"},
      {"X-Content-Type-Options", "nosniff"},
      {"Referrer-Policy", "no-referrer"},
  };
  // Browsers ignore it over plain HTTP (RFC 6797): sent over TLS only.
  if (tls) headers.emplace("Strict-Transport-Security", "max-age=31536000");
  http.set_default_headers(std::move(headers));
  // A standby answers everything itself; once serving, the routes do.
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (coordinator_.load()) return httplib::Server::HandlerResponse::Unhandled;
    AnswerAsStandby(req, res, metrics_);
    return httplib::Server::HandlerResponse::Handled;
  });
  for (const char* path : {"/healthz", "/readyz"}) {
    http.Get(path, [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok\n", kText);
    });
  }
  for (const Asset& asset : DashboardAssets()) {
    http.Get(std::string(asset.path), [asset](const httplib::Request&, httplib::Response& res) {
      res.set_content(asset.body.data(), asset.body.size(),
                      std::string(asset.content_type).c_str());
    });
  }
  http.Get("/api/jobs", [this](const httplib::Request& req, httplib::Response& res) {
    auto caller = Authorize(req, res, auth::Rpc::kListJobs);
    if (!caller) return;
    auto limit = JobsLimit(req);
    if (!limit.ok()) return Fail(res, limit.status());
    auto jobs = coordinator().ListJobs(*limit, *caller);
    if (!jobs.ok()) return Fail(res, jobs.status());
    client::Json out = client::Json::array();
    for (const auto& job : *jobs) out.push_back(client::JobJson(job));
    Reply(res, out);
  });
  http.Get(R"(/api/jobs/(\d{1,18}))", [this](const httplib::Request& req, httplib::Response& res) {
    auto caller = Authorize(req, res, auth::Rpc::kGetJob);
    if (!caller) return;
    auto job = coordinator().GetJob(std::stoll(req.matches[1]), *caller);
    if (!job.ok()) return Fail(res, job.status());
    Reply(res, client::JobJson(*job));
  });
  http.Get(R"(/api/jobs/(\d{1,18})/results)", [this](const httplib::Request& req,
                                                     httplib::Response& res) {
    auto caller = Authorize(req, res, auth::Rpc::kListResults);
    if (!caller) return;
    // Only those recorded at or after `since_ms`: what is new to a page
    // following a running job. (Not a count to skip: results come ordered by
    // outcome, not by when they were recorded.)
    auto since = WholeNumberParam(req, "since_ms", 0, "a time in unix milliseconds (0 or more)");
    if (!since.ok()) return Fail(res, since.status());
    auto results = coordinator().ListRecordedResults(std::stoll(req.matches[1]), *caller, *since);
    if (!results.ok()) return Fail(res, results.status());
    client::Json out = client::Json::array();
    for (const auto& r : *results) out.push_back(ResultJson(r));
    Reply(res, out);
  });
  http.Get("/api/workers", [this](const httplib::Request& req, httplib::Response& res) {
    auto caller = Authorize(req, res, auth::Rpc::kListWorkers);
    if (!caller) return;
    // A lease names its job to those ListJobs would show it to.
    const Result<auth::Caller> jobs_view = auth::Authorize(*caller, auth::Rpc::kListJobs);
    auto shows_job = [&jobs_view](int64_t owner_token) {
      return jobs_view.ok() && (!jobs_view->own_only || owner_token == jobs_view->token_id);
    };
    Reply(res,
          WorkersJson(coordinator().ListWorkers(), coordinator().CurrentActivity(), shows_job));
  });
  http.Get("/api/kernels", [this](const httplib::Request& req, httplib::Response& res) {
    auto caller = Authorize(req, res, auth::Rpc::kListKernels);
    if (!caller) return;
    tunefleet::v1::ListKernelsRequest request;
    request.set_device_class(req.get_param_value("device_class"));
    client::Json out = client::Json::array();
    for (const auto& kernel : coordinator().ListKernels(request)) {
      out.push_back(client::KernelJson(kernel));
    }
    Reply(res, out);
  });
  // The kernel name arrives decoded; kernel names are identifiers, so no '/'
  // in one is taken for the path's.
  http.Get(R"(/api/kernels/([^/]+)/best)",
           [this](const httplib::Request& req, httplib::Response& res) {
             auto caller = Authorize(req, res, auth::Rpc::kListBest);
             if (!caller) return;
             tunefleet::v1::ListBestRequest request;
             request.set_kernel(req.matches[1]);
             client::Json out = client::Json::array();
             for (const auto& best : coordinator().ListBest(request)) {
               out.push_back(client::BestJson(best));
             }
             Reply(res, out);
           });
  http.Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) {
    auto caller = Authorize(req, res, auth::Rpc::kListJobs);
    if (!caller) return;
    if (caller->own_only) {
      return Fail(res, Status::PermissionDenied(
                           "/metrics counts every job: it needs a reader or admin token"));
    }
    res.set_content(metrics_.Scrape(coordinator()), kPrometheusText);
  });
  // Routes answer their own refusals; what is left is httplib's.
  http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    res.set_content(json{{"error", RefusalMessage(req, res.status)}}.dump(), kJson);
  });
}

}  // namespace tf::web
