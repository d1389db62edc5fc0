// Enumerates a GEMM-like space of 1.2 million cartesian configurations under
// six constraints and prints how fast the search space walks it.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>

#include "kernelspec/config.h"
#include "kernelspec/space.h"

namespace {

namespace v1 = ::tunefleet::v1;
using tf::kernelspec::SearchSpace;

v1::KernelSpec MakeSpec() {
  v1::KernelSpec spec;
  auto add_range = [&](const char* name, int64_t start, int64_t stop, int64_t step) {
    v1::Param* param = spec.add_params();
    param->set_name(name);
    param->mutable_range()->set_start(start);
    param->mutable_range()->set_stop(stop);
    param->mutable_range()->set_step(step);
  };
  auto add_list = [&](const char* name, std::initializer_list<int64_t> values) {
    v1::Param* param = spec.add_params();
    param->set_name(name);
    for (int64_t v : values) *param->add_values() = tf::kernelspec::IntValue(v);
  };
  add_range("BM", 16, 256, 16);
  add_range("BN", 16, 256, 16);
  add_list("BK", {8, 16, 32, 64, 128});
  add_range("STAGES", 1, 6, 1);
  add_list("WARPS", {1, 2, 4, 8, 16});
  add_list("SPLIT_K", {1, 2, 4, 8});
  add_list("VEC", {1, 2, 4, 8});
  v1::Param* dtype = spec.add_params();
  dtype->set_name("DT");
  *dtype->add_values() = tf::kernelspec::StrValue("f16");
  *dtype->add_values() = tf::kernelspec::StrValue("bf16");
  for (const char* constraint : {
           "(BM*BK + BK*BN) * 2 * STAGES <= device.max_shared_mem_per_block",
           "BM * BN / (32 * WARPS) <= 256",
           "K % (BK * SPLIT_K) == 0",
           "BK % VEC == 0 && BN % VEC == 0",
           "STAGES >= 2 || SPLIT_K == 1",
           "DT == \"f16\" || VEC <= 4",
       }) {
    spec.add_constraints(constraint);
  }
  spec.mutable_search()->set_strategy("random");
  spec.mutable_search()->set_max_candidates(1000);
  spec.mutable_search()->set_seed(1);
  return spec;
}

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Times search-space enumeration over 8 parameters and 6 constraints."};
  int64_t max_smem = 232448;
  std::string problem_text = "M=4096,N=4096,K=4096";
  app.add_option("--max-smem", max_smem, "device.max_shared_mem_per_block in bytes");
  app.add_option("--problem", problem_text, "problem variables");
  CLI11_PARSE(app, argc, argv);

  auto problem = tf::kernelspec::ParseProblem(problem_text);
  if (!problem.ok()) {
    std::fprintf(stderr, "%s\n", problem.status().ToString().c_str());
    return 2;
  }
  v1::KernelSpec spec = MakeSpec();
  auto created = SearchSpace::Create(spec, *problem, {{"max_shared_mem_per_block", max_smem}});
  if (!created.ok()) {
    std::fprintf(stderr, "%s\n", created.status().ToString().c_str());
    return 1;
  }
  const SearchSpace& space = *created;
  std::printf("cartesian configurations: %llu\n",
              static_cast<unsigned long long>(space.CartesianSize()));

  auto start = std::chrono::steady_clock::now();
  uint64_t counted = space.CountValid();
  std::printf("CountValid: %llu valid in %.1f ms\n", static_cast<unsigned long long>(counted),
              MillisecondsSince(start));

  start = std::chrono::steady_clock::now();
  uint64_t visited = 0;
  space.EnumerateIndices([&](const uint32_t*) {
    ++visited;
    return true;
  });
  double ms = MillisecondsSince(start);
  std::printf("EnumerateIndices: %llu valid in %.1f ms (%.1f M cartesian configurations/s)\n",
              static_cast<unsigned long long>(visited), ms, space.CartesianSize() / ms / 1e3);

  start = std::chrono::steady_clock::now();
  uint64_t configs = 0;
  space.Enumerate([&](const v1::Config&) {
    ++configs;
    return true;
  });
  ms = MillisecondsSince(start);
  std::printf("Enumerate (Config protos): %llu valid in %.1f ms (%.1f M valid configurations/s)\n",
              static_cast<unsigned long long>(configs), ms, configs / ms / 1e3);

  start = std::chrono::steady_clock::now();
  auto sample = space.Select(spec.search(), 1'000'000);
  std::printf("Select random %lld: %zu configurations in %.1f ms\n",
              static_cast<long long>(spec.search().max_candidates()),
              sample.ok() ? sample->size() : 0, MillisecondsSince(start));
  return visited == counted && configs == counted ? 0 : 1;
}
