// Runs scenarios end to end: supervise the job, derive the histories, run the
// checks, decide the verdict, compute the timings. What the CLI calls.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/result.h"
#include "harness/scenario/scenario.h"
#include "harness/supervise/supervisor.h"

namespace aftermath {

// The command line's overrides of every scenario's values.
struct Overrides {
  std::optional<Nanos> timeout;
  std::optional<Nanos> grace;        // --grace 500ms: every role not named otherwise
  std::map<Role, Nanos> role_grace;  // --grace '{helper: 3s}'
  std::optional<Nanos> settle;
  std::optional<std::uint64_t> seed;
};

// What a result's repro line repeats of how the harness was invoked.
struct ReproLine {
  std::string self_path;                 // the aftermath binary
  std::string command_line;              // the whole invocation
  std::string grace_text;                // --grace as given
  std::vector<std::string> fault_texts;  // --fault values
  // The -- COMMAND options that change its verdict (--expect-exit 1,
  // --expect-fail no_orphans, --check ..., --name ...), as given: the repro
  // line repeats them, so rerunning it judges the same way.
  std::vector<std::string> verdict_options;
};

struct RunOptions {
  std::string out_dir = "aftermath-out";
  // The sub-structs go to the supervisor as they are: a new option of one of
  // them is one field there and its reader, nothing copied in between.
  Containment contain;
  // Launch scenarios whose `requires:` are not met here (normally skipped).
  bool ignore_requirements = false;
  // The device side. By default each run loads NVML itself (dlopen; absent
  // on a machine without a driver, and then the device checks skip) and
  // probes with aftermath-probe beside the reaper (devices.nvml and
  // devices.probe null). Tests put doubles in `devices`. `device` false: no
  // device observation at all.
  bool device = true;
  DeviceSources devices;
  // Where device OOM faults look for a GPU and a CUDA runtime and find their
  // tools, host OOM's cgroup, a multi-node agent's network cut and end;
  // tests plant their own.
  InjectTools inject;
  Overrides overrides;
  ReproLine repro;
  const volatile bool* interrupted = nullptr;
  std::function<void(const Scenario&, const LiveStatus&)> on_status;
  NodeHooks node;  // a multi-node agent's hooks into its node's run
  // The run's Python (--python, resolved): the facts of a job that runs no
  // Python of its own are this one's (observe/python_probe.h). Empty: none.
  std::string python;
  // The values of ${NAME} the scenarios were parsed with (AFTERMATH_BIN ...),
  // for a multi-node run's agents to parse them with again.
  std::map<std::string, std::string> scenario_vars;
  // The scenario's report folder as it is; empty: <out_dir>/<name>[/run-K].
  std::string exact_dir;
  // Runs a multi-node scenario (`nodes:` 2 or more): set by the program that
  // can (harness/cluster); without it such a scenario is a harness error.
  std::function<ScenarioResult(const Scenario&, const RunOptions&, int run_index, int runs)>
      multinode;
};

// The pieces of run_scenario a multi-node coordinator shares with it.
// The scenario with the command line's overrides applied.
Scenario with_overrides(const Scenario& input, const RunOptions& o);
// The seed: --seed, else the scenario's, else a random one.
std::uint64_t choose_seed(const Scenario& sc, const RunOptions& o);
// What the result says before the job runs: the scenario, its seed, how to
// reproduce it, where its reports go.
ScenarioResult begin_result(const Scenario& sc, const RunOptions& o, std::uint64_t seed,
                            int run_index, int runs);
// From the supervised timeline to the verdict: the histories and the
// processes' logs here, then check/judge.h's judge (checks, verdict, timings).
void judge_run(ScenarioResult& r, const Scenario& sc, const RunOptions& o);
// Verdict error for a failure of the harness itself.
ScenarioResult harness_error(ScenarioResult r, std::string why);

// Runs one scenario. Never throws for a job's misbehaviour; a failure of the
// harness itself becomes verdict error with ScenarioResult::error set.
// `run_index` / `runs`: which of --repeat N runs this is (its reports go to
// <out>/<name>/run-<i> when runs > 1).
ScenarioResult run_scenario(const Scenario& scenario, const RunOptions& options, int run_index = 0,
                            int runs = 1);

struct ScenarioBatchOptions {
  int repeat = 1;  // each scenario this many times
  int jobs = 1;    // scenarios side by side (each job has its own PID namespace and /dev/shm)
};

// Runs every scenario `repeat` times on `jobs` threads; results in input
// order (scenario, then run). `on_done` is called (serialised) as each ends.
std::vector<ScenarioResult> run_batch(const std::vector<Scenario>& scenarios, const RunOptions& o,
                                      const ScenarioBatchOptions& b,
                                      const std::function<void(const ScenarioResult&)>& on_done);

}  // namespace aftermath
