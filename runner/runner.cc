#include "runner/runner.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>

#include "common/files.h"
#include "common/number_text.h"
#include "kernelspec/config.h"
#include "kernelspec/expr.h"
#include "kernelspec/validate.h"
#include "runner/alternation.h"
#include "runner/host_buffers.h"
#include "runner/lease_artifacts.h"
#include "vendors/device_kinds.h"

namespace tf::runner {
namespace {

// The early-stop estimate's warm-up (kEarlyStopRuns runs follow it).
constexpr double kEarlyStopWarmupMs = 1;

// What a problem's preparation depends on besides the problem itself.
// Artifacts of one job share its reference, while another job's may have
// been built by another toolchain: the job id is part of it. The spec guards
// against a job id that a new coordinator database hands out again.
std::string JobKey(const v1::Lease& lease) {
  std::string spec;
  {
    google::protobuf::io::StringOutputStream stream(&spec);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    lease.spec().SerializeToCodedStream(&coded);
  }
  return "job " + std::to_string(lease.job_id()) + " spec " + Sha256Hex(spec) + " reference " +
         lease.reference_symbol() + " problem ";
}

// Launch geometry from expressions over `vars`; missing dimensions are 1.
void SetConstants(const v1::KernelSpec& spec, Launchable* kernel) {
  for (int index = 0; index < spec.buffers_size(); ++index) {
    if (spec.buffers(index).memory() == "constant") {
      kernel->constants.emplace_back(index, spec.buffers(index).name());
    }
  }
}

Status SetGeometry(const google::protobuf::RepeatedPtrField<std::string>& grid,
                   const google::protobuf::RepeatedPtrField<std::string>& block,
                   const std::string& shared_mem_bytes, const std::string& field,
                   const kernelspec::Bindings& vars, Launchable* kernel) {
  auto evaluate = [&](const std::string& name, const std::string& text) -> Result<int64_t> {
    auto value = kernelspec::EvaluateInt(text, vars);
    if (!value.ok()) return Status::InvalidArgument(name + ": " + value.status().message());
    return *value;
  };
  for (const auto& [exprs, dims, name] : {std::tuple(&grid, &kernel->grid, field + ".grid"),
                                          std::tuple(&block, &kernel->block, field + ".block")}) {
    if (exprs->size() > 3) return Status::InvalidArgument(name + " has more than 3 dimensions");
    for (int d = 0; d < exprs->size(); ++d) {
      TF_ASSIGN_OR_RETURN(
          (*dims)[d],
          evaluate(name + "[" + std::to_string(d) + "] '" + exprs->Get(d) + "'", exprs->Get(d)));
    }
  }
  if (!shared_mem_bytes.empty()) {
    TF_ASSIGN_OR_RETURN(kernel->shared_mem_bytes,
                        evaluate(field + ".shared_mem_bytes", shared_mem_bytes));
  }
  return Status::Ok();
}

// Each expression of `exprs`, named `field`[d] in errors, as a value in
// [1, UINT32_MAX].
Result<std::vector<uint32_t>> EvaluateExtents(
    const google::protobuf::RepeatedPtrField<std::string>& exprs, const std::string& field,
    const kernelspec::Bindings& vars) {
  std::vector<uint32_t> values;
  for (int d = 0; d < exprs.size(); ++d) {
    const std::string name = field + "[" + std::to_string(d) + "] '" + exprs.Get(d) + "'";
    auto value = kernelspec::EvaluateInt(exprs.Get(d), vars);
    if (!value.ok()) return Status::InvalidArgument(name + ": " + value.status().message());
    if (*value < 1 || *value > UINT32_MAX) {
      return Status::InvalidArgument(name + " is " + std::to_string(*value) + ", out of range");
    }
    values.push_back(static_cast<uint32_t>(*value));
  }
  return values;
}

// The spec's tensor maps with this candidate's values.
Status SetTensorMaps(const v1::KernelSpec& spec, const kernelspec::Bindings& vars,
                     Launchable* kernel) {
  for (int k = 0; k < spec.tensor_maps_size(); ++k) {
    const v1::TensorMap& map = spec.tensor_maps(k);
    const std::string field = "tensor_maps[" + std::to_string(k) + "]";
    TensorMapLayout layout;
    layout.buffer = -1;
    for (int b = 0; b < spec.buffers_size(); ++b) {
      if (spec.buffers(b).name() == map.buffer()) layout.buffer = b;
    }
    if (layout.buffer < 0) {
      return Status::InvalidArgument(field + ": '" + map.buffer() + "' is not a buffer");
    }
    layout.dtype = spec.buffers(layout.buffer).dtype();
    layout.element_bytes = static_cast<int>(kernelspec::DtypeSize(layout.dtype));
    layout.swizzle_bytes = map.swizzle_bytes();
    TF_ASSIGN_OR_RETURN(std::vector<uint32_t> dims,
                        EvaluateExtents(map.dims(), field + ".dims", vars));
    layout.dims.assign(dims.begin(), dims.end());
    TF_ASSIGN_OR_RETURN(layout.box, EvaluateExtents(map.box(), field + ".box", vars));
    kernel->tensor_maps.push_back(std::move(layout));
  }
  return Status::Ok();
}

Result<PreparedProblem> Prepare(const v1::KernelSpec& spec, const v1::Problem& problem,
                                Backend& backend, const std::string& reference_symbol) {
  const std::string key = kernelspec::ProblemKey(problem);
  PreparedProblem data;
  std::vector<HostBuffer> initial;
  kernelspec::BindProblem(problem, &data.vars);
  for (const std::string& name : kernelspec::ScalarNames(spec)) {
    auto it = data.vars.find(name);
    if (it == data.vars.end()) {
      return Status::InvalidArgument("scalar '" + name + "' is not a variable of problem " + key);
    }
    data.scalars.push_back(std::get<int64_t>(it->second));
  }
  for (const v1::Buffer& buffer : spec.buffers()) {
    auto count = kernelspec::EvaluateInt(buffer.count(), data.vars);
    if (!count.ok()) {
      return Status::InvalidArgument("buffer '" + buffer.name() +
                                     "' count: " + count.status().message());
    }
    TF_ASSIGN_OR_RETURN(HostBuffer filled, HostBuffer::Allocate(buffer.dtype(), *count));
    TF_RETURN_IF_ERROR(filled.Fill(buffer, InputSeed(buffer.name(), key)));
    if (buffer.output()) data.outputs.push_back(static_cast<int>(initial.size()));
    initial.push_back(std::move(filled));
  }
  if (!spec.objective().flops().empty()) {
    auto flops = kernelspec::EvaluateNumber(spec.objective().flops(), data.vars);
    if (!flops.ok()) return Status::InvalidArgument("objective.flops: " + flops.status().message());
    data.flops = *flops;
  }
  TF_ASSIGN_OR_RETURN(data.buffers, backend.Upload(std::move(initial)));
  if (!reference_symbol.empty()) {
    TF_ASSIGN_OR_RETURN(Launchable reference, backend.Find(0, reference_symbol));
    SetConstants(spec, &reference);
    TF_RETURN_IF_ERROR(SetGeometry(spec.verify().grid(), spec.verify().block(), "", "verify",
                                   data.vars, &reference));
    TF_RETURN_IF_ERROR(backend.Reset(*data.buffers, {}));
    TF_RETURN_IF_ERROR(backend.Run(reference, *data.buffers, data.scalars));
    TF_RETURN_IF_ERROR(backend.KeepReference(*data.buffers, data.outputs));
    data.has_reference = true;
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

// Inputs reset, outputs poisoned, one run, every output compared. Returns
// the reason of the first mismatching output, empty when all match.
Result<std::string> Verify(const v1::KernelSpec& spec, Backend& backend, const Launchable& kernel,
                           PreparedProblem& data, double* max_abs_error) {
  TF_RETURN_IF_ERROR(backend.Reset(*data.buffers, data.outputs));
  TF_RETURN_IF_ERROR(backend.Run(kernel, *data.buffers, data.scalars));
  std::string error;
  for (int index : data.outputs) {
    TF_ASSIGN_OR_RETURN(Comparison c, backend.Compare(*data.buffers, index, spec.verify().rtol(),
                                                      spec.verify().atol()));
    *max_abs_error = std::max(*max_abs_error, c.max_abs_error);
    if (c.mismatches == 0 || !error.empty()) continue;
    error = "output '" + spec.buffers(index).name() + "': " + std::to_string(c.mismatches) +
            " of " + std::to_string(c.count) + " elements differ; first at index " +
            std::to_string(c.first_mismatch) + ": got " + NumberText(c.got) + ", expected " +
            NumberText(c.expected) + " (rtol " + NumberText(spec.verify().rtol()) + ", atol " +
            NumberText(spec.verify().atol()) + ")";
  }
  return error;
}

// The time over which a short estimate stops the candidate (0: none): the
// lower of the coordinator's threshold and search.early_stop times this
// device's best on the problem so far.
double EarlyStopThreshold(const v1::KernelSpec& spec, const v1::LeasedCandidate& candidate,
                          const PreparedProblem& data) {
  double threshold = candidate.early_stop_ns();
  const double factor = spec.search().early_stop();
  if (factor > 0 && data.best_ns) {
    const double local = factor * *data.best_ns;
    threshold = threshold > 0 ? std::min(threshold, local) : local;
  }
  return threshold;
}

// The timing's GFLOP/s, where the spec gives the problem's flops.
void SetGflops(const PreparedProblem& data, v1::TimingStats& timing) {
  if (data.flops > 0) timing.set_gflops(data.flops / timing.median_ns());
}

// `result` stopped early on `estimate`, which is over `threshold_ns`.
v1::CandidateResult EarlyStopped(v1::CandidateResult result, v1::TimingStats estimate,
                                 double threshold_ns, const PreparedProblem& data) {
  SetGflops(data, estimate);
  result.set_error("estimate of " + std::to_string(kEarlyStopRuns) + " runs " +
                   NumberText(estimate.median_ns()) + " ns is over the early-stop threshold " +
                   NumberText(threshold_ns) + " ns");
  *result.mutable_timing() = std::move(estimate);
  result.set_status(v1::RESULT_STATUS_EARLY_STOPPED);
  return result;
}

// The problem's best so far, from which the spec's early-stop factor sets the threshold.
void NoteBest(const v1::TimingStats& timing, PreparedProblem& data) {
  data.best_ns = std::min(data.best_ns.value_or(timing.median_ns()), timing.median_ns());
}

// `kernel`, as Find gave it, with the candidate's constants, launch geometry
// and tensor maps.
Result<Launchable> Configure(const v1::KernelSpec& spec, const v1::LeasedCandidate& candidate,
                             const v1::DeviceInfo& device, const PreparedProblem& data,
                             Launchable kernel) {
  SetConstants(spec, &kernel);
  kernelspec::Bindings vars = data.vars;
  for (const auto& [name, value] : device.properties()) vars["device." + name] = value;
  kernelspec::BindConfig(candidate.config(), &vars);
  TF_RETURN_IF_ERROR(SetGeometry(spec.launch().grid(), spec.launch().block(),
                                 spec.launch().shared_mem_bytes(), "launch", vars, &kernel));
  TF_RETURN_IF_ERROR(SetTensorMaps(spec, vars, &kernel));
  return kernel;
}

// Errors of the candidate itself (missing symbol, launch or device fault)
// are returned; the caller makes them RUNTIME_FAILED.
Result<v1::CandidateResult> RunCandidate(const v1::KernelSpec& spec, const v1::Lease& lease,
                                         const v1::LeasedCandidate& candidate,
                                         const v1::DeviceInfo& device, Backend& backend,
                                         PreparedProblem& data) {
  TF_ASSIGN_OR_RETURN(Launchable found,
                      backend.Find(ArtifactIndex(lease, candidate), candidate.symbol()));
  const double threshold_ns = EarlyStopThreshold(spec, candidate, data);
  v1::CandidateResult result;
  result.set_candidate_id(candidate.candidate_id());
  if (std::optional<v1::CandidateResult> answer = backend.Answer(found, threshold_ns)) {
    answer->set_candidate_id(candidate.candidate_id());
    if (answer->status() != v1::RESULT_STATUS_OK) return *answer;
    // A recorded time stands for the estimate a device would have made.
    if (threshold_ns > 0 && answer->timing().median_ns() > threshold_ns) {
      v1::TimingStats estimate = answer->timing();
      estimate.set_repeats(std::min(estimate.repeats(), kEarlyStopRuns));
      return EarlyStopped(std::move(result), std::move(estimate), threshold_ns, data);
    }
    SetGflops(data, *answer->mutable_timing());
    NoteBest(answer->timing(), data);
    return *answer;
  }
  TF_ASSIGN_OR_RETURN(Launchable kernel, Configure(spec, candidate, device, data, found));
  if (data.has_reference) {
    double max_abs_error = 0;
    TF_ASSIGN_OR_RETURN(std::string mismatch, Verify(spec, backend, kernel, data, &max_abs_error));
    result.set_max_abs_error(max_abs_error);
    if (!mismatch.empty()) {
      result.set_status(v1::RESULT_STATUS_WRONG_RESULT);
      result.set_error(mismatch);
      return result;
    }
  }
  v1::BenchmarkSettings full = spec.benchmark();
  if (threshold_ns > 0) {
    // A short estimate first: a clear loser is not worth the full timing.
    const auto estimate_start = std::chrono::steady_clock::now();
    v1::BenchmarkSettings brief = spec.benchmark();
    brief.set_warmup_ms(std::min(brief.warmup_ms(), kEarlyStopWarmupMs));
    brief.set_min_repeats(kEarlyStopRuns);
    brief.set_max_repeats(kEarlyStopRuns);
    TF_ASSIGN_OR_RETURN(v1::TimingStats estimate,
                        backend.Time(kernel, *data.buffers, data.scalars, brief));
    if (estimate.median_ns() > threshold_ns) {
      return EarlyStopped(std::move(result), std::move(estimate), threshold_ns, data);
    }
    // The estimate's runs warmed the device up: what is left of the warm-up
    // follows, so that a candidate that passes pays for the estimate no more
    // than it would have for the warm-up.
    const std::chrono::duration<double, std::milli> spent =
        std::chrono::steady_clock::now() - estimate_start;
    full.set_warmup_ms(std::max(0.0, full.warmup_ms() - spent.count()));
  }
  TF_ASSIGN_OR_RETURN(*result.mutable_timing(),
                      backend.Time(kernel, *data.buffers, data.scalars, full));
  SetGflops(data, *result.mutable_timing());
  result.set_status(v1::RESULT_STATUS_OK);
  NoteBest(result.timing(), data);
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

// A retime lease's finalists of one problem, verified and timed before,
// timed again in alternation (runner/alternation.h). Each sample is
// announced as its candidate's step, so that a crash or hang is blamed on
// the candidate that ran; the results, each with its `retiming`, are sent
// after the last round.
Status Retime(const v1::KernelSpec& spec, const v1::Lease& lease,
              const std::vector<const v1::LeasedCandidate*>& group, const v1::DeviceInfo& device,
              Backend& backend, PreparedProblem& data, const EventSink& sink) {
  std::vector<Result<Launchable>> kernels;
  for (const v1::LeasedCandidate* candidate : group) {
    Result<Launchable> kernel = backend.Find(ArtifactIndex(lease, *candidate), candidate->symbol());
    if (kernel.ok()) kernel = Configure(spec, *candidate, device, data, *kernel);
    kernels.push_back(std::move(kernel));
  }
  const v1::BenchmarkSettings settings = SampleSettings(spec.benchmark());
  Status sink_status;
  std::vector<Result<v1::TimingStats>> timed =
      TimeInAlternation(group.size(), kAlternationRounds, [&](size_t i) -> Result<v1::TimingStats> {
        TF_RETURN_IF_ERROR(kernels[i].status());
        v1::RunnerStep step;
        step.set_candidate_id(group[i]->candidate_id());
        if (sink_status = sink(Started(step)); !sink_status.ok()) return sink_status;
        return backend.Time(*kernels[i], *data.buffers, data.scalars, settings);
      });
  TF_RETURN_IF_ERROR(sink_status);
  for (size_t i = 0; i < group.size(); ++i) {
    v1::CandidateResult result;
    result.set_candidate_id(group[i]->candidate_id());
    if (!timed[i].ok()) {
      result.set_status(v1::RESULT_STATUS_RUNTIME_FAILED);
      result.set_error("re-timing: " + timed[i].status().message());
    } else {
      result.set_status(v1::RESULT_STATUS_OK);
      *result.mutable_retiming() = *timed[i];
      if (data.flops > 0) result.mutable_retiming()->set_gflops(data.flops / timed[i]->median_ns());
    }
    TF_RETURN_IF_ERROR(sink(ResultEvent(std::move(result))));
  }
  return Status::Ok();
}

}  // namespace

int64_t PreparedProblemBytes(const v1::DeviceInfo& device, bool shares_host_memory) {
  const int64_t half = device.memory_bytes() / 2;
  if (half <= 0) return kHostPreparedProblemBytes;
  return shares_host_memory ? std::min(half, kHostPreparedProblemBytes) : half;
}

Runner::Runner(std::optional<int64_t> prepared_problem_bytes)
    : prepared_problem_bytes_(prepared_problem_bytes),
      prepared_(prepared_problem_bytes.value_or(kHostPreparedProblemBytes), kMaxPreparedProblems) {}

Result<Backend*> Runner::BackendFor(const v1::RunnerRequest& request) {
  if (backend_ == nullptr) {
    TF_ASSIGN_OR_RETURN(const vendors::DeviceKind* kind,
                        vendors::FindDeviceKind(request.device().vendor()));
    prepared_.set_max_bytes(prepared_problem_bytes_.value_or(
        PreparedProblemBytes(request.device(), kind->shares_host_memory)));
    TF_ASSIGN_OR_RETURN(backend_, kind->make_backend(request.device(), request.ordinal()));
  }
  return backend_.get();
}

Status Runner::Run(const v1::RunnerRequest& request, const EventSink& sink) {
  const v1::Lease& lease = request.lease();
  const v1::KernelSpec& spec = lease.spec();

  // Candidates grouped by problem, so that each problem is prepared once.
  std::vector<std::string> problem_order;
  std::map<std::string, std::vector<const v1::LeasedCandidate*>> by_problem;
  for (const auto& candidate : lease.candidates()) {
    auto& group = by_problem[kernelspec::ProblemKey(candidate.problem())];
    if (group.empty()) problem_order.push_back(kernelspec::ProblemKey(candidate.problem()));
    group.push_back(&candidate);
  }

  Result<Backend*> backend = BackendFor(request);
  if (backend.ok()) {
    const std::vector<std::string> paths(request.artifact_paths().begin(),
                                         request.artifact_paths().end());
    if (Status loaded = (*backend)->Load(paths); !loaded.ok()) backend = loaded;
  }
  // After a sticky device error: the result is sent, then the process must
  // go. The device's copies of prepared problems went with the context.
  auto device_lost = [&](const std::string& error) {
    prepared_.Clear();
    return Status::Internal("the device is unusable after " + error + "; the runner must restart");
  };

  const std::string job_key = JobKey(lease);
  for (const std::string& key : problem_order) {
    const auto& group = by_problem[key];
    Status problem_status =
        backend.ok() ? (*backend)->SelectProblem(group.front()->problem()) : backend.status();
    PreparedProblem* data = problem_status.ok() ? prepared_.Find(job_key + key) : nullptr;
    if (data != nullptr) {
      ++stats_.problems_reused;
    } else if (problem_status.ok()) {
      v1::RunnerStep prepare;
      prepare.set_problem_key(key);
      TF_RETURN_IF_ERROR(sink(Started(prepare)));
      const auto start = std::chrono::steady_clock::now();
      Result<PreparedProblem> made =
          Prepare(spec, group.front()->problem(), **backend, lease.reference_symbol());
      if (made.ok()) {
        data = prepared_.Insert(job_key + key, std::move(made).value());
        ++stats_.problems_prepared;
        const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - start);
        spdlog::info("job {}: problem {} prepared in {} ms; {} problems kept ({} MiB)",
                     lease.job_id(), key, took.count(), prepared_.size(), prepared_.bytes() >> 20);
      } else {
        problem_status = made.status();
      }
    }
    if (data != nullptr && lease.retime()) {
      TF_RETURN_IF_ERROR(Retime(spec, lease, group, request.device(), **backend, *data, sink));
      if ((*backend)->lost()) return device_lost("re-timing the finalists of problem " + key);
      continue;
    }
    for (const v1::LeasedCandidate* candidate : group) {
      v1::RunnerStep step;
      step.set_candidate_id(candidate->candidate_id());
      TF_RETURN_IF_ERROR(sink(Started(step)));
      if (data == nullptr) {
        TF_RETURN_IF_ERROR(
            sink(ResultEvent(Failed(candidate->candidate_id(), v1::RESULT_STATUS_RUNTIME_FAILED,
                                    "problem " + key + ": " + problem_status.message()))));
        continue;
      }
      auto result = RunCandidate(spec, lease, *candidate, request.device(), **backend, *data);
      TF_RETURN_IF_ERROR(sink(ResultEvent(result.ok() ? *std::move(result)
                                                      : Failed(candidate->candidate_id(),
                                                               v1::RESULT_STATUS_RUNTIME_FAILED,
                                                               result.status().message()))));
      if (!result.ok() && (*backend)->lost()) return device_lost(result.status().message());
    }
    if (data == nullptr && backend.ok() && (*backend)->lost()) {
      return device_lost(problem_status.message());
    }
  }
  v1::RunnerEvent done;
  done.set_lease_done(true);
  return sink(done);
}

}  // namespace tf::runner
