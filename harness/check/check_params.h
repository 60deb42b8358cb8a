// The typed parameters of the checks that take any, beside `grace` (which
// every check takes, in CheckConfig). The registry (registry.h) parses a
// scenario's `checks: {NAME: {...}}` map into these once, at load time, and
// stores them in CheckConfig::params; the checks, and the supervisor for the
// ones it needs while the job runs, read them back through check_params().
#pragma once

#include <any>
#include <cstdint>
#include <optional>
#include <string>

#include "harness/core/types.h"
#include "harness/scenario/scenario.h"

namespace aftermath {

// died_with_agent: in a multi-node run, no job process of a node outlives
// that node's agent (judged by the coordinator, which alone sees an agent
// die). Opt-in by name, on in every multi-node run unless set false.
inline constexpr const char* kDiedWithAgent = "died_with_agent";

// job_exit: what the job's top process should end with. Default: exited(0).
struct JobExitParams {
  static constexpr const char* kCheck = "job_exit";
  std::optional<int> code;                  // expected exit code
  std::optional<int> signal;                // expected killing signal (then code is not expected)
  std::optional<std::string> output_regex;  // ECMAScript regex searched in stdout+stderr
};

// no_zombies: how often the job's launcher reaps its children (torchrun's is
// read from its command line): a zombie under it may wait that long more.
struct NoZombiesParams {
  static constexpr const char* kCheck = "no_zombies";
  std::optional<Nanos> launcher_poll;
};

// no_hang: a hang is declared once no job process has made progress for this
// long (no start or exit, no event or point, no 1 KiB read or written, no CPU
// time beyond what a poller uses); none: only the job's deadline.
struct NoHangParams {
  static constexpr const char* kCheck = "no_hang";
  std::optional<Nanos> stall;
  // Once a job process other than the launcher failed (exited non-zero or by
  // a signal) while the launcher lives, only the launcher's own work and
  // processes starting or ending count as progress: a launcher that neither
  // reacts nor ends is hung, however busy the survivors are.
  bool after_failure = false;
  // How long the hang's diagnosis (gdb and py-spy on every live process) may
  // take, each process and all together; nullopt: 10 s each, 30 s in all.
  std::optional<Nanos> diagnose;
};

// memory_growth (memory_checks.h).
struct MemoryGrowthParams {
  static constexpr const char* kCheck = "memory_growth";
  double max_kb_per_step = 256;  // fail above this slope (KB per step)
  std::string field =
      "pss_kb";              // the event field judged: pss_kb or rss_kb (any numeric field works)
  long long skip_steps = 0;  // warm-up: points with step <= skip_steps are left out
  int min_points = 4;        // a process with fewer points is not judged (listed as such)
  std::optional<Role> role;  // judge only processes of this role (e.g. worker); default: all
};

// device_memory_released (device_checks.h).
struct DeviceMemoryParams {
  static constexpr const char* kCheck = "device_memory_released";
  std::int64_t tolerance_bytes = 64ll << 20;  // above baseline that still counts as released
  Nanos deadline = 10 * kSecond;              // from DeviceTimeline::origin
};

// The parameters a check's configuration holds, or P's defaults when it holds
// none (or, by a broken invariant, another type).
template <typename P>
const P& check_params(const CheckConfig& cfg) {
  static const P kDefaults{};
  const P* p = std::any_cast<P>(&cfg.params);
  return p != nullptr ? *p : kDefaults;
}

// The parameters of P's check in the scenario; the defaults when the scenario
// has no entry for it.
template <typename P>
const P& check_params(const Scenario& sc) {
  static const P kDefaults{};
  auto it = sc.checks.find(P::kCheck);
  return it == sc.checks.end() ? kDefaults : check_params<P>(it->second);
}

// For building a scenario in code (the CLI's `run -- CMD`, tests): P's
// parameters in its check's entry, made (as defaults) when absent.
template <typename P>
P& mutable_check_params(Scenario& sc) {
  std::any& a = sc.checks[P::kCheck].params;
  if (std::any_cast<P>(&a) == nullptr) a = P{};
  return *std::any_cast<P>(&a);
}

}  // namespace aftermath
