#include "runner/runner_protocol.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace tf::runner {
namespace {

Status WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::Unavailable(std::string("writing to runner pipe: ") + std::strerror(errno));
    }
    data += n;
    size -= n;
  }
  return Status::Ok();
}

// Reads exactly `size` bytes; returns how many arrived before end of stream.
Result<size_t> ReadFull(int fd, char* data, size_t size, Clock::time_point deadline) {
  size_t got = 0;
  while (got < size) {
    if (deadline != Clock::time_point::max()) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left < 0) return Status::DeadlineExceeded("no message from the runner in time");
      pollfd pfd{fd, POLLIN, 0};
      int ready = poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left + 1, 1 << 30)));
      if (ready < 0 && errno != EINTR) {
        return Status::Internal(std::string("poll on runner pipe: ") + std::strerror(errno));
      }
      if (ready <= 0) continue;
    }
    ssize_t n = read(fd, data + got, size - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::Unavailable(std::string("reading runner pipe: ") + std::strerror(errno));
    }
    if (n == 0) break;
    got += n;
  }
  return got;
}

}  // namespace

Status WriteMessage(int fd, const google::protobuf::MessageLite& message) {
  std::string body;
  if (!message.SerializeToString(&body)) {
    return Status::Internal("cannot serialize " + message.GetTypeName());
  }
  if (body.size() > kMaxFrameBytes) {
    return Status::InvalidArgument(message.GetTypeName() + " of " + std::to_string(body.size()) +
                                   " bytes exceeds the frame limit");
  }
  const uint32_t size = static_cast<uint32_t>(body.size());
  std::string frame = {static_cast<char>(size), static_cast<char>(size >> 8),
                       static_cast<char>(size >> 16), static_cast<char>(size >> 24)};
  frame += body;
  return WriteAll(fd, frame.data(), frame.size());
}

Result<bool> ReadMessage(int fd, google::protobuf::MessageLite* message,
                         Clock::time_point deadline) {
  unsigned char header[4];
  TF_ASSIGN_OR_RETURN(size_t got, ReadFull(fd, reinterpret_cast<char*>(header), 4, deadline));
  if (got == 0) return false;
  if (got < 4) return Status::Unavailable("runner stream ended inside a frame header");
  const uint32_t size = header[0] | header[1] << 8 | header[2] << 16 | uint32_t{header[3]} << 24;
  if (size > kMaxFrameBytes) {
    return Status::Internal("runner frame of " + std::to_string(size) +
                            " bytes exceeds the limit: corrupted stream");
  }
  std::string body(size, '\0');
  TF_ASSIGN_OR_RETURN(got, ReadFull(fd, body.data(), size, deadline));
  if (got < size) return Status::Unavailable("runner stream ended inside a frame");
  if (!message->ParseFromString(body)) {
    return Status::Internal("cannot parse " + message->GetTypeName() + " from the runner stream");
  }
  return true;
}

}  // namespace tf::runner
