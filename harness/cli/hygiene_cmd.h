// The `inspect` and `reap` subcommands: thin glue over harness/hygiene, with
// reports/inspect.h rendering what they print.
//
//   aftermath inspect [--json] [--require-gpu] [HYGIENE OPTIONS]   (also as `aftermath check`)
//   aftermath reap [--dry-run] [--yes] [--all-users] [--json] [--require-gpu] [HYGIENE OPTIONS]
//
// HYGIENE OPTIONS (add_hygiene_options): --proc-root, --shm-dir,
// --device-pattern, --orphan-parent PID (repeatable), --no-probe,
// --probe PROGRAM, --probe-timeout DURATION, --shm-min-age DURATION,
// --tmp-dir DIR|auto|none, --tmp-min-age DURATION, --nvml-pid-level N,
// --cgroup-dir.
//
// Exit status: 0 clean (after reaping, for reap); 1 not clean, or (with
// --require-gpu) the GPUs could not be inspected; 2 usage. `reap` without
// --yes (or with --dry-run) does nothing and exits as `inspect` would: 1 when
// there is something to clean.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace aftermath {

struct HygieneCliOptions {
  std::string proc_root = "/proc";
  std::string shm_dir = "/dev/shm";
  std::string device_pattern = "/dev/nvidia*";
  std::vector<int> orphan_parents;  // besides init (1)
  bool no_probe = false;
  std::string probe;  // default: aftermath-probe beside this program
  std::string probe_timeout = "20s";
  std::string shm_min_age = "30s";
  std::string tmp_dir = "auto";  // auto: $TMPDIR, else /tmp; none: not looked at
  std::string tmp_min_age = "30s";
  int nvml_pid_level = 0;
  std::string cgroup_dir = "auto";
  // A GPU runner's pre/post step must not pass blind: the GPUs not
  // inspected (no driver, NVML failed) is a failure, not a skip.
  bool require_gpu = false;
};

// Registers the options shared by `inspect` and `reap` on `sub`.
void add_hygiene_options(CLI::App* sub, HygieneCliOptions& options);

// `aftermath inspect`: is this machine clean now? Prints the table (or JSON).
int cmd_inspect(bool json, const HygieneCliOptions& options);

// `aftermath reap`: shows the plan; does it only with `yes` and without
// `dry_run`; `all_users` needs root. Verifies the result by inspecting again.
int cmd_reap(bool dry_run, bool yes, bool all_users, bool json, const HygieneCliOptions& options);

}  // namespace aftermath
