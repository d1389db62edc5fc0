#include "compiler/batch_builder.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "common/files.h"
#include "compiler/source_copies.h"
#include "compiler/source_tree.h"
#include "kernelspec/config.h"

namespace tf::compiler {
namespace {

using Batch = std::vector<v1::Config>;
using OnBatch = std::function<void(std::vector<ConfigBuild>)>;

// The private build directory lives only as long as one Build call.
struct DirectoryRemover {
  std::string path;
  ~DirectoryRemover() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

std::string Trim(std::string text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t dropped = text.size() - max_bytes;
  text.resize(max_bytes);
  return text + "\n[... " + std::to_string(dropped) + " more bytes]";
}

// The line a person reads first: the first that reports an error ("error:",
// as compilers write it), else the first that is not empty.
std::string_view Headline(std::string_view diagnostics) {
  std::string_view first;
  for (size_t start = 0; start < diagnostics.size();) {
    size_t end = std::min(diagnostics.find('\n', start), diagnostics.size());
    std::string_view line = diagnostics.substr(start, end - start);
    if (line.find("error:") != std::string_view::npos) return line;
    if (first.empty() && line.find_first_not_of(" \t\r") != std::string_view::npos) first = line;
    start = end + 1;
  }
  return first;
}

// "compilation failed: <the compiler's first error>", then all it said: the
// first line is what tables show.
std::string Describe(const CompileOutcome& outcome, double timeout_s) {
  if (outcome.timed_out) {
    std::ostringstream limit;
    limit << timeout_s;
    std::string output = outcome.diagnostics.empty() ? "" : ":\n" + outcome.diagnostics;
    return "compilation timed out after " + limit.str() + " s" + output;
  }
  const std::string_view headline = Headline(outcome.diagnostics);
  if (headline.empty()) return "compilation failed, without a message from the compiler";
  return "compilation failed: " + std::string(headline) + "\n" + outcome.diagnostics;
}

// The state of one Build call: a queue of batches drained by worker threads.
// A failed batch's halves go to the front of the queue, so that each planned
// batch is resolved before later ones start.
class BuildRun {
 public:
  BuildRun(const Toolchain& toolchain, ArtifactStore& store, const BuildOptions& options,
           const v1::KernelSpec& spec, const std::vector<v1::SourceFile>& sources,
           std::string work_dir, const OnBatch& on_batch, const std::atomic<bool>* cancel)
      : toolchain_(toolchain),
        store_(store),
        options_(options),
        spec_(spec),
        sources_(sources),
        work_dir_(std::move(work_dir)),
        on_batch_(on_batch),
        cancel_(cancel),
        shared_code_(IsDefineStyle(spec) ? SharedCode::kTested : SharedCode::kUntested) {}

  void Enqueue(Batch batch) { queue_.push_back(std::move(batch)); }

  // Drains the queue on `threads` threads; the first setup error, if any.
  Status Run(int threads, BuildStats* stats) {
    std::vector<std::thread> workers;
    for (int i = 0; i < threads; ++i) workers.emplace_back([this] { Work(); });
    for (auto& worker : workers) worker.join();
    stats->compiler_runs = compiler_runs_;
    stats->failed_configs = failed_configs_;
    stats->cpu_seconds = cpu_seconds_;
    if (!shared_failure_.empty()) {
      stats->note =
          "the code every configuration shares does not compile: all failed with "
          "its compiler message, no batch was split";
    }
    if (!error_.ok()) return error_;
    if (Cancelled()) {
      return Status(Code::kCancelled,
                    "build cancelled after " + std::to_string(compiler_runs_) + " compiler runs");
    }
    return Status::Ok();
  }

 private:
  bool Cancelled() const { return cancel_ != nullptr && cancel_->load(); }
  bool Stopped() const { return Cancelled() || !error_.ok(); }  // with mu_ held

  void Work() {
    while (true) {
      Batch batch;
      int id;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return !queue_.empty() || in_flight_ == 0 || Stopped(); });
        if (queue_.empty() || Stopped()) break;
        batch = std::move(queue_.front());
        queue_.pop_front();
        ++in_flight_;
        id = next_id_++;
      }
      std::vector<Batch> halves = Process(batch, id);
      {
        std::lock_guard lock(mu_);
        --in_flight_;
        for (auto it = halves.rbegin(); it != halves.rend(); ++it) {
          queue_.push_front(std::move(*it));
        }
      }
      cv_.notify_all();
    }
    cv_.notify_all();
  }

  // Compiles one batch, unless the shared code is known to fail. Returns its
  // halves when it failed and can be split.
  std::vector<Batch> Process(const Batch& batch, int id) {
    if (std::string failure = SharedFailure(); !failure.empty()) {
      Deliver(batch, "", {}, failure);
      return {};
    }
    const std::string stem = "batch_" + std::to_string(id);
    auto outcome = Compile(batch, stem);
    if (!outcome.ok()) return Fail(outcome.status());
    if (outcome->ok) {
      auto sha256 = store_.PutFile(work_dir_ + "/" + stem + toolchain_.artifact_suffix());
      if (!sha256.ok()) return Fail(sha256.status());
      Deliver(batch, *sha256, *outcome, "");
      return {};
    }
    if (batch.size() == 1) {
      Deliver(batch, "", *outcome, Diagnostics(*outcome));
      return {};
    }
    if (std::string failure = TestSharedCode(); !failure.empty()) {
      Deliver(batch, "", *outcome, failure);
      return {};
    }
    auto middle = batch.begin() + static_cast<std::ptrdiff_t>(batch.size() / 2);
    return {Batch(batch.begin(), middle), Batch(middle, batch.end())};
  }

  // One compiler run over `batch`, into <stem><artifact suffix> when it
  // compiles. Fails on setup errors only.
  Result<CompileOutcome> Compile(const Batch& batch, const std::string& stem) {
    const std::string tu = stem + toolchain_.source_suffix();
    const std::string artifact = stem + toolchain_.artifact_suffix();
    TF_ASSIGN_OR_RETURN(std::string source, toolchain_.GenerateBatch(spec_, sources_, batch));
    TF_RETURN_IF_ERROR(WriteFileAtomic(work_dir_ + "/" + tu, source));
    auto outcome = toolchain_.Compile(work_dir_, tu, artifact, spec_, batch, options_.timeout_s);
    std::filesystem::remove(work_dir_ + "/" + tu);
    if (!outcome.ok()) return outcome.status();
    {
      std::lock_guard lock(mu_);
      ++compiler_runs_;
      cpu_seconds_ += outcome->cpu_seconds;
    }
    if (!outcome->ok) {
      std::filesystem::remove(work_dir_ + "/" + artifact);
    } else if (outcome->kernels.size() != batch.size()) {
      return Status::Internal(toolchain_.name() + " reported " +
                              std::to_string(outcome->kernels.size()) + " kernels for " +
                              std::to_string(batch.size()) + " configurations");
    }
    return outcome;
  }

  std::string Diagnostics(const CompileOutcome& outcome) const {
    return Trim(Describe(outcome, options_.timeout_s), options_.max_diagnostics_bytes);
  }

  std::string SharedFailure() {
    std::lock_guard lock(mu_);
    return shared_failure_;
  }

  // Called when a batch of several configurations failed: compiles the code
  // every batch shares, without any configuration, once per build (other
  // threads wait for the answer). When that fails too, so does every
  // configuration, whichever batch it is in: the returned diagnostics are
  // the failure of all of them, and no batch needs splitting or compiling.
  // Empty when the shared code compiles, or timed out (which tells nothing
  // of the batch's failure).
  std::string TestSharedCode() {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return shared_code_ != SharedCode::kTesting; });
      if (shared_code_ == SharedCode::kTested) return shared_failure_;
      shared_code_ = SharedCode::kTesting;
    }
    std::string failure;
    auto outcome = Compile({}, "shared");
    if (!outcome.ok()) {
      Fail(outcome.status());
    } else if (outcome->ok) {
      std::filesystem::remove(work_dir_ + "/shared" + toolchain_.artifact_suffix());
    } else if (!outcome->timed_out) {
      failure = Diagnostics(*outcome);
    }
    {
      std::lock_guard lock(mu_);
      shared_code_ = SharedCode::kTested;
      shared_failure_ = failure;
    }
    cv_.notify_all();
    return failure;
  }

  std::vector<Batch> Fail(const Status& status) {
    std::lock_guard lock(mu_);
    if (error_.ok()) error_ = status;
    return {};
  }

  // `outcome` holds the batch's kernels when `diagnostics` is empty.
  void Deliver(const Batch& batch, const std::string& sha256, const CompileOutcome& outcome,
               const std::string& diagnostics) {
    std::vector<ConfigBuild> builds;
    for (size_t i = 0; i < batch.size(); ++i) {
      ConfigBuild& build = builds.emplace_back();
      build.config = batch[i];
      build.ok = diagnostics.empty();
      build.artifact_sha256 = sha256;
      if (build.ok) {
        build.symbol = outcome.kernels[i].symbol;
        build.resources = outcome.kernels[i].resources;
        build.reference_symbol = outcome.reference_symbol;
      }
      build.diagnostics = diagnostics;
    }
    std::lock_guard lock(deliver_mu_);
    if (!diagnostics.empty()) failed_configs_ += static_cast<int64_t>(builds.size());
    on_batch_(std::move(builds));
  }

  const Toolchain& toolchain_;
  ArtifactStore& store_;
  const BuildOptions& options_;
  const v1::KernelSpec& spec_;
  const std::vector<v1::SourceFile>& sources_;
  const std::string work_dir_;
  const OnBatch& on_batch_;
  const std::atomic<bool>* cancel_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Batch> queue_;
  int in_flight_ = 0;
  int next_id_ = 0;
  Status error_;
  int64_t compiler_runs_ = 0;
  double cpu_seconds_ = 0;
  // Define-style batches share no code: every copy of the source is under
  // its configuration's macros, so there is nothing to compile without one.
  enum class SharedCode { kUntested, kTesting, kTested } shared_code_;
  std::string shared_failure_;  // when tested: non-empty if the shared code fails

  std::mutex deliver_mu_;  // serialises on_batch_
  int64_t failed_configs_ = 0;
};

}  // namespace

int ConcurrentRuns(const BuildOptions& options) {
  if (options.parallelism > 0) return options.parallelism;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

BatchBuilder::BatchBuilder(const Toolchain& toolchain, ArtifactStore& store, BuildOptions options)
    : toolchain_(toolchain), store_(store), options_(std::move(options)) {}

Result<BuildStats> BatchBuilder::Build(const v1::KernelSpec& spec,
                                       const std::vector<v1::SourceFile>& sources,
                                       const std::vector<v1::Config>& configs,
                                       const OnBatch& on_batch, const std::atomic<bool>* cancel) {
  auto start = std::chrono::steady_clock::now();
  if (options_.batch_size < 1) {
    return Status::InvalidArgument("batch_size must be at least 1, got " +
                                   std::to_string(options_.batch_size));
  }
  TF_RETURN_IF_ERROR(toolchain_.Validate(spec));
  if (std::none_of(sources.begin(), sources.end(),
                   [&](const auto& s) { return s.path() == spec.source(); })) {
    return Status::InvalidArgument("source '" + spec.source() + "' is not among the " +
                                   std::to_string(sources.size()) + " source files sent");
  }
  std::set<std::string> symbols;
  for (const auto& config : configs) {
    TF_RETURN_IF_ERROR(kernelspec::InstantiateEntry(spec.entry(), config).status());
    if (!symbols.insert(kernelspec::CandidateSymbol(config)).second) {
      return Status::InvalidArgument("configuration " + kernelspec::ConfigKey(config) +
                                     " is listed twice");
    }
  }
  TF_ASSIGN_OR_RETURN(std::string work_dir, MakeTempDir("tf-build-", options_.work_root));
  DirectoryRemover remover{work_dir};
  TF_RETURN_IF_ERROR(WriteSourceTree(work_dir, sources));

  BuildStats stats;
  stats.configs = static_cast<int64_t>(configs.size());
  const int threads =
      static_cast<int>(std::clamp<int64_t>(stats.configs, 1, ConcurrentRuns(options_)));
  // A device usually waits for this build: configurations too few to fill
  // every thread with full batches are spread over all of them, since a few
  // short compiler runs side by side finish sooner than one long one.
  const size_t per_thread = std::max<size_t>(1, (configs.size() + threads - 1) / threads);
  size_t batch_size = std::min(static_cast<size_t>(options_.batch_size), per_thread);
  if (IsDefineStyle(spec) && batch_size > 1) {
    if (std::string why = AnalyzeSources(sources).ungroupable; !why.empty()) {
      batch_size = 1;
      stats.note = "one configuration per compiler run: " + why;
    }
  }
  BuildRun run(toolchain_, store_, options_, spec, sources, work_dir, on_batch, cancel);
  for (size_t i = 0; i < configs.size(); i += batch_size) {
    size_t end = std::min(configs.size(), i + batch_size);
    run.Enqueue(Batch(configs.begin() + i, configs.begin() + end));
    ++stats.batches;
  }
  TF_RETURN_IF_ERROR(run.Run(threads, &stats));
  stats.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

}  // namespace tf::compiler
