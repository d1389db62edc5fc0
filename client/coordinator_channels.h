// Channels to a coordinator that may be at any of several addresses: the
// active coordinator and its standbys on the same PostgreSQL database, of
// which only the active one listens. Each call goes to the address whose
// connection is up, so that clients and workers follow a takeover without a
// request ever reaching a coordinator that cannot answer it. Thread-safe.
//
// gRPC notices that a connection attempt ended (refused, or connected) only
// while some thread polls its channel: a call that fails fast polls none,
// and gRPC's backup poller looks every 5 s, so a client left alone found a
// restarted coordinator 5-10 s late (grpc/grpc#28866). A thread of each
// CoordinatorChannels polls the channels that are connecting or failed, so
// that the next attempt after gRPC's back-off (at most 1 s,
// CoordinatorChannelArgs) finds a restarted coordinator.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"

namespace tf::client {

class CoordinatorChannels {
 public:
  // `addresses`: HOST:PORT, or several separated by commas, blanks around
  // each ignored. Fails on an empty list, an empty item or an address
  // without a port, naming it.
  static Result<std::unique_ptr<CoordinatorChannels>> Make(
      const std::string& addresses, const std::shared_ptr<grpc::ChannelCredentials>& credentials,
      const grpc::ChannelArguments& args);

  // The channel to call on: with one address, its own; with several, the
  // first connected one, starting from the one used last and connecting them
  // all for up to `wait` when none is (a standby taking over), else the one
  // used last (whose call then fails as unreachable).
  std::shared_ptr<grpc::Channel> Pick(std::chrono::milliseconds wait);

  // As given to Make, without blanks, for messages.
  const std::string& addresses() const { return addresses_; }

  CoordinatorChannels() = default;
  ~CoordinatorChannels();

 private:
  // The poller's loop, until the destructor sets stopping_.
  void PollWhileConnecting();

  std::string addresses_;
  std::vector<std::shared_ptr<grpc::Channel>> channels_;
  std::atomic<size_t> current_{0};
  std::mutex mu_;
  std::condition_variable stop_;
  bool stopping_ = false;  // guarded by mu_
  std::thread poller_;
};

}  // namespace tf::client
