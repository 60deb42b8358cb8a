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
  std::optional<std::uint64_t> ignored_signals;  // see SupervisorOptions
  // Launch scenarios whose `requires:` are not met here (normally skipped).
  bool ignore_requirements = false;
  // The device side. By default each run loads NVML itself (dlopen; absent
  // on a machine without a driver, and then the device checks skip) and
  // probes with aftermath-probe beside the reaper. Tests put doubles here.
  bool device = true;
  Nvml* nvml = nullptr;
  ProbeRunner* probe = nullptr;
  std::string device_pattern;  // empty: /dev/nvidia*
  // Where device OOM faults look for a GPU and a CUDA runtime, and find their
  // tools (see SupervisorOptions); tests plant their own.
  std::string dev_root = "/dev";
  std::vector<std::string> cudart_candidates;
  std::string tools_dir;
  std::string cgroup_parent;  // host_oom by cgroup: see SupervisorOptions
  // Command-line overrides of every scenario's values.
  std::optional<Nanos> timeout;
  std::optional<Nanos> grace;             // --grace 500ms: every role not named otherwise
  std::map<Role, Nanos> role_grace;       // --grace '{helper: 3s}'
  std::string grace_text;                 // as given, for the repro line
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

// The per-process log files the job's processes reported ("aftermath.logs"
// events; the sender's pid is the kernel's) and that exist, by pid, relative
// to out_dir. Without a PID namespace (containment "subreaper"), a file
// <out_dir>/logs/*-<pid>.out/.err of a job process counts too.
std::map<int, ScenarioResult::ProcessLogs> find_process_logs(const Timeline& tl,
                                                            const std::vector<ProcessHistory>& procs,
                                                            const std::string& out_dir);

// The job's output as the checks (job_exit's output_regex) and reports
// (stderr tail) read it, now that announced processes write their own files:
// the shared stdout/stderr, then each process's own files (deepest first,
// then by start; the top process last, so a tail ends with what it said),
// kept to the last kJobOutputBytes of each stream.
constexpr std::size_t kJobOutputBytes = 64 * 1024;
void merge_process_output(Timeline& tl, const std::vector<ProcessHistory>& procs,
                          const std::map<int, ScenarioResult::ProcessLogs>& logs,
                          const std::string& out_dir);

// What the job reported in its "torch_config" events, merged over processes:
// field -> value (numbers written out); distinct values in report order,
// ", "-joined. Nothing the job did not say.
std::map<std::string, std::string> job_environment_from(const Timeline& tl);

// Facts about this machine for the report: kernel, glibc, compiler, /dev/shm
// size and usage, ulimit -n, containment available.
std::map<std::string, std::string> environment_facts();

// FNV-1a 64, hex.
std::string fnv1a_hex(std::string_view text);

// Quotes an argument for a POSIX shell when it needs it.
std::string shell_quote(const std::string& arg);

}  // namespace aftermath
