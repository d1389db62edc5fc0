#include "compiler/artifact_store.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/files.h"
#include "tests/test_util.h"

namespace tf::compiler {
namespace {

class ArtifactStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = ArtifactStore::Open(dir_ + "/store");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
  }

  tf::testing::TempDir temp_;
  const std::string dir_ = temp_.path();
  std::unique_ptr<ArtifactStore> store_;
};

TEST_F(ArtifactStoreTest, PutStoresContentUnderItsHash) {
  auto sha = store_->Put("artifact bytes");
  ASSERT_TRUE(sha.ok()) << sha.status().ToString();
  EXPECT_EQ(*sha, Sha256Hex("artifact bytes"));
  EXPECT_TRUE(store_->Has(*sha));
  EXPECT_EQ(store_->PathOf(*sha), dir_ + "/store/" + sha->substr(0, 2) + "/" + *sha);
  auto read = store_->Read(*sha);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, "artifact bytes");
}

TEST_F(ArtifactStoreTest, PutFileMovesTheFileIn) {
  std::string path = dir_ + "/batch.so";
  ASSERT_TRUE(WriteFileAtomic(path, "shared object").ok());
  auto sha = store_->PutFile(path);
  ASSERT_TRUE(sha.ok()) << sha.status().ToString();
  EXPECT_EQ(*sha, Sha256Hex("shared object"));
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(*store_->Read(*sha), "shared object");

  // The same content again: same name, and the duplicate is not left behind.
  ASSERT_TRUE(WriteFileAtomic(path, "shared object").ok());
  EXPECT_EQ(*store_->PutFile(path), *sha);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST_F(ArtifactStoreTest, CorruptFileIsAbsentAndReplacedByTheNextPut) {
  std::string sha = *store_->Put("good bytes");
  std::filesystem::permissions(store_->PathOf(sha), std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::add);
  ASSERT_TRUE(WriteFileAtomic(store_->PathOf(sha), "torn").ok());

  EXPECT_FALSE(store_->Has(sha));
  auto read = store_->Read(sha);
  EXPECT_EQ(read.status().code(), Code::kNotFound);

  ASSERT_TRUE(store_->Put("good bytes").ok());
  EXPECT_EQ(*store_->Read(sha), "good bytes");
}

TEST_F(ArtifactStoreTest, MissingArtifactIsNotFound) {
  std::string sha = Sha256Hex("never stored");
  EXPECT_FALSE(store_->Has(sha));
  auto read = store_->Read(sha);
  EXPECT_EQ(read.status().code(), Code::kNotFound);
  EXPECT_NE(read.status().message().find(sha), std::string::npos);
}

// Hashes arrive over RPC: anything but a SHA-256 must not become a path.
TEST_F(ArtifactStoreTest, NamesThatAreNotHashesAreRefused) {
  for (std::string name : std::vector<std::string>{"../../etc/passwd", "", std::string(64, 'A'),
                                                   std::string(63, 'a')}) {
    EXPECT_EQ(store_->PathOf(name), "") << name;
    EXPECT_FALSE(store_->Has(name)) << name;
    EXPECT_EQ(store_->Read(name).status().code(), Code::kInvalidArgument) << name;
  }
}

TEST_F(ArtifactStoreTest, OpenFailsWhenTheDirectoryCannotBeMade) {
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/file", "").ok());
  auto store = ArtifactStore::Open(dir_ + "/file/store");
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find(dir_ + "/file/store"), std::string::npos);
}

}  // namespace
}  // namespace tf::compiler
