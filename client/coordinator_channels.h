// Channels to a coordinator that may be at any of several addresses: the
// active coordinator and its standbys on the same PostgreSQL database, of
// which only the active one listens. Each call goes to the address whose
// connection is up, so that clients and workers follow a takeover without a
// request ever reaching a coordinator that cannot answer it. Thread-safe.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace tf::client {

class CoordinatorChannels {
 public:
  // `addresses`: HOST:PORT, or several separated by commas. Fails on an
  // empty list or an address without a port, naming it.
  static Result<std::unique_ptr<CoordinatorChannels>> Make(
      const std::string& addresses, const std::shared_ptr<grpc::ChannelCredentials>& credentials,
      const grpc::ChannelArguments& args);

  // The channel to call on: with one address, its own; with several, the
  // first connected one, starting from the one used last and connecting them
  // all for up to `wait` when none is (a standby taking over), else the one
  // used last (whose call then fails as unreachable).
  std::shared_ptr<grpc::Channel> Pick(std::chrono::milliseconds wait);

  // As given to Make, for messages.
  const std::string& addresses() const { return addresses_; }

 private:
  std::string addresses_;
  std::vector<std::shared_ptr<grpc::Channel>> channels_;
  std::atomic<size_t> current_{0};
};

}  // namespace tf::client
