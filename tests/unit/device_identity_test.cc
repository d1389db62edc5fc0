// The device class rule every kind's discovery shares (runner/device_identity.h).
#include "runner/device_identity.h"

#include <gtest/gtest.h>

namespace tf::runner {
namespace {

TEST(DeviceIdentityTest, SetsTheIdentityAndTheDeviceClass) {
  ::tunefleet::v1::DeviceInfo info;
  SetDeviceIdentity({.index = 2,
                     .vendor = "acme",
                     .model = "Acme Turbo 9000 (rev 2)",
                     .arch = "a9",
                     .detail = "a9",
                     .label = "",
                     .memory_bytes = int64_t{80} << 30,
                     .compute_units = 132},
                    info);
  EXPECT_EQ(info.index(), 2);
  EXPECT_EQ(info.vendor(), "acme");
  EXPECT_EQ(info.model(), "Acme Turbo 9000 (rev 2)");
  EXPECT_EQ(info.arch(), "a9");
  EXPECT_EQ(info.device_class(), "acme/Acme-Turbo-9000-rev-2/a9");
  EXPECT_EQ(info.labels_size(), 0);
  EXPECT_EQ(info.memory_bytes(), int64_t{80} << 30);
  EXPECT_EQ(info.compute_units(), 132);
}

TEST(DeviceIdentityTest, ALabelEndsTheDeviceClassAndIsAddedToTheLabels) {
  ::tunefleet::v1::DeviceInfo info;
  info.add_labels("earlier");
  SetDeviceIdentity({.index = 0,
                     .vendor = "acme",
                     .model = "Box",
                     .arch = "host",
                     .detail = "8c",
                     .label = "rack7",
                     .memory_bytes = 0,
                     .compute_units = 0},
                    info);
  EXPECT_EQ(info.device_class(), "acme/Box/8c/rack7");
  ASSERT_EQ(info.labels_size(), 2);
  EXPECT_EQ(info.labels(1), "rack7");
}

TEST(DeviceIdentityTest, NoDetailLeavesItsPartOut) {
  ::tunefleet::v1::DeviceInfo info;
  SetDeviceIdentity({.index = 0,
                     .vendor = "acme",
                     .model = "Recorded box",
                     .arch = "recorded",
                     .detail = "",
                     .label = "x",
                     .memory_bytes = 0,
                     .compute_units = 0},
                    info);
  EXPECT_EQ(info.device_class(), "acme/Recorded-box/x");
}

}  // namespace
}  // namespace tf::runner
