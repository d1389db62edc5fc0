#include "worker/artifact_cache.h"

#include <gtest/gtest.h>

#include "common/files.h"
#include "tests/test_util.h"

namespace tf::worker {
namespace {

// A coordinator stand-in that serves `bytes` and counts the fetches.
struct Served {
  std::string bytes = "the artifact's bytes";
  int fetches = 0;
  ArtifactCache::Fetch fetch() {
    return [this](const std::string&, const std::string& path) {
      ++fetches;
      return WriteFileAtomic(path, bytes);
    };
  }
};

TEST(ArtifactCacheTest, FetchesOnAMissThenServesFromDisk) {
  testing::TempDir dir;
  Served served;
  ArtifactCache cache(dir.path(), served.fetch());
  const std::string sha = Sha256Hex(served.bytes);
  auto first = cache.Get(sha);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = cache.Get(sha);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*first, *second);
  EXPECT_EQ(served.fetches, 1);
  EXPECT_EQ(*ReadFile(*second), served.bytes);
}

TEST(ArtifactCacheTest, ACachedFileCorruptedAfterUseIsFetchedAgain) {
  testing::TempDir dir;
  Served served;
  ArtifactCache cache(dir.path(), served.fetch());
  const std::string sha = Sha256Hex(served.bytes);
  auto path = cache.Get(sha);
  ASSERT_TRUE(path.ok());
  ASSERT_TRUE(WriteFileAtomic(*path, "the artifact's bytez").ok());
  auto again = cache.Get(sha);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(served.fetches, 2);
  EXPECT_EQ(*ReadFile(*again), served.bytes);
}

TEST(ArtifactCacheTest, ADownloadThatNeverMatchesIsAnErrorNamingBothHashes) {
  testing::TempDir dir;
  Served served;
  ArtifactCache cache(dir.path(), served.fetch());
  const std::string wanted = Sha256Hex("other bytes");
  auto got = cache.Get(wanted);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(served.fetches, 2);  // one retry
  EXPECT_NE(got.status().message().find(wanted), std::string::npos);
  EXPECT_NE(got.status().message().find(Sha256Hex(served.bytes)), std::string::npos);
}

}  // namespace
}  // namespace tf::worker
