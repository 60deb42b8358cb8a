// The `run` subcommand: scenario files, suites or `-- COMMAND` run as jobs,
// every report written under --out.
//
//   aftermath run [OPTIONS] SCENARIO.yaml|SUITE.suite|DIR...
//   aftermath run [OPTIONS] -- COMMAND [ARGS...]
//
// Exit status: 0 when every verdict is pass, xfail or skipped; 1 when any is
// fail, xpass or error, the run was interrupted, or a report could not be
// written; 2 for usage or scenario errors (then nothing is launched).
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/os/expected.h"

namespace aftermath {

// The `run` options as given on the command line.
struct RunCliOptions {
  std::vector<std::string> inputs;  // scenario files, suites, folders
  std::string out_dir = "aftermath-out";
  std::string timeout, grace, settle;  // durations as given ("" when not)
  std::string contain = "auto";
  std::string shm = "auto";
  bool keep_leaks = false;
  bool ignore_requires = false;
  bool dry_run = false;
  int repeat = 1;
  int jobs = 1;
  std::optional<std::uint64_t> seed;
  std::vector<std::string> faults;  // --fault, -- COMMAND only
  // Expectations of an ad-hoc command (a scenario file states its own).
  std::string expect_exit, expect_signal, expect_output, expect_fail;
  std::vector<std::string> checks;  // --check
  std::string name;                 // --name, -- COMMAND only
  // Added to the environment of -- COMMAND's job (set by `aftermath pytest`).
  std::map<std::string, std::string> job_env;
  std::string shard;  // --shard I/N ("" when not)
  // --python, as given (repeatable): the interpreters of ${PYTHON}; with two
  // or more, every scenario runs once on each (see cmd_run).
  std::vector<std::string> pythons;
  bool slurm = false;  // --slurm: outside an allocation, ask Slurm for one
};

// --shard I/N: the I-th (1-based) of N slices of a run's scenarios (Shard,
// core/types.h); the error says what is wrong.
Expected<Shard> parse_shard(const std::string& text);
// The positions (into a list of `total` scenarios, in input order) that
// shard s runs: every N-th from I-1, so consecutive scenarios (a suite's
// slow neighbours) spread over the shards, and the N shards together run
// each scenario exactly once, whatever N.
std::vector<std::size_t> shard_positions(std::size_t total, const Shard& s);

// How this program was invoked, beyond the options.
struct RunInvocation {
  std::vector<std::string> job_command;  // everything after "--", untouched
  std::string command_line;              // the whole invocation, shell-quoted
  std::uint64_t inherited_ignored = 0;   // signals the caller's shell left ignored
  std::vector<std::string> argv;         // as invoked, argv[0] included
};

// --slurm outside an allocation: the command that runs this same invocation
// inside a new one of `nodes` nodes (salloc -N<nodes> --quiet <self> run ...,
// without --slurm), `salloc` and `self` being absolute paths.
std::vector<std::string> salloc_command(const std::string& salloc, const std::string& self,
                                        const std::vector<std::string>& argv, int nodes);

// Registers the `run` options on `run`, writing into `options`; for
// `aftermath pytest` without what only scenario files take (--shard,
// --slurm, scenario inputs).
enum class RunOptionsFor { Run, Pytest };
void add_run_options(CLI::App* run, RunCliOptions& options,
                     RunOptionsFor which = RunOptionsFor::Run);

// The default name of a `-- COMMAND` scenario: "cmd-" and the script it runs
// (its last argument naming a .py or .sh file), else its program, with
// characters a name may not hold as '_': `python3 train_ddp.py` is
// "cmd-train_ddp.py", so two jobs of one CI run do not share a name.
std::string command_name(const std::vector<std::string>& command);

// Validates everything, launches nothing on a problem (exit 2), else runs,
// writes result.json, junit.xml, report.html, trace.json and summary.md under
// --out and prints the verdict table. With --python given more than once the
// whole run is made once per interpreter, each one's reports under
// --out/<torch-VERSION>/, and versions.md and versions.json under --out put
// them side by side (a column per PyTorch version; `aftermath diff` between
// two of them tells what changed); -- COMMAND must then name ${PYTHON}. with --shard, result.json's
// "shard" records the slice (index, count, total, positions, names) for `aftermath merge`. Installs
// SIGINT/SIGTERM/SIGHUP handlers that interrupt the run (exit 1) and ignores SIGPIPE.
int cmd_run(const RunCliOptions& options, const RunInvocation& invocation);

}  // namespace aftermath
