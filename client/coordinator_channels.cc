#include "client/coordinator_channels.h"

#include <algorithm>

#include "common/address.h"

namespace tf::client {
namespace {

// How long Pick waits on one channel before looking at the others.
constexpr auto kPollSlice = std::chrono::milliseconds(20);
// How long the poller waits on a channel, or sleeps while none needs it:
// what it adds to the destruction of a client.
constexpr auto kPollerSlice = std::chrono::milliseconds(100);

constexpr char kUsage[] = "use HOST:PORT[,HOST:PORT...]";

// The comma-separated items, each without the blanks around it.
std::vector<std::string> SplitAddresses(const std::string& addresses) {
  constexpr char kBlanks[] = " \t\r\n";
  std::vector<std::string> items;
  size_t start = 0;
  for (;;) {
    const size_t comma = std::min(addresses.find(',', start), addresses.size());
    std::string item = addresses.substr(start, comma - start);
    item.erase(item.find_last_not_of(kBlanks) + 1);
    item.erase(0, item.find_first_not_of(kBlanks));
    items.push_back(std::move(item));
    if (comma == addresses.size()) return items;
    start = comma + 1;
  }
}

// Accepts HOST:PORT, [IPv6]:PORT and gRPC target URIs (dns:///..., unix:...).
Status CheckAddress(const std::string& address) {
  if (address.empty()) {
    return Status::InvalidArgument(std::string("coordinator address is empty; ") + kUsage);
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
  // "a, b" is two addresses: gRPC would look " b" up as a host name.
  const std::vector<std::string> list = SplitAddresses(addresses);
  for (const std::string& address : list) {
    if (address.empty() && list.size() > 1) {
      return Status::InvalidArgument("coordinator addresses '" + addresses +
                                     "' have an empty item; " + kUsage);
    }
    TF_RETURN_IF_ERROR(CheckAddress(address));
    made->channels_.push_back(grpc::CreateCustomChannel(address, credentials, args));
    made->addresses_ += (made->addresses_.empty() ? "" : ",") + address;
  }
  made->poller_ = std::thread(&CoordinatorChannels::PollWhileConnecting, made.get());
  return made;
}

CoordinatorChannels::~CoordinatorChannels() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  stop_.notify_all();
  if (poller_.joinable()) poller_.join();
}

void CoordinatorChannels::PollWhileConnecting() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    bool polled = false;
    for (const auto& channel : channels_) {
      // An idle channel connects at its next call (which polls it meanwhile).
      const grpc_connectivity_state state = channel->GetState(/*try_to_connect=*/false);
      if (state != GRPC_CHANNEL_CONNECTING && state != GRPC_CHANNEL_TRANSIENT_FAILURE) continue;
      lock.unlock();
      channel->WaitForStateChange(state, std::chrono::system_clock::now() + kPollerSlice);
      lock.lock();
      polled = true;
    }
    if (!polled) stop_.wait_for(lock, kPollerSlice);
  }
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
