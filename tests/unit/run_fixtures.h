// A hand-made run on the timeline, shared by the tests of the default checks
// (checks_test, tmp_checks_test), the verdict and recovery timings
// (verdict_test) and the process histories (timeline_test): a skeleton whose
// top process lives [1ms, 700ms], the clean run on it, leaky variants, and a
// check run the way run_checks runs it.
#pragma once

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/check/checks.h"
#include "harness/core/timeline.h"
#include "harness/scenario/scenario.h"
#include "tests/support/units.h"

namespace aftermath::testing_run {

using testing_units::msec;

constexpr int kInit = 10;  // the reaper
constexpr int kTop = 100;  // the job's top process
constexpr Nanos kTopStart = msec(1);
constexpr Nanos kTopExit = msec(700);
constexpr Nanos kTeardown = msec(5000);
constexpr Nanos kDone = msec(5100);

// A scenario as the parser would leave it: every known check configured.
inline Scenario make_scenario() {
  Scenario sc;
  sc.name = "unit";
  sc.file = "<unit test>";
  sc.grace = 1 * kSecond;
  sc.timeouts.job = 10 * kSecond;
  sc.timeouts.settle = 3 * kSecond;
  sc.timeouts.teardown = 2 * kSecond;
  for (const auto& name : default_checks()) sc.checks[name] = CheckConfig{};
  return sc;
}

// The skeleton of a run: the top lives [1ms, 700ms] and exits 0 by itself,
// a baseline /dev/shm entry exists before launch, teardown at 5s, done at 5.1s.
// Pass std::nullopt as top_exit for a top that never exits.
inline Timeline skeleton(std::optional<Nanos> top_exit = kTopExit,
                         std::optional<Outcome> outcome = Outcome::exited(0)) {
  Timeline tl;
  tl.facts.top_pid = kTop;
  tl.facts.init_pid = kInit;
  tl.facts.containment = JobContainment::PidNamespace;
  tl.add(obs::shm_add(0, "baseline_seg", 1000, /*baseline=*/true));
  tl.add(obs::phase(0, RunPhase::Launch));
  tl.add(obs::proc_start(kTopStart, kTop, kInit, "launcher", "launcher --n 2", Role::Launcher, 0, 0,
                         'R'));
  tl.add(obs::phase(msec(2), RunPhase::Running));
  if (top_exit) {
    tl.facts.top_outcome = outcome;
    tl.add(obs::proc_exit(*top_exit, kTop, outcome));
    tl.add(obs::proc_gone(*top_exit + msec(1), kTop));
    if (*top_exit < kTeardown) {
      tl.add(obs::phase(*top_exit + msec(10), RunPhase::JobExited));
      tl.add(obs::phase(*top_exit + msec(10), RunPhase::Settle));
    }
  }
  tl.add(obs::phase(kTeardown, RunPhase::Teardown));
  tl.add(obs::phase(kDone, RunPhase::Done));
  return tl;
}

// A process's life: start, then (optionally) exit and reap.
inline void life(Timeline& tl, int pid, int ppid, Nanos start, std::optional<Nanos> exit,
                 std::optional<Nanos> gone, std::string comm = "worker", Role role = Role::Worker) {
  tl.add(obs::proc_start(start, pid, ppid, comm, comm + " --rank " + std::to_string(pid), role, 1,
                         0, 'S'));
  if (exit) tl.add(obs::proc_exit(*exit, pid, Outcome::exited(0)));
  if (gone) tl.add(obs::proc_gone(*gone, pid));
}

// The clean run: the skeleton plus a worker that exits before the top and a
// /dev/shm segment created and removed by the job.
inline Timeline clean_run() {
  Timeline tl = skeleton();
  life(tl, 101, kTop, msec(20), msec(600), msec(601));
  tl.add(obs::shm_add(msec(30), "psm_a", 4096));
  tl.add(obs::shm_remove(msec(500), "psm_a"));
  return tl;
}

inline Timeline sorted(Timeline tl) {
  std::stable_sort(tl.observations.begin(), tl.observations.end(),
                   [](const Observation& a, const Observation& b) { return a.t < b.t; });
  return tl;
}

// Runs one check the way run_checks does, on the time-ordered timeline.
inline CheckResult check(const std::string& name, const Scenario& sc, const Timeline& raw) {
  Timeline tl = sorted(raw);
  auto procs = build_histories(tl);
  auto in = make_check_input(sc, tl, procs);
  return run_check(name, in);
}

inline std::vector<int> pids_of(const nlohmann::json& arr) {
  std::vector<int> out;
  for (const auto& j : arr) out.push_back(j.at("pid").get<int>());
  return out;
}

inline const ProcessHistory& history(const std::vector<ProcessHistory>& hs, int pid) {
  for (const auto& h : hs)
    if (h.pid == pid) return h;
  throw std::runtime_error("no history for pid " + std::to_string(pid));
}

// The skeleton plus /dev/shm entries the job creates and leaves (and one it
// removes).
inline Timeline leaky_run() {
  Timeline tl = skeleton();
  tl.add(obs::shm_add(msec(10), "leak_a", 4096));
  tl.add(obs::shm_add(msec(20), "leak_b", 100));
  tl.add(obs::shm_resize(msec(30), "leak_b", 8192));
  tl.add(obs::shm_add(msec(40), "tmp", 10));  // added then removed: not a leak
  tl.add(obs::shm_remove(msec(50), "tmp"));
  return tl;
}

// The skeleton plus PyTorch residue the job left in its temp dir, one entry of
// it reclaimed by the harness.
inline Timeline tmp_leaky_run() {
  Timeline tl = skeleton();
  tl.add(obs::tmp_left(kTeardown + msec(50), "/tmp/pymp-k2x9ab", 0, 1000, TmpKind::Pymp));
  tl.add(obs::tmp_left(kTeardown + msec(50), "/tmp/torch-shm-dir-Q1w2E3", 0, 1000,
                       TmpKind::TorchShmDir));
  tl.add(obs::tmp_left(kTeardown + msec(50), "/tmp/torchelastic_ab_c", 6144, 0,
                       TmpKind::Torchelastic));
  tl.add(obs::tmp_reclaim(kTeardown + msec(51), "/tmp/pymp-k2x9ab", 0));
  return tl;
}

}  // namespace aftermath::testing_run
