// Framing between a worker and its runner over pipes: each message is a
// uint32 little-endian byte length followed by the serialized protobuf
// (proto/tunefleet/v1/runner.proto). Reads and writes survive EINTR and partial
// transfers.
#pragma once

#include <google/protobuf/message_lite.h>

#include <chrono>
#include <cstdint>

#include "common/status.h"

namespace tf::runner {

// Larger frames mean a corrupted stream, not a real message.
inline constexpr uint32_t kMaxFrameBytes = 64u << 20;

using Clock = std::chrono::steady_clock;

Status WriteMessage(int fd, const google::protobuf::MessageLite& message);

// Reads one frame into `message`: true when one was read, false when the
// stream ended cleanly before a frame began. A stream ending inside a frame
// is kUnavailable; passing `deadline` first is kDeadlineExceeded.
Result<bool> ReadMessage(int fd, google::protobuf::MessageLite* message,
                         Clock::time_point deadline = Clock::time_point::max());

}  // namespace tf::runner
