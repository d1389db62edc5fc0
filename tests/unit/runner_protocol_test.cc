#include "runner/runner_protocol.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "tunefleet/v1/runner.pb.h"

namespace tf::runner {
namespace {

namespace v1 = ::tunefleet::v1;

class Pipe {
 public:
  Pipe() { EXPECT_EQ(pipe(fds_), 0); }
  ~Pipe() {
    CloseWrite();
    close(fds_[0]);
  }
  int read_fd() const { return fds_[0]; }
  int write_fd() const { return fds_[1]; }
  void CloseWrite() {
    if (fds_[1] >= 0) close(fds_[1]);
    fds_[1] = -1;
  }

 private:
  int fds_[2];
};

TEST(RunnerProtocolTest, MessagesLargerThanThePipeBufferRoundTrip) {
  Pipe pipe;
  v1::RunnerEvent sent;
  sent.mutable_result()->set_candidate_id(42);
  sent.mutable_result()->set_error(std::string(1 << 20, 'x'));  // forces partial reads
  std::thread writer([&] {
    EXPECT_TRUE(WriteMessage(pipe.write_fd(), sent).ok());
    EXPECT_TRUE(WriteMessage(pipe.write_fd(), sent).ok());
    pipe.CloseWrite();
  });
  for (int i = 0; i < 2; ++i) {
    v1::RunnerEvent got;
    auto read = ReadMessage(pipe.read_fd(), &got);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_TRUE(*read);
    EXPECT_EQ(got.result().candidate_id(), 42);
    EXPECT_EQ(got.result().error().size(), 1u << 20);
  }
  writer.join();
  v1::RunnerEvent end;
  auto read = ReadMessage(pipe.read_fd(), &end);
  ASSERT_TRUE(read.ok());
  EXPECT_FALSE(*read) << "a clean end of stream is not an error";
}

TEST(RunnerProtocolTest, StreamEndingInsideAFrameIsAnError) {
  Pipe pipe;
  const unsigned char header_of_100_bytes[] = {100, 0, 0, 0, 'a', 'b'};
  ASSERT_EQ(write(pipe.write_fd(), header_of_100_bytes, sizeof header_of_100_bytes), 6);
  pipe.CloseWrite();
  v1::RunnerEvent event;
  EXPECT_EQ(ReadMessage(pipe.read_fd(), &event).status().code(), Code::kUnavailable);
}

TEST(RunnerProtocolTest, DeadlinePassingIsReported) {
  Pipe pipe;
  v1::RunnerEvent event;
  auto read = ReadMessage(pipe.read_fd(), &event, Clock::now() + std::chrono::milliseconds(20));
  EXPECT_EQ(read.status().code(), Code::kDeadlineExceeded);
}

}  // namespace
}  // namespace tf::runner
