// tunefleet: the command line of TuneFleet. Parses flags and dispatches to
// the subcommand functions of client/cli/commands.h.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "client/cli/commands.h"
#include "common/flag_checks.h"

namespace {

using namespace tf::cli;

// A subcommand that accepts --json (and the global flags) after its name.
CLI::App* AddCommand(CLI::App& app, const std::string& name, const std::string& description,
                     const std::string& examples) {
  CLI::App* command = app.add_subcommand(name, description);
  command->fallthrough();
  command->footer("Examples:\n" + examples +
                  "\nThe global options (--coordinator, --token-file, --json, --tls-*; "
                  "`tunefleet --help`) go before or after the command.");
  return command;
}

}  // namespace

int main(int argc, char** argv) {
  // Standard output carries what the commands print (--json above all); the
  // libraries' warnings go to standard error, their progress lines nowhere.
  spdlog::set_default_logger(spdlog::stderr_color_mt("tunefleet"));
  spdlog::set_level(spdlog::level::warn);
  CLI::App app{
      "tunefleet: submit kernel autotuning jobs to a TuneFleet coordinator, follow them, and "
      "query the best tuned configurations."};
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 success, 1 job failed or cancelled, 2 usage or spec error, 3 coordinator "
      "unreachable, 4 not found, 5 refused: no token, unknown or revoked token, or its role may "
      "not do that, 130 following a job (submit --wait, watch) was interrupted: the job goes "
      "on.\nThe bearer token comes from --token-file, TUNEFLEET_TOKEN_FILE or "
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
                       "exits 1 when the job fails. Ctrl-C stops following, not the job "
                       "(`tunefleet watch JOB` follows it again)");
  submit_cmd->add_option("--priority", submit.priority, "Higher runs first")->capture_default_str();
  submit_cmd->callback([&] { exit_code = RunSubmit(global, submit); });

  int64_t job_id = 0;
  CLI::App* status_cmd = AddCommand(app, "status", "Show a job's state, progress and best results",
                                    "  tunefleet status 12\n  tunefleet status 12 --json\n");
  status_cmd->add_option("JOB", job_id, "Job id")->required()->check(tf::kId);
  status_cmd->callback([&] { exit_code = RunStatus(global, job_id); });

  CLI::App* watch_cmd = AddCommand(
      app, "watch",
      "Follow a queued or running job to its end as `submit --wait` does: progress on stderr, "
      "then the best configuration per problem; exits 1 when the job fails or is cancelled, 130 "
      "on Ctrl-C (the job goes on). Of a job that ended, prints its end at once",
      "  tunefleet watch 12\n  tunefleet watch 12 --json > job12.json\n");
  watch_cmd->add_option("JOB", job_id, "Job id")->required()->check(tf::kId);
  watch_cmd->callback([&] { exit_code = RunWatch(global, job_id); });

  int limit = 0;
  CLI::App* jobs_cmd = AddCommand(app, "jobs", "List jobs, most recent first",
                                  "  tunefleet jobs\n  tunefleet jobs --limit 10 --json\n");
  jobs_cmd->add_option("--limit", limit, "At most this many jobs (0: the coordinator's default)")
      ->check(tf::kNonNegative);
  jobs_cmd->callback([&] { exit_code = RunJobs(global, limit); });

  CLI::App* cancel_cmd =
      AddCommand(app, "cancel", "Cancel a queued or running job", "  tunefleet cancel 12\n");
  cancel_cmd->add_option("JOB", job_id, "Job id")->required()->check(tf::kId);
  cancel_cmd->callback([&] { exit_code = RunCancel(global, job_id); });

  CLI::App* results_cmd = AddCommand(
      app, "results",
      "List every candidate of a job, best first: status, config, problem, median, "
      "p10/p90, GFLOP/s, re-timing, the worker that measured it ((reused), imported: DEVICE), "
      "error",
      "  tunefleet results 12\n  tunefleet results 12 --json | jq '.[0].config'\n"
      "  tunefleet results 12 --format t4 > gemm_T4.json\n");
  results_cmd->add_option("JOB", job_id, "Job id")->required()->check(tf::kId);
  std::string results_format = "table";
  results_cmd
      ->add_option("--format", results_format,
                   "table, json (as --json), or t4: Kernel Tuner's T4 results JSON")
      ->capture_default_str();
  results_cmd->callback([&] { exit_code = RunResults(global, job_id, results_format); });

  CLI::App* workers_cmd =
      AddCommand(app, "workers",
                 "List registered workers with their devices, leases and results; one silent "
                 "for the coordinator's --worker-retention-ms (a day) with no lease is forgotten",
                 "  tunefleet workers\n  tunefleet workers --json\n");
  workers_cmd->callback([&] { exit_code = RunWorkers(global); });

  std::string kernels_device_class;
  CLI::App* kernels_cmd = AddCommand(
      app, "kernels",
      "List the tuned kernels, by name: the token name each kernel name belongs to (\"-\": "
      "none yet), its tuned (problem, device class) pairs, their device classes, and when it "
      "was last tuned (a job that succeeded, or an import). Exits 4 when nothing is tuned",
      "  tunefleet kernels\n"
      "  tunefleet kernels --device-class a100 --json | jq -r '.[].name'\n"
      "  tunefleet kernels set-owner gemm_f16 team-b   # an admin hands it to another team\n");
  CLI::Option* kernels_device_class_option =
      kernels_cmd->add_option("--device-class", kernels_device_class,
                              "Only what is tuned on this device class (default: every one)");
  KernelOwnerOptions kernel_owner;
  CLI::App* set_owner_cmd = AddCommand(
      *kernels_cmd, "set-owner",
      "Hand a kernel name to a team (the name of submitter tokens: `tunefleet token list`) "
      "whatever its jobs say, or with --none to no one, until the next submitter token to "
      "submit under it takes it (needs an admin token). The kernel needs a job or an import "
      "under its name. Prints the change",
      "  tunefleet kernels set-owner gemm_f16 team-b\n"
      "  tunefleet kernels set-owner gemm_f16 --none --json\n");
  set_owner_cmd->add_option("KERNEL", kernel_owner.kernel, "Kernel name, as in the spec")
      ->required();
  set_owner_cmd->add_option("TEAM", kernel_owner.team, "The token name it goes to");
  set_owner_cmd->add_flag("--none", kernel_owner.none, "To no one (instead of TEAM)");
  set_owner_cmd->excludes(kernels_device_class_option);
  set_owner_cmd->callback([&] { exit_code = RunKernelSetOwner(global, kernel_owner); });
  kernels_cmd->callback([&] {
    if (!set_owner_cmd->parsed()) exit_code = RunKernels(global, kernels_device_class);
  });

  BestOptions best;
  CLI::App* best_cmd = AddCommand(
      app, "best",
      "Query the best tuned configuration of a kernel for a problem shape; when that shape was "
      "never tuned, the nearest tuned one answers (marked so). Exits 4 when nothing was tuned",
      "  tunefleet best gemm_f16 --problem M=4096,N=4096,K=4096\n"
      "  tunefleet best gemm_f32_cpu --problem M=512,N=512,K=512 --device cpu/AMD-EPYC-7B13/2c "
      "--json\n");
  best_cmd->add_option("KERNEL", best.kernel, "Kernel name, as in the spec")->required();
  best_cmd->add_option("--problem", best.problem, "Problem shape, NAME=VALUE,...")->required();
  best_cmd->add_option("--device,--device-class", best.device_class, "Device class (default: any)");
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
      "  tunefleet token create --role worker --name gpu-host-3 --json\n"
      "  umask 077; tunefleet token create --role submitter --name ci > ci.token  # yours alone\n");
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
  token_revoke_cmd->add_option("ID", token_id, "Token id, as `token list` shows it")
      ->required()
      ->check(tf::kId);
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
      "  tunefleet compile gpu_gemm.yaml --target ARCH --device-prop "
      "max_shared_mem_per_block=232448\n");
  compile_cmd->add_option("SPEC", compile.spec_path, "Kernel spec file (YAML)")->required();
  compile_cmd->add_option(
      "--target", compile.target,
      "Target architecture, as workers report their devices' (tunefleet workers); "
      "default: the spec's");
  compile_cmd->add_option("--batch-size", compile.batch_size, "Configurations per compiler run")
      ->check(tf::kPositive)
      ->capture_default_str();
  compile_cmd
      ->add_option("--jobs", compile.jobs,
                   "Concurrent compiler runs (default, or 0: one per hardware thread)")
      ->check(tf::kNonNegative);
  compile_cmd->add_option("--out", compile.out_dir,
                          "Artifact store directory (default: ~/.cache/tunefleet/artifacts)");
  compile_cmd->add_option("--device-prop", compile.device_props,
                          "NAME=VALUE for device.NAME in constraints; for the host target the "
                          "host's own properties are the default");
  compile_cmd
      ->add_option("--limit", compile.limit,
                   "Build a sample of at most N configurations, drawn uniformly from each "
                   "problem's space (seeded), instead of all of them")
      ->check(tf::kPositive);
  compile_cmd->add_option("--seed", compile.seed, "Seed of the --limit sample")
      ->capture_default_str();
  compile_cmd->callback([&] { exit_code = RunCompile(global, compile); });

  SpaceOptions space;
  CLI::App* space_cmd = AddCommand(
      app, "space",
      "Count the configurations of a spec's constrained space, per problem, and show the first "
      "few; builds nothing. A space too large to count within --max-seconds is reported as at "
      "least the count so far, with the share of its combinations walked (--json: "
      "configurations_at_least and complete: false); progress goes to stderr",
      "  tunefleet space convolution.yaml\n"
      "  tunefleet space gemm.yaml --json | jq .configurations\n"
      "  tunefleet space gemm.cu.yaml --device-prop max_shared_mem_per_block_optin=232448\n"
      "  tunefleet space huge.yaml --max-seconds 0   # count them all, however long it takes\n");
  space_cmd->add_option("SPEC", space.spec_path, "Kernel spec file (YAML)")->required();
  space_cmd->add_option("--device-prop", space.device_props,
                        "NAME=VALUE for device.NAME in constraints; for the host target the "
                        "host's own properties are the default");
  space_cmd->add_option("--show", space.show, "Configurations listed per problem")
      ->check(tf::kNonNegative)
      ->capture_default_str();
  space_cmd
      ->add_option("--max-seconds", space.max_seconds,
                   "Stop counting after this long and report a lower bound (0: count them all)")
      ->check(tf::kNonNegative)
      ->capture_default_str();
  space_cmd->callback([&] { exit_code = RunSpace(global, space); });

  CLI::App* import_cmd =
      app.add_subcommand("import", "Bring kernels and results from other tuners");
  import_cmd->require_subcommand(1);
  import_cmd->fallthrough();
  ImportKernelTunerOptions import_kt;
  CLI::App* import_kt_cmd = AddCommand(
      *import_cmd, "kerneltuner",
      "Write a spec from a Kernel Tuner T1 file: parameters as preprocessor macros "
      "(param_style: define), conditions as constraints, the launch from LocalSize, ProblemSize "
      "and GridDiv*, arguments as buffers (MemType Constant: __constant__ memory), compiler "
      "options. What cannot be translated is an error naming the T1 field. The kernel file is "
      "used unchanged (copied beside the spec when it is not in the spec's folder)",
      "  tunefleet import kerneltuner convolution_T1.json -o convolution.yaml\n"
      "  tunefleet import kerneltuner convolution_T1.json --reference convolution_naive "
      "-o convolution.yaml\n");
  import_kt_cmd->add_option("T1", import_kt.t1_path, "Kernel Tuner T1 input file (JSON)")
      ->required();
  import_kt_cmd->add_option("-o,--out", import_kt.out_path,
                            "Spec file to write (default: print it; it belongs beside the "
                            "kernel file)");
  import_kt_cmd->add_option("--reference", import_kt.reference,
                            "Kernel of the same source that computes the outputs one thread per "
                            "element, to check every candidate against");
  import_kt_cmd->callback([&] { exit_code = RunImportKernelTuner(global, import_kt); });

  ImportResultsOptions import_results;
  CLI::App* import_results_cmd = AddCommand(
      *import_cmd, "results",
      "Load a Kernel Tuner cache file or T4 results file (.json or .json.gz) into the "
      "coordinator's tuning database (admin token): stored as a finished job of their own, "
      "marked imported with the device they were recorded on, so that `best` answers from "
      "them and jobs of the kernel warm start from them. A bad file is an error naming the "
      "file and the entry; nothing is stored then. With --json, one object per problem "
      "imported",
      "  tunefleet import results A100_T4.json.gz --kernel convolution_milo --device-class a100 "
      "--problem problem_size_x=4096,problem_size_y=4096\n"
      "  tunefleet import results conv_cache.json --kernel conv --device-class a100 "
      "--problem problem_size_x=4096,problem_size_y=4096 --device 'A100-PCIE-40GB' --json\n"
      "  tunefleet results 7 --format t4 > job7_T4.json && tunefleet import results "
      "job7_T4.json --kernel gemm --device-class h100\n");
  import_results_cmd
      ->add_option("FILE", import_results.path, "Kernel Tuner cache or T4 file, gzip or not")
      ->required();
  import_results_cmd->add_option("--kernel", import_results.kernel, "Kernel name, as in its spec")
      ->required();
  import_results_cmd
      ->add_option("--device-class", import_results.device_class,
                   "Device class the results answer for (as `best --device-class` names it)")
      ->required();
  import_results_cmd->add_option(
      "--problem", import_results.problem,
      "The problem they were recorded for, NAME=VALUE,... as the spec's problems "
      "name it (an imported T1's: problem_size_x=...,problem_size_y=...). Needed "
      "where the file names none; of a file that names its problems (`tunefleet "
      "results --format t4` does), the one to import; default: each, as a job of "
      "its own");
  import_results_cmd->add_option(
      "--device", import_results.device,
      "Device they were recorded on (default: as the file says, else the file's name)");
  import_results_cmd->callback([&] { exit_code = RunImportResults(global, import_results); });

  ExportOptions export_options;
  CLI::App* export_cmd = AddCommand(
      app, "export",
      "Write the best configuration of a kernel per tuned (problem, device class): as JSON "
      "(what the C++ client's BestConfigCache::Offline loads), or as a C++ header with a "
      "constexpr table and Lookup(device_class, problem), which answers an untuned problem "
      "with the nearest tuned one as the coordinator does. Exits 4 when nothing is tuned",
      "  tunefleet export convolution_milo --format json -o convolution_best.json\n"
      "  tunefleet export gemm_f16 --device-class a100 --format cpp -o gemm_f16_best.h\n");
  export_cmd->add_option("KERNEL", export_options.kernel, "Kernel name, as in the spec")
      ->required();
  export_cmd->add_option("--device-class", export_options.device_class,
                         "Only this device class (default: every one)");
  export_cmd->add_option("--format", export_options.format, "json or cpp")->capture_default_str();
  export_cmd->add_option("-o,--out", export_options.out_path, "File to write (default: stdout)");
  export_cmd->callback([&] { exit_code = RunExport(global, export_options); });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // CLI11 reports `tunefleet stauts 3` as "A subcommand is required".
    const std::vector<std::string> extra = app.remaining(true);
    if (std::string(error.what()) == "A subcommand is required" && !extra.empty()) {
      std::string command = "tunefleet";  // and the commands given before it
      for (const CLI::App* parent = &app; !parent->get_subcommands().empty();) {
        parent = parent->get_subcommands().front();
        command += " " + parent->get_name();
      }
      const bool option = extra.front().starts_with("-");
      std::fprintf(stderr, "tunefleet: unknown %s '%s'; `%s --help` lists them\n",
                   option ? "option" : "command", extra.front().c_str(), command.c_str());
      return kExitUsage;
    }
    return app.exit(error) == 0 ? kExitOk : kExitUsage;
  }
  return exit_code;
}
