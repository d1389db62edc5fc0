// The address checks gRPC does not make (common/address.h).
#include "common/address.h"

#include <gtest/gtest.h>

namespace tf {
namespace {

TEST(CheckPortRangeTest, RefusesAPortOver65535WhateverTheAddressForm) {
  for (const char* ok : {"127.0.0.1:0", "127.0.0.1:65535", "[::1]:50051", "dns:///host:443",
                         "unix:/run/tunefleet.sock", "host"}) {
    EXPECT_TRUE(CheckPortRange(ok).ok()) << ok;
  }
  for (const char* bad : {"127.0.0.1:65536", "127.0.0.1:99999", "[::1]:123456", "dns:///host:70000",
                          "host:00000065535"}) {
    EXPECT_EQ(CheckPortRange(bad).code(), Code::kInvalidArgument) << bad;
  }
  EXPECT_EQ(CheckPortRange("127.0.0.1:99999").message(),
            "'127.0.0.1:99999': port 99999 is out of range (0-65535)");
}

TEST(CheckListenAddressTest, NeedsANumericPort) {
  for (const char* ok : {"127.0.0.1:0", "0.0.0.0:50051", "[::]:8081", "localhost:8080"}) {
    EXPECT_TRUE(CheckListenAddress(ok).ok()) << ok;
  }
  for (const char* bad : {"127.0.0.1", "127.0.0.1:", "127.0.0.1:http", "", "127.0.0.1:70000"}) {
    EXPECT_EQ(CheckListenAddress(bad).code(), Code::kInvalidArgument) << bad;
  }
  EXPECT_EQ(CheckListenAddress("127.0.0.1").message(),
            "'127.0.0.1': expected HOST:PORT, e.g. 127.0.0.1:50051");
}

}  // namespace
}  // namespace tf
