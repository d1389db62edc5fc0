// Results recorded elsewhere (tunefleet import results): stored as a finished
// job of their own, under a fingerprint of imports, so that QueryBest
// answers from them, warm starts seed from them (BindJobLocked asks the best
// index), and `tunefleet results JOB` lists them with the device they were
// recorded on. A job of the kernel's real source fingerprints differently:
// its own results never mix with imported ones. And what goes out: the best
// index's listings (ListBest, ListKernels).
#include <spdlog/spdlog.h>

#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "common/files.h"
#include "coordinator/coordinator.h"
#include "coordinator/job_rules.h"
#include "kernelspec/config.h"
#include "kernelspec/validate.h"

namespace tf::coordinator {
namespace {

Status CheckImport(const v1::ImportResultsRequest& request, const kernelspec::SpecLimits& limits) {
  if (!kernelspec::IsIdentifier(request.kernel())) {
    return Status::InvalidArgument("kernel: '" + request.kernel() +
                                   "' must be an identifier (letters, digits, _)");
  }
  if (request.device_class().empty()) return Status::InvalidArgument("device_class: empty");
  if (request.problem().vars_size() == 0) {
    return Status::InvalidArgument("problem: no variables; name the problem the results are of");
  }
  for (const auto& var : request.problem().vars()) {
    if (!kernelspec::IsIdentifier(var.name())) {
      return Status::InvalidArgument("problem: '" + var.name() + "' is not an identifier");
    }
  }
  if (request.results_size() == 0) return Status::InvalidArgument("results: none");
  if (static_cast<uint64_t>(request.results_size()) > limits.max_space_size) {
    return Status::InvalidArgument("results: " + std::to_string(request.results_size()) +
                                   ", more than the " + std::to_string(limits.max_space_size) +
                                   " configurations a space may have");
  }
  std::set<std::string> names, keys;
  for (const auto& s : request.results(0).config().settings()) names.insert(s.name());
  for (int i = 0; i < request.results_size(); ++i) {
    const auto& r = request.results(i);
    const std::string field = "results[" + std::to_string(i) + "]";
    std::set<std::string> these;
    for (const auto& s : r.config().settings()) {
      if (!kernelspec::IsIdentifier(s.name())) {
        return Status::InvalidArgument(field + ".config: '" + s.name() + "' is not an identifier");
      }
      these.insert(s.name());
    }
    if (these.empty() || these != names) {
      return Status::InvalidArgument(field + ".config: its parameters are not those of results[0]");
    }
    if (!keys.insert(kernelspec::ConfigKey(r.config())).second) {
      return Status::InvalidArgument(field + ".config: recorded twice");
    }
    if (r.status() == v1::RESULT_STATUS_UNSPECIFIED) {
      return Status::InvalidArgument(field + ".status: unspecified");
    }
    if (r.status() == v1::RESULT_STATUS_OK && !(r.timing().median_ns() > 0)) {
      return Status::InvalidArgument(field + ".timing.median_ns: an OK result needs a time > 0");
    }
  }
  return Status::Ok();
}

// What the imported job's spec says: the kernel, its problem and, for the
// dashboard, each parameter with the values recorded.
v1::KernelSpec ImportedSpec(const v1::ImportResultsRequest& request) {
  v1::KernelSpec spec;
  spec.set_name(request.kernel());
  *spec.add_problems() = request.problem();
  std::map<std::string, std::map<std::string, v1::Value>> values;
  for (const auto& r : request.results()) {
    for (const auto& s : r.config().settings()) {
      values[s.name()][kernelspec::ValueText(s.value())] = s.value();
    }
  }
  for (const auto& s : request.results(0).config().settings()) {
    v1::Param* param = spec.add_params();
    param->set_name(s.name());
    for (const auto& [text, value] : values[s.name()]) *param->add_values() = value;
  }
  return spec;
}

// Whether `rows` (an earlier job's) are the results `request` imports: the
// same configurations, outcomes and timings.
bool SameResults(const v1::ImportResultsRequest& request, const std::vector<db::ResultRow>& rows) {
  using Recorded = std::tuple<std::string, int, double, double, double, double>;
  auto recorded = [](const std::string& config, v1::ResultStatus status, const v1::TimingStats& t) {
    return Recorded{config, status, t.median_ns(), t.p10_ns(), t.p90_ns(), t.min_ns()};
  };
  std::multiset<Recorded> imported, earlier;
  for (const auto& r : request.results()) {
    imported.insert(recorded(kernelspec::ConfigKey(r.config()), r.status(), r.timing()));
  }
  for (const db::ResultRow& row : rows) {
    earlier.insert(recorded(row.config_key, row.status, row.timing));
  }
  return imported == earlier;
}

}  // namespace

Result<v1::ImportResultsResponse> Coordinator::ImportResults(
    const v1::ImportResultsRequest& request) {
  TF_RETURN_IF_ERROR(CheckImport(request, options_.limits));
  const int64_t now = NowUnixMs();
  const std::string recorded_on = request.device().empty() ? "an unnamed device" : request.device();
  std::lock_guard lock(mu_);
  // The problems of a kernel name the same variables: results of another
  // kernel, or a problem named short of a variable, would answer no query.
  if (auto tuned = best_.List(request.kernel(), "");
      !tuned.empty() && kernelspec::ProblemVariableNames(tuned[0].problem()) !=
                            kernelspec::ProblemVariableNames(request.problem())) {
    return Status::InvalidArgument(
        "problem: " + kernelspec::ProblemText(request.problem()) + " names other variables than " +
        request.kernel() + "'s tuned problems (" + kernelspec::ProblemText(tuned[0].problem()) +
        " on " + tuned[0].device_class() + ")");
  }

  db::JobRow job;
  job.kernel = request.kernel();
  // One fingerprint for every import of the kernel with these parameters,
  // whatever the problem or device class, so that they answer together (the
  // best index answers from a kernel's newest completed fingerprint only).
  std::string params;
  for (const auto& s : request.results(0).config().settings()) params += s.name() + ",";
  job.fingerprint = "imported-" + Sha256Hex(request.kernel() + "\n" + params).substr(0, 32);
  job.spec = ImportedSpec(request);
  job.state = v1::JOB_STATE_SUCCEEDED;
  job.device_class = request.device_class();
  job.created_ms = job.updated_ms = job.started_ms = now;
  job.stop_reason = "imported from " + (request.source().empty() ? "a file" : request.source()) +
                    ", recorded on " + recorded_on;
  const std::string problem_key = kernelspec::ProblemKey(request.problem());
  const std::string problem_text = kernelspec::ProblemText(request.problem());
  // The same file imported twice would add a job of the same results and change no answer:
  // refused, naming the import that holds them (the one whose best answers for the problem).
  if (const int64_t earlier =
          best_.JobOf(job.kernel, job.fingerprint, problem_key, job.device_class)) {
    TF_ASSIGN_OR_RETURN(std::vector<db::ResultRow> earlier_rows, db_->ListResults(earlier));
    if (SameResults(request, earlier_rows)) {
      TF_ASSIGN_OR_RETURN(std::optional<db::JobRow> earlier_job, db_->GetJob(earlier));
      return Status::FailedPrecondition(
          "these results of " + job.kernel + " for " + problem_text + " on " + job.device_class +
          " were imported already, as job " + std::to_string(earlier) +
          (earlier_job ? " (" + earlier_job->stop_reason + ")" : "") +
          "; imported again they would answer as they do now");
    }
  }

  std::vector<db::ResultRow> rows;
  std::vector<bool> became_best;
  int64_t fingerprint_created_ms = 0;
  {
    auto txn = db_->Begin();
    TF_RETURN_IF_ERROR(txn->begin_status());
    TF_ASSIGN_OR_RETURN(fingerprint_created_ms,
                        db_->EnsureKernel(job.fingerprint, job.kernel, now));
    TF_RETURN_IF_ERROR(db_->InsertJob(job));
    std::vector<db::CandidateRow> candidates;
    for (const auto& r : request.results()) {
      candidates.push_back({0, job.id, kernelspec::ConfigKey(r.config()), problem_text,
                            db::CandidateState::kDone, 0});
    }
    TF_RETURN_IF_ERROR(db_->InsertCandidates(candidates));
    for (int i = 0; i < request.results_size(); ++i) {
      const auto& r = request.results(i);
      db::ResultRow row;
      row.candidate_id = candidates[i].id;
      row.job_id = job.id;
      row.fingerprint = job.fingerprint;
      row.config_key = candidates[i].config_key;
      row.problem_key = problem_key;
      row.device_class = job.device_class;
      row.worker = "imported: " + recorded_on;
      row.status = r.status();
      if (IsFailure(r.status())) row.error = "recorded on " + recorded_on;
      row.timing = r.timing();
      TF_RETURN_IF_ERROR(db_->InsertResult(row).status());
      bool best = false;
      if (row.status == v1::RESULT_STATUS_OK) {
        TF_ASSIGN_OR_RETURN(best, db_->OfferBest(job.kernel, row, now));
      }
      job.candidates_total++;
      job.candidates_done++;
      if (IsFailure(row.status)) job.candidates_failed++;
      rows.push_back(std::move(row));
      became_best.push_back(best);
    }
    TF_RETURN_IF_ERROR(db_->UpdateJob(job));
    TF_RETURN_IF_ERROR(txn->Commit());
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!became_best[i]) continue;
    db::BestRow best;
    best.kernel = job.kernel;
    best.fingerprint = job.fingerprint;
    best.fingerprint_created_ms = fingerprint_created_ms;
    best.problem_key = problem_key;
    best.device_class = job.device_class;
    best.result = rows[i];
    best_.Put(best);
  }
  best_.Complete(
      {job.kernel, job.fingerprint, fingerprint_created_ms, job.device_class, job.updated_ms});
  for (const db::ResultRow& row : rows) observer_->OnResultImported(row);
  jobs_[job.id].row = job;  // among the jobs that ended since the start, as the others
  spdlog::info("job {}: {} results of {} on {} imported from {}", job.id, rows.size(), job.kernel,
               job.device_class, request.source());

  v1::ImportResultsResponse response;
  response.set_job_id(job.id);
  response.set_imported(job.candidates_done);
  response.set_failed(job.candidates_failed);
  v1::QueryBestRequest query;
  query.set_kernel(job.kernel);
  *query.mutable_problem() = request.problem();
  query.set_device_class(job.device_class);
  *response.mutable_best() = best_.Query(query);
  return response;
}

std::vector<v1::QueryBestResponse> Coordinator::ListBest(const v1::ListBestRequest& request) const {
  return best_.List(request.kernel(), request.device_class());
}

std::vector<v1::TunedKernel> Coordinator::ListKernels(const v1::ListKernelsRequest& request) {
  // The index answers under its own lock, as for ListBest; the owners are
  // the coordinator's, under mu_, taken after the index's is released.
  std::vector<v1::TunedKernel> kernels = best_.Kernels(request.device_class());
  std::lock_guard lock(mu_);
  for (v1::TunedKernel& kernel : kernels) kernel.set_owner(kernel_owners_.OwnerOf(kernel.name()));
  return kernels;
}

}  // namespace tf::coordinator
