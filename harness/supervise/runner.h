// Runs scenarios end to end: supervise the job, derive the histories, run the
// checks, decide the verdict, compute the timings. What the CLI calls.
#pragma once

#include <functional>
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
ScenarioResult run_scenario(const Scenario& scenario, const RunOptions& options);

// Facts about this machine for the report: kernel, glibc, compiler, /dev/shm
// size and usage, ulimit -n, containment available.
std::map<std::string, std::string> environment_facts();

// FNV-1a 64, hex.
std::string fnv1a_hex(std::string_view text);

// Quotes an argument for a POSIX shell when it needs it.
std::string shell_quote(const std::string& arg);

}  // namespace aftermath
