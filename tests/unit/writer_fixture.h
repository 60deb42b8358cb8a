// Shared by the golden tests of the report writers (json_test, junit_test): a
// realistic run built by hand, and the golden files their output is compared
// with.
//
// Golden files: tests/data/golden/result.json and tests/data/golden/junit.xml
// hold the normalised output for the hand-made run (pids, times, paths and
// timestamps replaced by "*", so only the shape and the stable content is
// pinned). After an intended change of either format, regenerate them with
//
//   AFTERMATH_UPDATE_GOLDEN=1 ./unit_tests --gtest_filter='Reports*Golden*'
//
// and review the diff: it is the format change that consumers will see.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness/core/result.h"
#include "harness/core/timeline.h"
#include "harness/core/types.h"
#include "tests/support/files.h"

#ifndef AFTERMATH_TEST_DATA
#error "AFTERMATH_TEST_DATA must be defined as the absolute path of tests/data"
#endif

namespace aftermath::testing_writers {

constexpr Nanos ms(double v) { return static_cast<Nanos>(v * 1e6); }

// Real wall-clock time, so the golden comparison proves timestamps are
// normalised rather than accidentally stable.
inline std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

inline ProcessHistory proc(int pid, int ppid, int depth, std::string comm, std::string cmdline,
                           Role role, Nanos started) {
  ProcessHistory p;
  p.pid = pid;
  p.first_ppid = ppid;
  p.last_ppid = ppid;
  p.depth = depth;
  p.comm = std::move(comm);
  p.cmdline = std::move(cmdline);
  p.role = role;
  p.started = started;
  return p;
}

// An expected failure that reproduced: the job leaves an orphaned worker and
// the scenario says "fail: no_orphans".
inline ScenarioResult orphan_scenario(const std::string& root) {
  ScenarioResult s;
  s.name = "orphan_reaper";
  s.file = "scenarios/orphan_reaper.yaml";
  s.description = "A launcher that exits before its worker: the worker is re-parented.";
  s.tags = {"orphans", "smoke"};
  s.scenario_text = "name: orphan_reaper\nexpect: \"fail: no_orphans\"\n";
  s.scenario_hash = "9f86d081884c7d65";
  s.seed = 42;
  s.expect = ExpectedChecks{.pass = false, .fail = {"no_orphans"}, .may_fail = {}};
  s.verdict = Verdict::XFail;
  s.verdict_reason = "expected failure reproduced: no_orphans";
  s.out_dir = root + "/orphan_reaper";
  s.stdout_path = s.out_dir + "/stdout.txt";
  s.stderr_path = s.out_dir + "/stderr.txt";
  s.repro = "aftermath run scenarios/orphan_reaper.yaml --seed 42 --out " + s.out_dir;
  s.started_at = now_iso8601();
  s.timings_origin = TimingsOrigin::TopExit;
  s.timings_ms = {{"job_ms", 1500.25},
                  {"to_all_exited_ms", std::nullopt},
                  {"to_shm_baseline_ms", 0.0},
                  {"total_ms", 2300.25}};

  CheckResult orphans;
  orphans.name = "no_orphans";
  orphans.status = CheckStatus::Fail;
  orphans.reason = "1 process outlived its parent: worker (pid 2003)";
  orphans.measured = {{"orphans", {{{"pid", 2003}, {"comm", "worker"}, {"orphaned_ms", 812.5}}}}};
  orphans.expected_to_fail = true;
  CheckResult exit_code;
  exit_code.name = "exit_code";
  exit_code.status = CheckStatus::Pass;
  exit_code.reason = "top process exited(0)";
  exit_code.measured = {{"outcome", "exited(0)"}};
  CheckResult gpu;
  gpu.name = "gpu_released";
  gpu.status = CheckStatus::Skipped;
  gpu.reason = "no GPU devices were probed";
  s.checks = {orphans, exit_code, gpu};

  Timeline& tl = s.timeline;
  tl.facts.top_pid = 2001;
  tl.facts.top_outcome = Outcome::exited(0);
  tl.facts.stdout_text = "launched 1 worker\n";
  tl.facts.stderr_text = "";
  tl.facts.containment = JobContainment::PidNamespace;
  tl.add(obs::phase(0, RunPhase::Launch));
  tl.add(obs::proc_start(ms(1.5), 2001, 2000, "launcher", "./launcher --workers 1", Role::Launcher,
                         0, 1000));
  tl.add(obs::phase(ms(2), RunPhase::Running));
  tl.add(obs::proc_start(ms(10.25), 2003, 2001, "worker", "./worker --rank 0", Role::Worker, 1,
                         1001, 'S', 3));
  tl.add(obs::proc_exit(ms(800), 2001, Outcome::exited(0)));
  tl.add(obs::proc_parent(ms(812.5), 2003, 1));
  tl.add(obs::proc_gone(ms(805), 2001));
  tl.add(obs::phase(ms(1500.25), RunPhase::JobExited));
  tl.add(obs::sample(ms(1600), 1, 0));
  tl.add(obs::note(ms(2300), "worker still alive at teardown"));
  tl.add(obs::phase(ms(2300.5), RunPhase::Done));

  ProcessHistory launcher =
      proc(2001, 2000, 0, "launcher", "./launcher --workers 1", Role::Launcher, ms(1.5));
  launcher.exited_at = ms(800);
  launcher.gone_at = ms(805);
  launcher.outcome = Outcome::exited(0);
  launcher.is_top = true;
  ProcessHistory worker =
      proc(2003, 2001, 1, "worker", "./worker --rank 0", Role::Worker, ms(10.25));
  worker.last_ppid = 1;
  worker.job_pid = 3;  // pid 3 in the job's PID namespace
  worker.orphaned_at = ms(812.5);
  s.processes = {launcher, worker};
  return s;
}

// A plain failure: a leaked /dev/shm entry, a check that could not run, and a
// run that broke (the supervisor lost the job), with a crash on stderr that
// carries a control byte and XML metacharacters.
inline ScenarioResult shm_scenario(const std::string& root) {
  ScenarioResult s;
  s.name = "shm_leak";
  s.file = "scenarios/shm_leak.yaml";
  s.description = "Ranks killed mid-run must not leave /dev/shm segments behind.";
  s.tags = {"shm"};
  s.scenario_text = "name: shm_leak\nexpect: pass\n";
  s.scenario_hash = "2c26b46b68ffc68f";
  s.seed = 7;
  s.expect = ExpectedChecks{};
  s.verdict = Verdict::Fail;
  s.verdict_reason = "shm_clean failed";
  s.error = "lost track of the job: waitid: ECHILD";
  s.out_dir = root + "/shm_leak";
  s.stdout_path = s.out_dir + "/stdout.txt";
  s.stderr_path = s.out_dir + "/stderr.txt";
  s.repro = "aftermath run scenarios/shm_leak.yaml --seed 7 --out " + s.out_dir;
  s.started_at = now_iso8601();
  s.timings_origin = TimingsOrigin::Deadline;
  s.timings_ms = {{"job_ms", 5000.0}, {"to_shm_baseline_ms", std::nullopt}, {"total_ms", 6001.5}};

  CheckResult shm;
  shm.name = "shm_clean";
  shm.status = CheckStatus::Fail;
  shm.reason = "1 /dev/shm entry left behind: psm_leak (4096 bytes)";
  shm.measured = {{"leaked", {{{"name", "psm_leak"}, {"bytes", 4096}}}}, {"reclaimed", true}};
  CheckResult cleanup;
  cleanup.name = "cleanup_time";
  cleanup.status = CheckStatus::Error;
  cleanup.reason = "timeline ended before \"job_exited\" <phase>";
  s.checks = {shm, cleanup};

  Timeline& tl = s.timeline;
  tl.facts.top_pid = 3001;
  tl.facts.top_outcome = Outcome::killed(9);
  tl.facts.deadline_hit = true;
  tl.facts.stdout_text = "rank 0 ready\n";
  tl.facts.stderr_text = "rank 1: fatal\x01 error <&> \"quoted\" 'single'\nAborted\n";
  tl.facts.containment = JobContainment::Subreaper;
  tl.facts.containment_note = "unprivileged user namespaces are disabled";
  ProcessDiagnosis d;
  d.pid = 3002;
  d.role = Role::Rank;
  d.rank = 1;
  d.state = 'S';
  d.wchan = "futex_wait_queue";
  d.kernel_stack = "(not readable)";
  d.user_stacks = "Thread 1 (LWP 3002):\n#0  0x7f00 in __futex_abstimed_wait_common64\n";
  d.waiting_in = "allreduce #7";
  d.python_stacks = "Traceback (most recent call first):\n  File \"train.py\", line 42, in step\n";
  d.python_frames = {{"train.py", 42, "step", "dist.all_reduce(t)"},
                     {"train.py", 60, "<module>", "step()"}};
  d.took = ms(812);
  tl.facts.diagnosis = {d};
  tl.facts.diagnosis_took = ms(830);
  tl.add(obs::shm_add(0, "sem.baseline", 32, true));
  tl.add(obs::phase(0, RunPhase::Launch));
  tl.add(obs::proc_start(ms(1), 3001, 3000, "mpirun", "mpirun -n 2 ./rank", Role::Launcher, 0, 50));
  tl.add(obs::proc_start(ms(3.5), 3002, 3001, "rank", "./rank", Role::Rank, 1, 51));
  tl.add(obs::shm_add(ms(4), "psm_leak", 1024));
  tl.add(obs::shm_resize(ms(4.5), "psm_leak", 4096));
  tl.add(obs::shm_add(ms(5), "sem.tmp", 32));
  tl.add(obs::proc_state(ms(900), 3002, 'Z'));
  tl.add(obs::phase(ms(5000), RunPhase::Deadline));
  tl.add(obs::signal(ms(5000), 3001, 9, "deadline"));
  tl.add(obs::proc_exit(ms(5001), 3001, Outcome::killed(9)));
  tl.add(obs::proc_exit(ms(5002), 3002, std::nullopt));
  tl.add(obs::proc_gone(ms(5003), 3002));
  tl.add(obs::shm_remove(ms(5004), "sem.tmp"));
  tl.add(obs::sample(ms(5500), 0, 4096));
  tl.add(obs::shm_reclaim(ms(6000), "psm_leak", 4096));
  tl.add(obs::tmp_left(ms(6000.5), "/tmp/pymp-k2x9ab", 0, 1000, TmpKind::Pymp));
  tl.add(obs::tmp_reclaim(ms(6000.5), "/tmp/pymp-k2x9ab", 0));
  tl.add(obs::phase(ms(6001.5), RunPhase::Done));

  ProcessHistory top = proc(3001, 3000, 0, "mpirun", "mpirun -n 2 ./rank", Role::Launcher, ms(1));
  top.exited_at = ms(5001);
  top.outcome = Outcome::killed(9);
  top.is_top = true;
  ProcessHistory rank = proc(3002, 3001, 1, "rank", "./rank", Role::Rank, ms(3.5));
  rank.zombie_since = ms(900);
  rank.exited_at = ms(5002);
  rank.gone_at = ms(5003);
  s.processes = {top, rank};
  return s;
}

inline RunResult sample_run() {
  const std::string root = ::testing::TempDir() + "aftermath-reports-test";
  RunResult run;
  run.tool_version = "0.1.0";
  run.command_line = "aftermath run scenarios/ --out " + root;
  run.environment = {{"kernel", "6.1.0"}, {"glibc", "2.36"}, {"compiler", "g++ 12.2"}};
  run.scenarios = {orphan_scenario(root), shm_scenario(root)};
  return run;
}

// ---------------------------------------------------------------------------
// Golden files.

inline std::string golden_path(const std::string& name) {
  return std::string(AFTERMATH_TEST_DATA) + "/golden/" + name;
}

inline bool updating_golden() {
  const char* v = std::getenv("AFTERMATH_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

inline void compare_or_update(const std::string& name, const std::string& actual) {
  const std::string path = golden_path(name);
  if (updating_golden()) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << actual;
    GTEST_SKIP() << "rewrote " << path;
  }
  const std::string expected = testing::slurp(path);
  ASSERT_FALSE(expected.empty()) << path << " is missing; run with AFTERMATH_UPDATE_GOLDEN=1";
  EXPECT_EQ(actual, expected) << "differs from " << path
                              << " (intended? rerun with AFTERMATH_UPDATE_GOLDEN=1)";
}

}  // namespace aftermath::testing_writers
