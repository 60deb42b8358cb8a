// aftermath: the command line. A thin program over the harness library: the
// subcommands' options and the dispatch; each command is its own file.
//
//   aftermath run [OPTIONS] SCENARIO.yaml|SUITE.suite...   (run_cmd.h)
//   aftermath run [OPTIONS] -- COMMAND [ARGS...]
//   aftermath pytest [OPTIONS] -- PYTEST ARGS...            (pytest_cmd.h)
//   aftermath validate INPUTS... | aftermath list [DIR]   (scenarios_cmd.h)
//   aftermath report RESULT.json | aftermath diff A B      (report_cmd.h)
//   aftermath merge --out OUT DIR...                       (report_cmd.h)
//   aftermath inspect | aftermath reap                     (hygiene_cmd.h)
//   aftermath agent --coordinator H:P --token T            (harness/cluster/agent.h; srun starts
//   it) aftermath witness --proc PID:TICKS... --grace D         (harness/cluster/witness.h;
//   likewise)
//
// Exit status: 0 when every verdict is pass or xfail; 1 when any is fail,
// xpass or error; 2 for usage or scenario errors (then nothing is launched).
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "harness/cli/hygiene_cmd.h"
#include "harness/cli/inputs.h"
#include "harness/cli/pytest_cmd.h"
#include "harness/cli/report_cmd.h"
#include "harness/cli/run_cmd.h"
#include "harness/cli/scenarios_cmd.h"
#include "harness/cli/suggest.h"
#include "harness/cluster/agent.h"
#include "harness/cluster/witness.h"
#include "harness/core/shell_quote.h"
#include "harness/supervise/supervisor.h"

using namespace aftermath;

namespace {

// Everything after the first "--" is the job's command line, untouched: it
// goes to `job_command`, and `args` keeps what comes before.
std::vector<std::string> split_job_command(std::vector<char*>& args) {
  std::vector<std::string> job_command;
  for (size_t i = 1; i < args.size(); ++i) {
    if (std::string(args[i]) == "--") {
      for (size_t j = i + 1; j < args.size(); ++j) job_command.push_back(args[j]);
      args.resize(i);
      break;
    }
  }
  return job_command;
}

struct HygieneFlags {
  HygieneCliOptions options;
  bool json = false, dry_run = false, yes = false, all_users = false;
};

// `inspect` (and its former name `check`, kept for existing scripts) and `reap`.
std::pair<CLI::App*, CLI::App*> add_hygiene_commands(CLI::App& app, HygieneFlags& h) {
  auto* inspect = app.add_subcommand(
      "inspect",
      "is this machine clean now? GPUs, device-file holders, /dev/shm, orphans, zombies");
  inspect->alias("check");
  inspect->add_flag("--json", h.json, "JSON for CI");
  add_hygiene_options(inspect, h.options);
  auto* reap =
      app.add_subcommand("reap", "clean what inspect finds, safely (nothing without --yes)");
  reap->add_flag("--dry-run", h.dry_run, "show the plan only");
  reap->add_flag("--yes", h.yes, "carry the plan out");
  reap->add_flag("--all-users", h.all_users, "root only: other users' processes too");
  reap->add_flag("--json", h.json, "JSON for CI");
  add_hygiene_options(reap, h.options);
  return {inspect, reap};
}

}  // namespace

int main(int argc, char** argv) {
  RunInvocation inv;
  // What the user's shell gave us ignored, before we ignore anything: the
  // job starts with exactly that (nohup's SIGHUP, say), not our SIGPIPE.
  inv.inherited_ignored = ignored_signals_now();
  for (int i = 0; i < argc; ++i) inv.command_line += (i ? " " : "") + shell_quote(argv[i]);
  inv.argv.assign(argv, argv + argc);
  CLI::App app{"aftermath: fault injection and leftovers checks for multi-process training jobs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("aftermath ") + AFTERMATH_VERSION);
  app.footer(
      "Exit status: 0 when every verdict is pass, xfail or skipped (inspect: the machine is "
      "clean);\n"
      "1 when any is fail, xpass or error, the run was interrupted or a report could not be "
      "written\n"
      "(inspect/reap: something is left, or --require-gpu and the GPUs could not be inspected);\n"
      "2 for usage or scenario errors, and then nothing is launched.\n"
      "Reports: result.json, junit.xml, report.html, trace.json, summary.md under --out.");

  RunCliOptions run_options;
  auto* run = app.add_subcommand("run", "run scenario files, suites, or -- COMMAND as a job");
  add_run_options(run, run_options);

  RunCliOptions pytest_options;
  auto* pytest = app.add_subcommand(
      "pytest",
      "run a pytest suite as the job (-- PYTEST ARGS), judging what each test left behind");
  add_run_options(pytest, pytest_options, RunOptionsFor::Pytest);

  auto* validate = app.add_subcommand(
      "validate", "parse and validate scenario files and suites; launch nothing");
  std::vector<std::string> validate_inputs;
  validate
      ->add_option("inputs", validate_inputs, "scenario .yaml files, .suite files or directories")
      ->required();

  auto* list = app.add_subcommand("list", "list scenarios with description, tags and requirements");
  std::string list_dir = "scenarios";
  list->add_option("dir", list_dir, "folder of scenario files");

  auto* report = app.add_subcommand(
      "report", "re-render junit.xml, report.html, trace.json and summary.md from a result.json");
  std::string report_input, report_out;
  report->add_option("result", report_input, "result.json")->required();
  report->add_option("--out", report_out, "folder for the reports (default: beside result.json)");
  auto* merge = app.add_subcommand(
      "merge", "one run's reports from several runs' results (the shards of run --shard I/N)");
  std::vector<std::string> merge_inputs;
  std::string merge_out;
  merge->add_option("inputs", merge_inputs, "folders holding result.json, or result.json files")
      ->required();
  merge->add_option("--out", merge_out, "folder for the merged reports (created)")->required();
  auto* diff = app.add_subcommand("diff", "compare two runs check by check and timing by timing");
  std::string diff_a, diff_b;
  diff->add_option("a", diff_a, "the first result.json")->required();
  diff->add_option("b", diff_b, "the second result.json")->required();

  HygieneFlags hy;
  auto [inspect, reap] = add_hygiene_commands(app, hy);

  auto* agent = app.add_subcommand(
      "agent", "one node's part of a multi-node run (started by `aftermath run` through srun)");
  AgentOptions agent_options;
  agent->add_option("--coordinator", agent_options.coordinator, "host:port")->required();
  agent->add_option("--token", agent_options.token, "the run's token")->required();
  agent->add_option("--node", agent_options.node, "this node's index (default: $SLURM_NODEID)");

  auto* witness_cmd = app.add_subcommand("witness",
                                         "what is left of a node's job once its agent is gone "
                                         "(started by `aftermath run` through srun)");
  std::vector<std::string> witness_procs;
  std::string witness_grace = "1s";
  witness_cmd->add_option("--proc", witness_procs,
                          "PID:START_TICKS[:ROLE], a job process the agent saw alive");
  witness_cmd->add_option("--grace", witness_grace, "how long they may take to go (e.g. 1s)");

  std::vector<char*> args(argv, argv + argc);
  inv.job_command = split_job_command(args);
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::ParseError& e) {
    // `run PROGRAM --its-option`: CLI11 stops at the program's option; say
    // what was meant rather than that the option is unknown.
    std::vector<std::string> words(argv + 1, argv + argc);
    if (inv.job_command.empty() && !words.empty() && words[0] == "run") {
      for (size_t i = 1; i < words.size(); ++i) {
        if (looks_like_program(words[i])) {
          std::cerr << "aftermath run: " << double_dash_hint(words, i) << "\n";
          return 2;
        }
      }
    }
    if (std::string hint = mistyped_hint(app, words); !hint.empty()) {
      std::cerr << "aftermath: " << hint << "\n";
      return 2;
    }
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  if (list->parsed()) return cmd_list(list_dir);
  if (validate->parsed()) return cmd_validate(validate_inputs);
  if (inspect->parsed()) return cmd_inspect(hy.json, hy.options);
  if (reap->parsed()) return cmd_reap(hy.dry_run, hy.yes, hy.all_users, hy.json, hy.options);
  if (report->parsed()) {
    std::string dir = report_out;
    if (dir.empty()) dir = std::filesystem::absolute(report_input).parent_path().string();
    return cmd_report(report_input, dir);
  }
  if (merge->parsed()) return cmd_merge(merge_inputs, merge_out, inv.command_line);
  if (diff->parsed()) return cmd_diff(diff_a, diff_b);
  if (agent->parsed()) {
    agent_options.bin_dir = bin_dir();
    return run_agent(agent_options);
  }
  if (witness_cmd->parsed()) return cmd_witness(witness_procs, witness_grace);
  if (pytest->parsed())
    return cmd_pytest(pytest_options, inv,
                      (std::filesystem::path(bin_dir()).parent_path() / "python").string());
  return cmd_run(run_options, inv);
}
