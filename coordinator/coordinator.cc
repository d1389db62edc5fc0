// The coordinator's start-up and artifact access; each concept of its work
// has a file of its own beside this one (coordinator_*.cc).
#include "coordinator/coordinator.h"

#include "compiler/toolchain.h"

namespace tf::coordinator {
namespace {

Observer* ObserverOrNone(Observer* observer) {
  static Observer none;
  return observer ? observer : &none;
}

}  // namespace

Coordinator::Coordinator(const CoordinatorOptions& options)
    : options_(options), observer_(ObserverOrNone(options.observer)) {}

Result<std::unique_ptr<Coordinator>> Coordinator::Start(const CoordinatorOptions& options) {
  std::unique_ptr<Coordinator> c(new Coordinator(options));
  TF_ASSIGN_OR_RETURN(c->store_, compiler::ArtifactStore::Open(options.artifact_dir));
  TF_ASSIGN_OR_RETURN(c->db_, db::TuningDb::Open(options.db_path, options.db_synchronous_full,
                                                 options.standing_by));
  compiler::BuildOptions build_options;
  build_options.batch_size = options.build_batch_size;
  build_options.parallelism = options.build_parallelism;
  build_options.timeout_s = options.build_timeout_s;
  c->build_runs_ = static_cast<size_t>(compiler::ConcurrentRuns(build_options));
  Coordinator* self = c.get();
  c->builds_ = std::make_unique<BuildQueue>(
      *c->store_, build_options,
      [self](int64_t job_id, std::vector<compiler::ConfigBuild> builds) {
        self->OnBatchBuilt(job_id, builds);
      },
      *c->observer_);
  {
    std::lock_guard lock(c->mu_);
    TF_RETURN_IF_ERROR(c->Load());
  }
  c->reaper_ = std::thread([self] { self->ReaperLoop(); });
  return c;
}

Coordinator::~Coordinator() {
  stopping_ = true;
  work_cv_.notify_all();
  change_cv_.notify_all();
  if (reaper_.joinable()) reaper_.join();
  builds_.reset();  // its callbacks use this object
}

Result<std::string> Coordinator::ArtifactPath(const std::string& sha256) const {
  if (!store_->Has(sha256)) return Status::NotFound("no artifact with sha256 " + sha256);
  return store_->PathOf(sha256);
}

}  // namespace tf::coordinator
