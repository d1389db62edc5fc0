// tunefleet: the command line of TuneFleet. Parses flags and dispatches to
// the subcommand functions of client/cli/commands.h.
#include <CLI/CLI.hpp>

#include "client/cli/commands.h"

namespace {

using namespace tf::cli;

// A subcommand that accepts --json (and the global flags) after its name.
CLI::App* AddCommand(CLI::App& app, const std::string& name, const std::string& description,
                     const std::string& examples) {
  CLI::App* command = app.add_subcommand(name, description);
  command->fallthrough();
  command->footer("Examples:\n" + examples);
  return command;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "tunefleet: submit kernel autotuning jobs to a TuneFleet coordinator, follow them, and "
      "query the best tuned configurations."};
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 success, 1 job failed or cancelled, 2 usage or spec error, 3 coordinator "
      "unreachable, 4 not found, 5 refused: no token, unknown or revoked token, or its role may "
      "not do that.\nThe bearer token comes from --token-file, TUNEFLEET_TOKEN_FILE or "
      "TUNEFLEET_TOKEN (the token itself).\nRun `tunefleet COMMAND --help` for a command's "
      "options.");

  GlobalOptions global;
  global.coordinator = "127.0.0.1:50051";
  app.add_option("--coordinator", global.coordinator,
                 "Coordinator address, HOST:PORT, or several separated by commas (a coordinator "
                 "and its standbys: each call goes to the one that serves)")
      ->envname("TUNEFLEET_COORDINATOR")
      ->capture_default_str();
  app.add_flag("--json", global.json, "Print machine-readable JSON on stdout");
  app.add_option("--tls-ca", global.tls.ca_file,
                 "CA (PEM) of the coordinator's TLS certificate; without it, plaintext")
      ->envname("TUNEFLEET_TLS_CA");
  app.add_option("--tls-cert", global.tls.cert_file,
                 "this client's certificate (PEM), for a coordinator that requires one")
      ->envname("TUNEFLEET_TLS_CERT");
  app.add_option("--tls-key", global.tls.key_file, "private key of --tls-cert (PEM)")
      ->envname("TUNEFLEET_TLS_KEY");
  app.add_option("--token-file", global.token_file,
                 "file holding the bearer token to call with (else TUNEFLEET_TOKEN, the token)")
      ->envname("TUNEFLEET_TOKEN_FILE");

  int exit_code = kExitOk;

  SubmitOptions submit;
  CLI::App* submit_cmd =
      AddCommand(app, "submit", "Submit a tuning job for a kernel spec (YAML) and its sources",
                 "  tunefleet submit examples/cpu/gemm/gemm.yaml --wait\n"
                 "  tunefleet submit gemm.yaml --priority 10 --json\n");
  submit_cmd->add_option("SPEC", submit.spec_path, "Kernel spec file (YAML)")->required();
  submit_cmd->add_flag("--wait", submit.wait,
                       "Follow the job to its end, then print the best configuration per problem; "
                       "exits 1 when the job fails");
  submit_cmd->add_option("--priority", submit.priority, "Higher runs first")->capture_default_str();
  submit_cmd->callback([&] { exit_code = RunSubmit(global, submit); });

  int64_t job_id = 0;
  CLI::App* status_cmd = AddCommand(app, "status", "Show a job's state, progress and best results",
                                    "  tunefleet status 12\n  tunefleet status 12 --json\n");
  status_cmd->add_option("JOB", job_id, "Job id")->required();
  status_cmd->callback([&] { exit_code = RunStatus(global, job_id); });

  int limit = 0;
  CLI::App* jobs_cmd = AddCommand(app, "jobs", "List jobs, most recent first",
                                  "  tunefleet jobs\n  tunefleet jobs --limit 10 --json\n");
  jobs_cmd->add_option("--limit", limit, "At most this many jobs (0: the coordinator's default)");
  jobs_cmd->callback([&] { exit_code = RunJobs(global, limit); });

  CLI::App* cancel_cmd =
      AddCommand(app, "cancel", "Cancel a queued or running job", "  tunefleet cancel 12\n");
  cancel_cmd->add_option("JOB", job_id, "Job id")->required();
  cancel_cmd->callback([&] { exit_code = RunCancel(global, job_id); });

  CLI::App* results_cmd =
      AddCommand(app, "results",
                 "List every candidate of a job, best first: status, config, problem, median, "
                 "p10/p90, GFLOP/s, error",
                 "  tunefleet results 12\n  tunefleet results 12 --json | jq '.[0].config'\n");
  results_cmd->add_option("JOB", job_id, "Job id")->required();
  results_cmd->callback([&] { exit_code = RunResults(global, job_id); });

  CLI::App* workers_cmd =
      AddCommand(app, "workers", "List registered workers with their devices and leases",
                 "  tunefleet workers\n  tunefleet workers --json\n");
  workers_cmd->callback([&] { exit_code = RunWorkers(global); });

  BestOptions best;
  CLI::App* best_cmd = AddCommand(
      app, "best",
      "Query the best tuned configuration of a kernel for a problem shape; when that shape was "
      "never tuned, the nearest tuned one answers (marked so). Exits 4 when nothing was tuned",
      "  tunefleet best gemm_f16 --problem M=4096,N=4096,K=4096\n"
      "  tunefleet best gemm_f16 --problem M=4096,N=4096,K=4096 --device 'NVIDIA H200' --json\n");
  best_cmd->add_option("KERNEL", best.kernel, "Kernel name, as in the spec")->required();
  best_cmd->add_option("--problem", best.problem, "Problem shape, NAME=VALUE,...")->required();
  best_cmd->add_option("--device", best.device_class, "Device class (default: any)");
  best_cmd->callback([&] { exit_code = RunBest(global, best); });

  CLI::App* token_cmd =
      app.add_subcommand("token", "Manage the coordinator's bearer tokens (needs an admin token)");
  token_cmd->require_subcommand(1);
  token_cmd->fallthrough();  // --json and the global flags after `token create`
  TokenCreateOptions token_create;
  CLI::App* token_create_cmd = AddCommand(
      *token_cmd, "create",
      "Create a token and print it (shown this once); roles: reader (read jobs, results, "
      "workers, best configs), submitter (submit, follow and cancel its own jobs), worker (the "
      "worker service, for its own workers), admin (everything, tokens included)",
      "  tunefleet token create --role submitter --name ci > ci.token && chmod 600 ci.token\n"
      "  tunefleet token create --role worker --name gpu-host-3 --json\n");
  token_create_cmd->add_option("--role", token_create.role, "reader, submitter, worker or admin")
      ->required();
  token_create_cmd->add_option("--name", token_create.name, "Who or what it is for")->required();
  token_create_cmd->callback([&] { exit_code = RunTokenCreate(global, token_create); });
  CLI::App* token_list_cmd = AddCommand(
      *token_cmd, "list", "List tokens: id, name, role, created, revoked (never secrets)",
      "  tunefleet token list\n  tunefleet token list --json\n");
  token_list_cmd->callback([&] { exit_code = RunTokenList(global); });
  int64_t token_id = 0;
  CLI::App* token_revoke_cmd =
      AddCommand(*token_cmd, "revoke", "Revoke a token: its next call is refused",
                 "  tunefleet token revoke 3\n");
  token_revoke_cmd->add_option("ID", token_id, "Token id, as `token list` shows it")->required();
  token_revoke_cmd->callback([&] { exit_code = RunTokenRevoke(global, token_id); });

  std::string spec_path;
  CLI::App* spec_cmd = AddCommand(
      app, "spec",
      "Print what `submit` would send for a spec: the KernelSpec with every default filled "
      "in, and its source files (base64), as JSON. SPEC - reads YAML from stdin, with source "
      "paths relative to the current directory",
      "  tunefleet spec examples/cpu/gemm/gemm.yaml | jq .spec.params\n"
      "  tunefleet spec - < gemm.yaml\n");
  spec_cmd->add_option("SPEC", spec_path, "Kernel spec file (YAML), or - for stdin")->required();
  spec_cmd->callback([&] { exit_code = RunSpec(spec_path); });

  CompileOptions compile;
  CLI::App* compile_cmd = AddCommand(
      app, "compile",
      "Build a spec's candidates on this machine, without coordinator or workers: validates the "
      "spec, enumerates the configurations of all problems, builds them in batches and reports "
      "failures. Exits 1 when any configuration fails to build",
      "  tunefleet compile examples/cpu/gemm/gemm.yaml\n"
      "  tunefleet compile gemm.yaml --batch-size 32 --jobs 8 --out /tmp/artifacts --json\n"
      "  tunefleet compile gemm.cu.yaml --target sm_90 --device-prop "
      "max_shared_mem_per_block=232448\n");
  compile_cmd->add_option("SPEC", compile.spec_path, "Kernel spec file (YAML)")->required();
  compile_cmd->add_option("--target", compile.target,
                          "Target architecture (host, sm_90, gfx942, ...); default: the spec's");
  compile_cmd->add_option("--batch-size", compile.batch_size, "Configurations per compiler run")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  compile_cmd->add_option("--jobs", compile.jobs,
                          "Concurrent compiler runs (default: one per hardware thread)");
  compile_cmd->add_option("--out", compile.out_dir,
                          "Artifact store directory (default: ~/.cache/tunefleet/artifacts)");
  compile_cmd->add_option("--device-prop", compile.device_props,
                          "NAME=VALUE for device.NAME in constraints; for the host target the "
                          "host's own properties are the default");
  compile_cmd->callback([&] { exit_code = RunCompile(global, compile); });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? kExitOk : kExitUsage;
  }
  return exit_code;
}
