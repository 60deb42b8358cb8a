// Runs scenarios end to end: supervise the job, derive the histories, run the
// checks, decide the verdict, compute the timings. What the CLI calls.
#pragma once

#include <functional>
#include <utility>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/result.h"
#include "harness/scenario/scenario.h"
#include "harness/supervise/supervisor.h"

namespace aftermath {

struct RunOptions {
  std::string out_dir = "aftermath-out";
  std::string reaper_path;
  std::string containment = "auto";
  std::string shm = "auto";   // auto | private | host (see SupervisorOptions::shm)
  bool keep_leaks = false;
  // Command-line overrides of every scenario's values.
  std::optional<Nanos> timeout;
  std::optional<Nanos> grace;
  std::optional<Nanos> settle;
  std::optional<std::uint64_t> seed;
  std::string command_line;   // how the harness was invoked (for the repro line)
  std::vector<std::string> fault_texts;  // --fault values, for the repro line
  std::string self_path;      // the aftermath binary (for the repro line)
  const volatile bool* interrupted = nullptr;
  std::function<void(const Scenario&, const LiveStatus&)> on_status;
};

// Runs one scenario. Never throws for a job's misbehaviour; a failure of the
// harness itself becomes verdict error with ScenarioResult::error set.
// `run_index` / `runs`: which of --repeat N runs this is (its reports go to
// <out>/<name>/run-<i> when runs > 1).
ScenarioResult run_scenario(const Scenario& scenario, const RunOptions& options, int run_index = 0,
                            int runs = 1);

struct BatchOptions {
  int repeat = 1;  // each scenario this many times
  int jobs = 1;    // scenarios side by side (each job has its own PID namespace and /dev/shm)
};

// Runs every scenario `repeat` times on `jobs` threads; results in input
// order (scenario, then run). `on_done` is called (serialised) as each ends.
std::vector<ScenarioResult> run_batch(const std::vector<Scenario>& scenarios, const RunOptions& o,
                                      const BatchOptions& b,
                                      const std::function<void(const ScenarioResult&)>& on_done);

// Statistics over the repeated runs of each scenario.
std::vector<Aggregate> aggregate(const std::vector<ScenarioResult>& results);

// The 95% Wilson score interval for k successes in n trials.
std::pair<double, double> wilson_interval(int k, int n);

// Facts about this machine for the report: kernel, glibc, compiler, /dev/shm
// size and usage, ulimit -n, containment available.
std::map<std::string, std::string> environment_facts();

// FNV-1a 64, hex.
std::string fnv1a_hex(std::string_view text);

// Quotes an argument for a POSIX shell when it needs it.
std::string shell_quote(const std::string& arg);

}  // namespace aftermath
