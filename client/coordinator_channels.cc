#include "client/coordinator_channels.h"

#include <algorithm>

#include "common/address.h"

namespace tf::client {
namespace {

// How long Pick waits on one channel before looking at the others.
constexpr auto kPollSlice = std::chrono::milliseconds(20);

// Accepts HOST:PORT, [IPv6]:PORT and gRPC target URIs (dns:///..., unix:...).
Status CheckAddress(const std::string& address) {
  if (address.empty()) {
    return Status::InvalidArgument("coordinator address is empty; use HOST:PORT[,HOST:PORT...]");
  }
  if (address.rfind("unix:", 0) == 0 || address.rfind("unix-abstract:", 0) == 0) {
    return Status::Ok();
  }
  // gRPC would look the whole text up as a host name and call it unreachable.
  for (const char* scheme : {"http://", "https://", "grpc://", "grpcs://"}) {
    if (address.rfind(scheme, 0) == 0) {
      return Status::InvalidArgument("coordinator address '" + address +
                                     "': expected HOST:PORT, without " + scheme +
                                     " (--tls-ca turns TLS on)");
    }
  }
  if (Status checked = CheckListenAddress(address); !checked.ok()) {
    return Status::InvalidArgument("coordinator address " + checked.message());
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<CoordinatorChannels>> CoordinatorChannels::Make(
    const std::string& addresses, const std::shared_ptr<grpc::ChannelCredentials>& credentials,
    const grpc::ChannelArguments& args) {
  auto made = std::make_unique<CoordinatorChannels>();
  made->addresses_ = addresses;
  size_t start = 0;
  do {
    size_t comma = addresses.find(',', start);
    std::string address =
        addresses.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    TF_RETURN_IF_ERROR(CheckAddress(address));
    made->channels_.push_back(grpc::CreateCustomChannel(address, credentials, args));
    start = comma == std::string::npos ? std::string::npos : comma + 1;
  } while (start != std::string::npos);
  return made;
}

std::shared_ptr<grpc::Channel> CoordinatorChannels::Pick(std::chrono::milliseconds wait) {
  const size_t count = channels_.size();
  if (count == 1) return channels_[0];
  const auto deadline = std::chrono::steady_clock::now() + wait;
  const size_t first = current_.load();
  std::vector<grpc_connectivity_state> states(count);
  for (;;) {
    for (size_t k = 0; k < count; ++k) {
      const size_t i = (first + k) % count;
      states[i] = channels_[i]->GetState(/*try_to_connect=*/true);
      if (states[i] == GRPC_CHANNEL_READY) {
        current_ = i;
        return channels_[i];
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) return channels_[first];
    // gRPC moves a connection attempt on only while a thread polls its
    // channel (a call, or a wait for a state change; else its backup poller,
    // every 5 s, long after the attempt timed out). So the wait is spent
    // waiting on each channel in turn, a short slice each, never asleep.
    for (size_t i = 0; i < count; ++i) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      channels_[i]->WaitForStateChange(
          states[i], std::chrono::system_clock::now() + std::clamp(left, {}, kPollSlice));
    }
  }
}

}  // namespace tf::client
