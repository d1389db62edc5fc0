// QueryBest answers: exact problems, the nearest tuned problem when the exact
// one was never tuned, the newest kernel source with a completed tuning only,
// device classes apart.
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

void Complete(BestIndex& index, const std::string& fingerprint, int64_t created,
              const std::string& device_class, int64_t completed_ms = 0) {
  index.Complete({"gemm", fingerprint, created, device_class, completed_ms});
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
  Complete(index, "fp", 1, "gpu/a");
  auto answer = Query(index, "N=64,M=64");
  ASSERT_TRUE(answer.found());
  EXPECT_TRUE(answer.exact());
  EXPECT_EQ(kernelspec::ConfigKey(answer.config()), "BM=16");
}

TEST(BestIndexTest, UntunedProblemGetsTheNearestMarkedInexact) {
  BestIndex index;
  index.Put(Row("fp", 1, "M=64,N=64", "gpu/a", "BM=16", 100));
  index.Put(Row("fp", 1, "M=4096,N=4096", "gpu/a", "BM=128", 900));
  Complete(index, "fp", 1, "gpu/a");
  auto answer = Query(index, "M=3000,N=5000");
  ASSERT_TRUE(answer.found());
  EXPECT_FALSE(answer.exact());
  EXPECT_EQ(kernelspec::ConfigKey(answer.config()), "BM=128");
  EXPECT_EQ(kernelspec::ProblemKey(answer.problem()), "M=4096,N=4096");
}

// Two tuned problems as near in exact arithmetic (1000 * 362 / 256^2 either
// way) are a tie, the fastest answering, whatever order the query lists its
// variables in: floating-point sums in one order made the first nearer.
TEST(BestIndexTest, EquallyNearProblemsAreATieInAnyVariableOrder) {
  BestIndex index;
  index.Put(Row("fp", 1, "M=256,N=256,K=256", "gpu/a", "BM=16", 200));
  index.Put(Row("fp", 1, "M=512,N=128,K=256", "gpu/a", "BM=32", 100));
  Complete(index, "fp", 1, "gpu/a");
  for (const char* problem : {"M=1000,N=362,K=181", "K=181,M=1000,N=362", "N=362,K=181,M=1000"}) {
    EXPECT_EQ(kernelspec::ConfigKey(Query(index, problem).config()), "BM=32") << problem;
  }
}

// Values under 1 (an offset, a shift) are apart by their difference: they
// were all taken as 1, so -1000 answered with whichever of -4 and 0 was faster.
TEST(BestIndexTest, ValuesUnderOneAreNotAlike) {
  BestIndex index;
  index.Put(Row("fp", 1, "M=64,SHIFT=-4", "gpu/a", "BM=16", 100));
  index.Put(Row("fp", 1, "M=64,SHIFT=-900", "gpu/a", "BM=32", 900));
  index.Put(Row("fp", 1, "M=64,SHIFT=0", "gpu/a", "BM=64", 50));
  Complete(index, "fp", 1, "gpu/a");
  EXPECT_EQ(kernelspec::ConfigKey(Query(index, "M=64,SHIFT=-1000").config()), "BM=32");
  EXPECT_EQ(kernelspec::ConfigKey(Query(index, "M=64,SHIFT=-5").config()), "BM=16");
  EXPECT_EQ(kernelspec::ConfigKey(Query(index, "M=64,SHIFT=2").config()), "BM=64");
}

TEST(BestIndexTest, OnlyTheNewestFingerprintAnswers) {
  BestIndex index;
  index.Put(Row("old", 1, "M=64,N=64", "gpu/a", "BM=16", 100));
  index.Put(Row("new", 2, "M=128,N=128", "gpu/a", "BM=32", 100));
  Complete(index, "old", 1, "gpu/a");
  Complete(index, "new", 2, "gpu/a");
  auto answer = Query(index, "M=64,N=64");
  ASSERT_TRUE(answer.found());
  EXPECT_FALSE(answer.exact());  // the old source's exact answer is stale
  EXPECT_EQ(answer.fingerprint(), "new");
}

TEST(BestIndexTest, ANewerFingerprintAnswersOnlyOnceItsTuningCompletes) {
  BestIndex index;
  Complete(index, "old", 1, "gpu/a");  // as a restart loads it: completion first
  index.Put(Row("old", 1, "M=256,N=256", "gpu/a", "BM=16", 632));
  index.Put(Row("old", 1, "M=512,N=128", "gpu/a", "BM=32", 700));
  // A job of a newer source, cancelled or still running.
  index.Put(Row("new", 2, "M=256,N=256", "gpu/a", "BM=64", 7200));
  for (const auto& [problem, config] :
       {std::pair{"M=256,N=256", "BM=16"}, {"M=512,N=128", "BM=32"}}) {
    auto answer = Query(index, problem, "gpu/a");
    ASSERT_TRUE(answer.found());
    EXPECT_TRUE(answer.exact());
    EXPECT_EQ(answer.fingerprint(), "old");
    EXPECT_EQ(kernelspec::ConfigKey(answer.config()), config);
  }
  EXPECT_EQ(Query(index, "M=256,N=256").fingerprint(), "old");  // any class
  auto listed = index.List("gemm", "");
  ASSERT_EQ(listed.size(), 2u);
  for (const auto& entry : listed) EXPECT_EQ(entry.fingerprint(), "old");

  Complete(index, "new", 2, "gpu/a");  // it succeeded
  EXPECT_EQ(kernelspec::ConfigKey(Query(index, "M=256,N=256", "gpu/a").config()), "BM=64");
  auto untuned = Query(index, "M=512,N=128", "gpu/a");
  EXPECT_FALSE(untuned.exact());  // the new source never tuned it
  EXPECT_EQ(untuned.fingerprint(), "new");
  listed = index.List("gemm", "gpu/a");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].fingerprint(), "new");
}

TEST(BestIndexTest, CompletionIsPerDeviceClass) {
  BestIndex index;
  for (const char* device_class : {"gpu/a", "gpu/b"}) {
    index.Put(Row("old", 1, "M=64,N=64", device_class, "BM=16", 100));
    Complete(index, "old", 1, device_class);
    index.Put(Row("new", 2, "M=64,N=64", device_class, "BM=32", 90));
  }
  Complete(index, "new", 2, "gpu/a");
  EXPECT_EQ(Query(index, "M=64,N=64", "gpu/a").fingerprint(), "new");
  EXPECT_EQ(Query(index, "M=64,N=64", "gpu/b").fingerprint(), "old");
  // Any class: each class's own answer, the fastest of the exact ones.
  auto any = Query(index, "M=64,N=64");
  EXPECT_EQ(any.fingerprint(), "new");
  EXPECT_EQ(any.device_class(), "gpu/a");
}

// A source tuned on one class only (results imported for another device, a
// new version tried on one GPU) does not take the other classes' answers away
// from a query for any class: an exact answer on the older source's class
// beats the newer one's nearest, as an exported file answers.
TEST(BestIndexTest, AnyClassAnswersFromEveryClassesOwnSource) {
  BestIndex index;
  index.Put(Row("tuned", 1, "M=64,N=64", "gpu/a", "BM=16", 100));
  index.Put(Row("tuned", 1, "M=1024,N=1024", "gpu/a", "BM=64", 900));
  Complete(index, "tuned", 1, "gpu/a");
  index.Put(Row("imported", 2, "M=384,N=384", "gpu/b", "BM=32", 300));
  Complete(index, "imported", 2, "gpu/b");
  auto exact = Query(index, "M=64,N=64");
  EXPECT_TRUE(exact.exact());
  EXPECT_EQ(exact.device_class(), "gpu/a");
  EXPECT_EQ(kernelspec::ConfigKey(exact.config()), "BM=16");
  auto nearest = Query(index, "M=400,N=400");
  EXPECT_FALSE(nearest.exact());
  EXPECT_EQ(nearest.device_class(), "gpu/b");
  EXPECT_EQ(index.List("gemm", "").size(), 3u);
}

TEST(BestIndexTest, ACompletedFingerprintsLaterResultsAnswer) {
  BestIndex index;
  index.Put(Row("fp", 1, "M=64,N=64", "gpu/a", "BM=16", 100));
  Complete(index, "fp", 1, "gpu/a");
  // A later job of the same source measures another problem.
  index.Put(Row("fp", 1, "M=128,N=128", "gpu/a", "BM=32", 200));
  EXPECT_TRUE(Query(index, "M=128,N=128", "gpu/a").exact());
}

TEST(BestIndexTest, ACompletedFingerprintWithoutResultsDoesNotAnswer) {
  BestIndex index;
  index.Put(Row("old", 1, "M=64,N=64", "gpu/a", "BM=16", 100));
  Complete(index, "old", 1, "gpu/a");
  Complete(index, "new", 2, "gpu/a");  // a job that succeeded elsewhere only
  EXPECT_EQ(Query(index, "M=64,N=64", "gpu/a").fingerprint(), "old");
}

TEST(BestIndexTest, DeviceClassesAreKeptApart) {
  BestIndex index;
  index.Put(Row("fp", 1, "M=64,N=64", "gpu/a", "BM=16", 100));
  index.Put(Row("fp", 1, "M=64,N=64", "gpu/b", "BM=64", 50));
  Complete(index, "fp", 1, "gpu/a");
  Complete(index, "fp", 1, "gpu/b");
  EXPECT_EQ(kernelspec::ConfigKey(Query(index, "M=64,N=64", "gpu/a").config()), "BM=16");
  EXPECT_EQ(kernelspec::ConfigKey(Query(index, "M=64,N=64", "gpu/b").config()), "BM=64");
  EXPECT_EQ(kernelspec::ConfigKey(Query(index, "M=64,N=64").config()), "BM=64");  // any: fastest
  EXPECT_FALSE(Query(index, "M=64,N=64", "gpu/c").found());
}

TEST(BestIndexTest, ABetterResultReplacesTheEntry) {
  BestIndex index;
  index.Put(Row("fp", 1, "M=64,N=64", "gpu/a", "BM=16", 100));
  index.Put(Row("fp", 1, "M=64,N=64", "gpu/a", "BM=32", 80));
  Complete(index, "fp", 1, "gpu/a");
  EXPECT_EQ(kernelspec::ConfigKey(Query(index, "M=64,N=64").config()), "BM=32");
  EXPECT_EQ(index.size(), 1u);
}

// A misspelt variable or device class finds nothing; the answer says what
// the kernel is tuned for, from the entries that answer (not the unfinished
// tuning of a newer source with other variables), as the CLI printed it.
TEST(BestIndexTest, WhatFindsNothingSaysWhatTheKernelIsTunedFor) {
  BestIndex index;
  index.Put(Row("fp", 1, "M=64,N=64", "gpu/a", "BM=16", 100));
  index.Put(Row("fp", 1, "M=64,N=64", "gpu/b", "BM=16", 100));
  index.Put(Row("unfinished", 2, "M=64,N=64,K=64", "gpu/c", "BM=16", 100));
  Complete(index, "fp", 1, "gpu/a");
  Complete(index, "fp", 1, "gpu/b");
  v1::QueryBestResponse answer = Query(index, "M=64,n=64");
  EXPECT_FALSE(answer.found());
  EXPECT_EQ(answer.not_found(),
            "no tuned configuration of kernel 'gemm' for M=64,n=64 on any device class; its tuned "
            "problems have the variables M,N");
  EXPECT_EQ(answer.not_found_reason(), v1::NOT_FOUND_REASON_OTHER_VARIABLES);
  EXPECT_EQ(Query(index, "N=64,M=64", "gpu/c").not_found(),
            "no tuned configuration of kernel 'gemm' for N=64,M=64 on device class 'gpu/c'; it is "
            "tuned on gpu/a, gpu/b");
  EXPECT_EQ(Query(index, "N=64,M=64", "gpu/c").not_found_reason(),
            v1::NOT_FOUND_REASON_OTHER_DEVICE_CLASS);
  EXPECT_EQ(Query(index, "N=64,M=64", "gpu/a").not_found(), "");  // found
  EXPECT_EQ(Query(index, "N=64,M=64", "gpu/a").not_found_reason(),
            v1::NOT_FOUND_REASON_UNSPECIFIED);
}

TEST(BestIndexTest, UnknownKernelIsNotFound) {
  BestIndex index;
  v1::QueryBestRequest request;
  request.set_kernel("nope");
  *request.mutable_problem() = *kernelspec::ParseProblem("M=1");
  EXPECT_FALSE(index.Query(request).found());
  EXPECT_EQ(index.Query(request).not_found(),
            "no tuned configuration of kernel 'nope' for M=1 on any device class");
  EXPECT_EQ(index.Query(request).not_found_reason(), v1::NOT_FOUND_REASON_NOT_TUNED);
}

// A misspelt kernel name is the usual cause of a kernel that is not tuned:
// the kernels whose names are near it are named.
TEST(BestIndexTest, AnUnknownKernelNamesTunedKernelsOfASimilarName) {
  BestIndex index;
  index.Put(Row("fp", 1, "M=64", "gpu/a", "BM=16", 100));  // kernel gemm
  Complete(index, "fp", 1, "gpu/a");
  v1::QueryBestRequest request;
  *request.mutable_problem() = *kernelspec::ParseProblem("M=64");
  const std::string unknown = "no tuned configuration of kernel '";
  for (const char* near : {"gemn", "gemm_f32", "Gemm"}) {
    request.set_kernel(near);
    EXPECT_EQ(
        index.Query(request).not_found(),
        unknown + near + "' for M=64 on any device class; tuned kernels of a similar name: gemm");
    EXPECT_EQ(index.Query(request).not_found_reason(), v1::NOT_FOUND_REASON_NOT_TUNED);
  }
  request.set_kernel("transpose");
  EXPECT_EQ(index.Query(request).not_found(), unknown + "transpose' for M=64 on any device class");
}

// What `tunefleet kernels` lists: the kernels with entries that answer, by
// name, counted as List lists them, with the newest completion on the
// classes listed; entries that do not answer (yet) count for nothing.
TEST(BestIndexTest, KernelsAreListedByNameAsListListsThem) {
  BestIndex index;
  index.Put(Row("fp", 1, "M=64", "gpu/a", "BM=16", 100));
  index.Put(Row("fp", 1, "M=64", "gpu/a", "BM=32", 90));  // the same entry, faster
  index.Put(Row("fp", 1, "M=128", "gpu/a", "BM=16", 300));
  index.Put(Row("fp", 1, "M=64", "gpu/b", "BM=16", 100));
  Complete(index, "fp", 1, "gpu/a", 1000);
  Complete(index, "fp", 1, "gpu/b", 2000);
  index.Put(Row("fp2", 2, "M=256", "gpu/a", "BM=16", 100));  // a newer source, still tuning
  db::BestRow aaa = Row("fp3", 3, "N=8", "gpu/c", "T=1", 10);
  aaa.kernel = "aaa";
  index.Put(aaa);
  index.Complete({"aaa", "fp3", 3, "gpu/c", 500});
  db::BestRow unfinished = Row("fp4", 4, "N=8", "gpu/a", "T=1", 10);
  unfinished.kernel = "unfinished";
  index.Put(unfinished);

  auto kernels = index.Kernels("");
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].name(), "aaa");
  EXPECT_EQ(kernels[0].tuned(), 1);
  EXPECT_EQ(kernels[0].last_tuned_unix_ms(), 500);
  EXPECT_EQ(kernels[1].name(), "gemm");
  EXPECT_EQ(kernels[1].tuned(), static_cast<int64_t>(index.List("gemm", "").size()));
  EXPECT_EQ(kernels[1].tuned(), 3);
  EXPECT_EQ(std::vector<std::string>(kernels[1].device_classes().begin(),
                                     kernels[1].device_classes().end()),
            (std::vector<std::string>{"gpu/a", "gpu/b"}));
  EXPECT_EQ(kernels[1].last_tuned_unix_ms(), 2000);
  EXPECT_TRUE(kernels[1].owner().empty());

  // Of one class: what is tuned there, last tuned there. Another job of a
  // completed source tunes the kernel again.
  kernels = index.Kernels("gpu/a");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].tuned(), 2);
  EXPECT_EQ(kernels[0].last_tuned_unix_ms(), 1000);
  Complete(index, "fp", 1, "gpu/a", 3000);
  EXPECT_EQ(index.Kernels("gpu/a")[0].last_tuned_unix_ms(), 3000);
  EXPECT_TRUE(index.Kernels("gpu/z").empty());

  // Once the newer source completes, it answers alone on its class.
  Complete(index, "fp2", 2, "gpu/a", 4000);
  kernels = index.Kernels("gpu/a");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].tuned(), 1);
  EXPECT_EQ(kernels[0].last_tuned_unix_ms(), 4000);
}

}  // namespace
}  // namespace tf::coordinator
