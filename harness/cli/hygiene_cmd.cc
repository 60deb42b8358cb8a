#include "harness/cli/hygiene_cmd.h"

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "harness/hygiene/hygiene.h"
#include "harness/hygiene/reap.h"
#include "harness/observe/nvml.h"
#include "harness/observe/probe.h"
#include "harness/os/expected.h"
#include "reports/inspect.h"

namespace aftermath {

namespace {

std::string program_dir() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : p.parent_path().string();
}

// The library's options from the command line's, with the device side they
// point at.
struct Built {
  HygieneOptions options;
  std::unique_ptr<DlNvml> nvml;
  std::unique_ptr<ProcessProbeRunner> probe;
};

// Fills `b` from `c`; an error names the bad value (a duration) or option.
Status build(const HygieneCliOptions& c, Built& b) {
  auto probe_timeout = parse_duration(c.probe_timeout);
  auto min_age = parse_duration(c.shm_min_age);
  auto tmp_min_age = parse_duration(c.tmp_min_age);
  if (!probe_timeout || !min_age || !tmp_min_age) {
    const std::string& bad = !probe_timeout ? c.probe_timeout
                             : !min_age     ? c.shm_min_age
                                            : c.tmp_min_age;
    return Error{"'" + bad + "' is not a duration (e.g. 500ms, 20s, 2m)"};
  }
  if (auto p = PathPattern::parse(c.device_pattern); !p)
    return Error{"--device-pattern: " + p.error().what};
  HygieneOptions& o = b.options;
  o.proc_root = c.proc_root;
  o.shm_dir = c.shm_dir;
  o.device_pattern = c.device_pattern;
  for (int p : c.orphan_parents) o.orphan_parents.insert(p);
  o.shm_min_age = *min_age;
  o.tmp_min_age = *tmp_min_age;
  if (c.tmp_dir == "auto") {
    const char* env = ::getenv("TMPDIR");
    o.tmp_dir = job_tmp_dir(env ? std::optional<std::string>(env) : std::nullopt);
  } else {
    o.tmp_dir = c.tmp_dir == "none" ? "" : c.tmp_dir;
  }
  o.nvml_pid_level = c.nvml_pid_level;
  o.require_gpu = c.require_gpu;
  o.cgroup_dir = c.cgroup_dir == "none" ? "" : c.cgroup_dir;
  b.nvml = std::make_unique<DlNvml>();
  o.nvml = b.nvml.get();
  if (!c.no_probe) {
    ProbeCommand pc = default_probe_command(program_dir());
    if (!c.probe.empty()) pc.argv = {c.probe};
    pc.deadline = *probe_timeout;
    b.probe = std::make_unique<ProcessProbeRunner>(pc);
    o.probe = b.probe.get();
  }
  return {};
}

// build(), or its error printed as "aftermath CMD: ..."; false then.
bool build_or_say(const char* cmd, const HygieneCliOptions& c, Built& b) {
  Status built = build(c, b);
  if (!built) std::fprintf(stderr, "aftermath %s: %s\n", cmd, built.error().what.c_str());
  return built.ok();
}

}  // namespace

void add_hygiene_options(CLI::App* sub, HygieneCliOptions& o) {
  sub->add_option("--proc-root", o.proc_root, "procfs to inspect")->capture_default_str();
  sub->add_option("--shm-dir", o.shm_dir, "shared-memory folder to inspect")->capture_default_str();
  sub->add_option("--device-pattern", o.device_pattern,
                  "device files that count as holding a GPU: a glob, or re:REGEX")
      ->capture_default_str();
  sub->add_option("--orphan-parent", o.orphan_parents,
                  "a subreaper pid whose children count as orphans too (besides init)");
  sub->add_flag("--no-probe", o.no_probe, "skip the per-GPU allocation probe");
  sub->add_option("--probe", o.probe,
                  "the probe program (default: aftermath-probe beside this one)");
  sub->add_option("--probe-timeout", o.probe_timeout, "deadline of each probe child")
      ->capture_default_str();
  sub->add_option("--shm-min-age", o.shm_min_age,
                  "younger /dev/shm entries are leftovers only when their creator is provably gone")
      ->capture_default_str();
  sub->add_option("--tmp-dir", o.tmp_dir,
                  "temp dir whose PyTorch/multiprocessing residue (pymp-*, torch-shm-dir-*, "
                  "torchelastic_*, aftermath-torchrun-*) is judged: auto ($TMPDIR, else /tmp), a "
                  "directory, or none")
      ->capture_default_str();
  sub->add_option("--tmp-min-age", o.tmp_min_age,
                  "younger temp-dir residue is a leftover only when its maker is provably gone")
      ->capture_default_str();
  sub->add_option("--nvml-pid-level", o.nvml_pid_level,
                  "PID-namespace level of NVML's pids below the proc root's (0: the same)")
      ->capture_default_str();
  sub->add_option("--cgroup-dir", o.cgroup_dir,
                  "where host_oom's fault cgroups are made: auto (found as a run finds it), a "
                  "directory, or none")
      ->capture_default_str();
  sub->add_flag("--require-gpu", o.require_gpu,
                "fail (exit 1) when the GPUs could not be inspected (no driver, no NVML), rather "
                "than report the rest clean: for GPU runners' pre- and post-steps");
}

int cmd_inspect(bool json, const HygieneCliOptions& c) {
  Built b;
  if (!build_or_say("inspect", c, b)) return 2;
  InspectReport r = inspect_machine(b.options);
  if (json)
    std::printf("%s\n", inspect_json(r).dump(2).c_str());
  else
    std::fputs(inspect_table(r).c_str(), stdout);
  return r.clean() ? 0 : 1;
}

int cmd_reap(bool dry_run, bool yes, bool all_users, bool json, const HygieneCliOptions& c) {
  if (all_users && ::geteuid() != 0) {
    std::fprintf(stderr, "aftermath reap: --all-users needs root\n");
    return 2;
  }
  Built b;
  if (!build_or_say("reap", c, b)) return 2;
  ReapOptions ro;
  ro.all_users = all_users;
  ro.uid = ::getuid();
  InspectReport before = inspect_machine(b.options);
  ReapPlan plan = plan_reap(before, ro);
  const bool act = yes && !dry_run;
  if (!act) {
    if (json) {
      std::printf("%s\n", nlohmann::json{{"before", inspect_json(before)},
                                         {"plan", reap_plan_json(plan)},
                                         {"executed", false},
                                         {"after", nullptr}}
                              .dump(2)
                              .c_str());
    } else {
      std::fputs(inspect_table(before).c_str(), stdout);
      std::fputs(("\n" + format_reap_plan(plan, false)).c_str(), stdout);
      if (!plan.steps.empty())
        std::printf("\n%s\n", dry_run ? "Dry run: nothing was done."
                                      : "Nothing was done: pass --yes to do it.");
    }
    return before.clean() ? 0 : 1;
  }
  ReapResult done = execute_reap(std::move(plan), b.options, ro);
  if (json) {
    std::printf("%s\n", nlohmann::json{{"before", inspect_json(before)},
                                       {"plan", reap_plan_json(done.plan)},
                                       {"executed", true},
                                       {"after", inspect_json(done.after)}}
                            .dump(2)
                            .c_str());
  } else {
    std::fputs(format_reap_plan(done.plan, true).c_str(), stdout);
    std::printf("\nVerified with check:\n");
    std::fputs(inspect_table(done.after).c_str(), stdout);
  }
  return done.after.clean() ? 0 : 1;
}

}  // namespace aftermath
