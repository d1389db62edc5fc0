// QueryBest answers: exact problems, the nearest tuned problem when the exact
// one was never tuned, the newest kernel source only, device classes apart.
#include "coordinator/best_index.h"

#include <gtest/gtest.h>

#include "kernelspec/config.h"

namespace tf::coordinator {
namespace {

db::BestRow Row(const std::string& fingerprint, int64_t created, const std::string& problem,
                const std::string& device_class, const std::string& config, double median) {
  db::BestRow row;
  row.kernel = "gemm";
  row.fingerprint = fingerprint;
  row.fingerprint_created_ms = created;
  row.problem_key = kernelspec::ProblemKey(*kernelspec::ParseProblem(problem));
  row.device_class = device_class;
  row.result.config_key = config;
  row.result.timing.set_median_ns(median);
  return row;
}

v1::QueryBestResponse Query(const BestIndex& index, const std::string& problem,
                            const std::string& device_class = "") {
  v1::QueryBestRequest request;
  request.set_kernel("gemm");
  *request.mutable_problem() = *kernelspec::ParseProblem(problem);
  request.set_device_class(device_class);
  return index.Query(request);
}

TEST(BestIndexTest, ExactProblemInAnyVariableOrder) {
  BestIndex index;
  index.Put(Row("fp", 1, "M=64,N=64", "gpu/a", "BM=16", 100));
  auto answer = Query(index, "N=64,M=64");
  ASSERT_TRUE(answer.found());
  EXPECT_TRUE(answer.exact());
  EXPECT_EQ(kernelspec::ConfigKey(answer.config()), "BM=16");
}

TEST(BestIndexTest, UntunedProblemGetsTheNearestMarkedInexact) {
  BestIndex index;
  index.Put(Row("fp", 1, "M=64,N=64", "gpu/a", "BM=16", 100));
  index.Put(Row("fp", 1, "M=4096,N=4096", "gpu/a", "BM=128", 900));
  auto answer = Query(index, "M=3000,N=5000");
  ASSERT_TRUE(answer.found());
  EXPECT_FALSE(answer.exact());
  EXPECT_EQ(kernelspec::ConfigKey(answer.config()), "BM=128");
  EXPECT_EQ(kernelspec::ProblemKey(answer.problem()), "M=4096,N=4096");
}

TEST(BestIndexTest, OnlyTheNewestFingerprintAnswers) {
  BestIndex index;
  index.Put(Row("old", 1, "M=64,N=64", "gpu/a", "BM=16", 100));
  index.Put(Row("new", 2, "M=128,N=128", "gpu/a", "BM=32", 100));
  auto answer = Query(index, "M=64,N=64");
  ASSERT_TRUE(answer.found());
  EXPECT_FALSE(answer.exact());  // the old source's exact answer is stale
  EXPECT_EQ(answer.fingerprint(), "new");
}

TEST(BestIndexTest, DeviceClassesAreKeptApart) {
  BestIndex index;
  index.Put(Row("fp", 1, "M=64,N=64", "gpu/a", "BM=16", 100));
  index.Put(Row("fp", 1, "M=64,N=64", "gpu/b", "BM=64", 50));
  EXPECT_EQ(kernelspec::ConfigKey(Query(index, "M=64,N=64", "gpu/a").config()), "BM=16");
  EXPECT_EQ(kernelspec::ConfigKey(Query(index, "M=64,N=64", "gpu/b").config()), "BM=64");
  EXPECT_EQ(kernelspec::ConfigKey(Query(index, "M=64,N=64").config()), "BM=64");  // any: fastest
  EXPECT_FALSE(Query(index, "M=64,N=64", "gpu/c").found());
}

TEST(BestIndexTest, ABetterResultReplacesTheEntry) {
  BestIndex index;
  index.Put(Row("fp", 1, "M=64,N=64", "gpu/a", "BM=16", 100));
  index.Put(Row("fp", 1, "M=64,N=64", "gpu/a", "BM=32", 80));
  EXPECT_EQ(kernelspec::ConfigKey(Query(index, "M=64,N=64").config()), "BM=32");
  EXPECT_EQ(index.size(), 1u);
}

TEST(BestIndexTest, UnknownKernelIsNotFound) {
  BestIndex index;
  v1::QueryBestRequest request;
  request.set_kernel("nope");
  EXPECT_FALSE(index.Query(request).found());
}

}  // namespace
}  // namespace tf::coordinator
