#include "worker/runner.h"

#include <dlfcn.h>

#include <cstdio>
#include <map>

#include "spec/config.h"
#include "spec/expr.h"
#include "worker/host_buffers.h"

namespace tf::worker {
namespace {

// Used when the device reports no cache sizes.
constexpr int64_t kAssumedLastLevelCacheBytes = 32 << 20;

class Library {
 public:
  static Result<std::unique_ptr<Library>> Open(const std::string& path) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr)
      return Status::FailedPrecondition(std::string("cannot load artifact: ") + dlerror());
    return std::unique_ptr<Library>(new Library(handle));
  }
  ~Library() { dlclose(handle_); }

  Result<KernelFn> Find(const std::string& symbol) const {
    void* fn = dlsym(handle_, symbol.c_str());
    if (fn == nullptr) return Status::NotFound("symbol '" + symbol + "' is not in the artifact");
    return reinterpret_cast<KernelFn>(fn);
  }

 private:
  explicit Library(void* handle) : handle_(handle) {}
  void* handle_;
};

// One problem's buffers as the kernel sees them, and what to reset them to.
struct ProblemData {
  std::vector<HostBuffer> initial;   // per spec buffer, as filled
  std::vector<HostBuffer> work;      // passed to the kernels
  std::vector<void*> pointers;       // work[i].data()
  std::vector<int> outputs;          // indices of output buffers
  std::vector<HostBuffer> expected;  // reference outputs, parallel to `outputs`; empty: no check
  std::vector<int64_t> scalars;      // in ScalarNames(spec) order
  double flops = 0;                  // 0: no throughput
};

Result<ProblemData> Prepare(const v1::KernelSpec& spec, const v1::Problem& problem,
                            const Library& library, const std::string& reference_symbol) {
  const std::string key = spec::ProblemKey(problem);
  spec::Bindings vars;
  for (const auto& var : problem.vars()) vars[var.name()] = var.value();

  ProblemData data;
  for (const std::string& name : spec::ScalarNames(spec)) {
    auto it = vars.find(name);
    if (it == vars.end()) {
      return Status::InvalidArgument("scalar '" + name + "' is not a variable of problem " + key);
    }
    data.scalars.push_back(std::get<int64_t>(it->second));
  }
  for (const v1::Buffer& buffer : spec.buffers()) {
    auto count = spec::EvaluateInt(buffer.count(), vars);
    if (!count.ok()) {
      return Status::InvalidArgument("buffer '" + buffer.name() +
                                     "' count: " + count.status().message());
    }
    TF_ASSIGN_OR_RETURN(HostBuffer initial, HostBuffer::Allocate(buffer.dtype(), *count));
    TF_RETURN_IF_ERROR(initial.Fill(buffer, InputSeed(buffer.name(), key)));
    TF_ASSIGN_OR_RETURN(HostBuffer work, HostBuffer::Allocate(buffer.dtype(), *count));
    work.CopyFrom(initial);
    if (buffer.output()) data.outputs.push_back(static_cast<int>(data.initial.size()));
    data.initial.push_back(std::move(initial));
    data.work.push_back(std::move(work));
    data.pointers.push_back(data.work.back().data());
  }
  if (!spec.objective().flops().empty()) {
    auto flops = spec::EvaluateNumber(spec.objective().flops(), vars);
    if (!flops.ok()) return Status::InvalidArgument("objective.flops: " + flops.status().message());
    data.flops = *flops;
  }
  if (!reference_symbol.empty()) {
    TF_ASSIGN_OR_RETURN(KernelFn reference, library.Find(reference_symbol));
    reference(data.pointers.data(), data.scalars.data());
    for (int index : data.outputs) {
      TF_ASSIGN_OR_RETURN(HostBuffer expected, HostBuffer::Allocate(spec.buffers(index).dtype(),
                                                                    data.work[index].count()));
      expected.CopyFrom(data.work[index]);
      data.expected.push_back(std::move(expected));
    }
  }
  return data;
}

v1::CandidateResult Failed(int64_t candidate_id, v1::ResultStatus status, std::string error) {
  v1::CandidateResult result;
  result.set_candidate_id(candidate_id);
  result.set_status(status);
  result.set_error(std::move(error));
  return result;
}

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

// Inputs reset, outputs poisoned, one run, every output compared. Returns
// the reason of the first mismatching output, empty when all match.
std::string Verify(const v1::KernelSpec& spec, KernelFn kernel, ProblemData& data,
                   double* max_abs_error) {
  for (size_t i = 0; i < data.work.size(); ++i) data.work[i].CopyFrom(data.initial[i]);
  for (int index : data.outputs) data.work[index].Poison();
  kernel(data.pointers.data(), data.scalars.data());
  std::string error;
  for (size_t k = 0; k < data.outputs.size(); ++k) {
    const HostBuffer& out = data.work[data.outputs[k]];
    Comparison c = Compare(out, data.expected[k], spec.verify().rtol(), spec.verify().atol());
    *max_abs_error = std::max(*max_abs_error, c.max_abs_error);
    if (c.mismatches == 0 || !error.empty()) continue;
    error = "output '" + spec.buffers(data.outputs[k]).name() +
            "': " + std::to_string(c.mismatches) + " of " + std::to_string(out.count()) +
            " elements differ; first at index " + std::to_string(c.first_mismatch) + ": got " +
            Number(c.got) + ", expected " + Number(c.expected) + " (rtol " +
            Number(spec.verify().rtol()) + ", atol " + Number(spec.verify().atol()) + ")";
  }
  return error;
}

v1::CandidateResult RunCandidate(const v1::KernelSpec& spec, const v1::LeasedCandidate& candidate,
                                 const Library& library, ProblemData& data, CacheFlusher* flusher) {
  auto kernel = library.Find(candidate.symbol());
  if (!kernel.ok()) {
    return Failed(candidate.candidate_id(), v1::RESULT_STATUS_RUNTIME_FAILED,
                  kernel.status().message());
  }
  v1::CandidateResult result;
  result.set_candidate_id(candidate.candidate_id());
  if (!data.expected.empty()) {
    double max_abs_error = 0;
    std::string mismatch = Verify(spec, *kernel, data, &max_abs_error);
    result.set_max_abs_error(max_abs_error);
    if (!mismatch.empty()) {
      result.set_status(v1::RESULT_STATUS_WRONG_RESULT);
      result.set_error(mismatch);
      return result;
    }
  }
  KernelFn fn = *kernel;
  *result.mutable_timing() =
      Benchmark([&] { fn(data.pointers.data(), data.scalars.data()); }, spec.benchmark(), flusher);
  if (data.flops > 0) result.mutable_timing()->set_gflops(data.flops / result.timing().median_ns());
  result.set_status(v1::RESULT_STATUS_OK);
  return result;
}

v1::RunnerEvent Started(const v1::RunnerStep& step) {
  v1::RunnerEvent event;
  *event.mutable_started() = step;
  return event;
}

v1::RunnerEvent ResultEvent(v1::CandidateResult result) {
  v1::RunnerEvent event;
  *event.mutable_result() = std::move(result);
  return event;
}

}  // namespace

Status Runner::Run(const v1::RunnerRequest& request, const EventSink& sink) {
  const v1::Lease& lease = request.lease();
  const v1::KernelSpec& spec = lease.spec();

  // Candidates grouped by problem, so that each problem's inputs and
  // reference are made once.
  std::vector<std::string> problem_order;
  std::map<std::string, std::vector<const v1::LeasedCandidate*>> by_problem;
  for (const auto& candidate : lease.candidates()) {
    auto& group = by_problem[spec::ProblemKey(candidate.problem())];
    if (group.empty()) problem_order.push_back(spec::ProblemKey(candidate.problem()));
    group.push_back(&candidate);
  }

  auto library = Library::Open(request.artifact_path());
  if (spec.benchmark().flush_l2() && flusher_ == nullptr) {
    const auto& props = request.device().properties();
    int64_t llc = kAssumedLastLevelCacheBytes;
    if (props.contains("l3_bytes") && props.at("l3_bytes") > 0) {
      llc = props.at("l3_bytes");
    } else if (props.contains("l2_bytes") && props.at("l2_bytes") > 0) {
      llc = props.at("l2_bytes");
    }
    flusher_ = std::make_unique<CacheFlusher>(llc);
  }
  CacheFlusher* flusher = spec.benchmark().flush_l2() ? flusher_.get() : nullptr;

  for (const std::string& key : problem_order) {
    const auto& group = by_problem[key];
    v1::RunnerStep prepare;
    prepare.set_problem_key(key);
    TF_RETURN_IF_ERROR(sink(Started(prepare)));
    Result<ProblemData> data =
        library.ok() ? Prepare(spec, group.front()->problem(), **library, lease.reference_symbol())
                     : Result<ProblemData>(library.status());
    for (const v1::LeasedCandidate* candidate : group) {
      v1::RunnerStep step;
      step.set_candidate_id(candidate->candidate_id());
      TF_RETURN_IF_ERROR(sink(Started(step)));
      TF_RETURN_IF_ERROR(sink(ResultEvent(
          data.ok() ? RunCandidate(spec, *candidate, **library, *data, flusher)
                    : Failed(candidate->candidate_id(), v1::RESULT_STATUS_RUNTIME_FAILED,
                             "problem " + key + ": " + data.status().message()))));
    }
  }
  v1::RunnerEvent done;
  done.set_lease_done(true);
  return sink(done);
}

}  // namespace tf::worker
