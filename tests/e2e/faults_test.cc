// End-to-end: faults injected into real instrumented programs, by point, time
// and predicate, on every kind of target; each recorded exactly.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>

#include "e2e_util.h"
#include "harness/inject/cgroup.h"
#include "harness/observe/kmsg.h"

using namespace std::chrono_literals;
using e2e::TempDir;
using nlohmann::json;

namespace {

class Faults : public ::testing::Test {
 protected:
  TempDir dir;
  e2e::Run run(std::vector<std::string> faults, std::vector<std::string> cmd,
               std::vector<std::string> opts = {}) {
    std::vector<std::string> a{"run", "--out", dir / "out"};
    a.insert(a.end(), opts.begin(), opts.end());
    for (const auto& f : faults) {
      a.push_back("--fault");
      a.push_back(f);
    }
    a.push_back("--");
    a.insert(a.end(), cmd.begin(), cmd.end());
    return e2e::aftermath(dir, a);
  }
  static const json& scenario(const e2e::Run& r) { return r.result.at("scenarios").at(0); }
  static const json& fault(const e2e::Run& r, size_t i = 0) {
    return scenario(r).at("faults").at(i);
  }
  // Processes by pid, from result.json.
  static std::map<int, json> procs(const e2e::Run& r) {
    std::map<int, json> m;
    for (const auto& p : scenario(r)["processes"]) m[p["pid"]] = p;
    return m;
  }
  static std::string points() { return e2e::bin("tc_points"); }
  static std::string check_status_of(const e2e::Run& r, const std::string& name) {
    return e2e::check_status(r, name);
  }
};

TEST_F(Faults, PointKillsTheNamedWorkerAtTheNamedHit) {
  auto r = run({"{action: SIGKILL, target: worker:0/1, at: {point: loader.worker.getitem, labels: "
                "{worker: 1}, hit: 5}}"},
               {points(), "--workers", "3", "--steps", "15"});
  ASSERT_FALSE(r.result.is_null()) << r.err;
  json f = fault(r);
  EXPECT_EQ(f["status"], "injected");
  EXPECT_EQ(f["point"], "loader.worker.getitem");
  EXPECT_EQ(f["hit"], 5);
  EXPECT_EQ(f["target_role"], "worker");
  EXPECT_EQ(f["rank"], 0);
  EXPECT_EQ(f["worker"], 1);
  ASSERT_EQ(f["pids"].size(), 1u);
  int pid = f["pids"][0];
  EXPECT_EQ(procs(r)[pid]["worker"], 1);
  EXPECT_GE(f["effect_ms"].get<double>(), f["sent_ms"].get<double>());
  // Killed while at its 5th item: exactly 4 batches done, none after.
  int batches = 0;
  for (const auto& e : scenario(r)["timeline"])
    if (e["kind"] == "event" && e["name"] == "batch" && e["pid"] == pid) ++batches;
  EXPECT_EQ(batches, 4);
  EXPECT_EQ(scenario(r)["timings_origin"], "first fault");
}

TEST_F(Faults, SamePointSameSeedSameResultFiveTimes) {
  std::string yaml = dir / "repro.yaml";
  std::ofstream(yaml) << "name: repro\ndescription: d\nseed: 7\njob:\n  command: " << points()
                      << "\n  args: [--ranks, '2', --workers, '2', --steps, '8']\n"
                      << "faults:\n  - action: SIGKILL\n    target: self\n"
                      << "    at: {point: step, labels: {rank: 1}, hit: 4}\n"
                      << "expect:\n  fail: [job_exit]\n";
  std::set<std::string> outcomes;
  for (int i = 0; i < 5; ++i) {
    TempDir d;
    auto r = e2e::aftermath(d, {"run", "--out", d / "out", yaml});
    ASSERT_FALSE(r.result.is_null()) << r.err;
    json s = r.result["scenarios"][0];
    json f = s["faults"][0];
    outcomes.insert(f["point"].get<std::string>() + "#" + std::to_string(f["hit"].get<int>()) +
                    " " + f["target_role"].get<std::string>() + " rank " +
                    std::to_string(f["rank"].get<int>()) + " " + s["verdict"].get<std::string>() +
                    " seed " + std::to_string(s["seed"].get<long long>()));
    EXPECT_EQ(r.exit_code, 0) << s["verdict_reason"];
  }
  EXPECT_EQ(outcomes.size(), 1u) << *outcomes.begin();
  EXPECT_EQ(*outcomes.begin(), "step#4 rank rank 1 xfail seed 7");
}

TEST_F(Faults, EverySelectorResolvesToTheRightProcesses) {
  struct Case {
    std::string target;
    std::string role;  // every selected process has it ("" = any)
    size_t count;
  };
  std::vector<Case> cases = {
      {"launcher", "launcher", 1}, {"rank:1", "rank", 1}, {"worker:1/0", "worker", 1},
      {"workers:0", "worker", 2},  {"all", "", 7},        {"match:tc_points", "", 7}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.target);
    TempDir d;
    // Each worker lives for 200 items of 5 ms (1 s and more): rank 0's are
    // still there when rank 1's come, however late a loaded machine starts them.
    auto r = e2e::aftermath(
        d, {"run", "--out", d / "out", "--fault",
            "{action: SIGSTOP, target: '" + c.target +
                "', at: {when: {workers: 4}}, resume_after: 50ms}",
            "--", points(), "--ranks", "2", "--workers", "2", "--steps", "30", "--items", "200"});
    ASSERT_FALSE(r.result.is_null()) << c.target << ": " << r.err;
    json f = r.result["scenarios"][0]["faults"][0];
    EXPECT_EQ(f["status"], "injected") << c.target << ": " << f["reason"];
    EXPECT_EQ(f["pids"].size(), c.count) << c.target;
    std::map<int, json> ps;
    for (const auto& p : r.result["scenarios"][0]["processes"]) ps[p["pid"]] = p;
    for (const auto& pid : f["pids"]) {
      if (!c.role.empty()) {
        EXPECT_EQ(ps[pid]["role"], c.role);
      }
    }
    if (c.target == "rank:1") {
      EXPECT_EQ(ps[f["pids"][0]]["rank"], 1);
    }
    if (c.target == "worker:1/0") {
      EXPECT_EQ(ps[f["pids"][0]]["rank"], 1);
      EXPECT_EQ(ps[f["pids"][0]]["worker"], 0);
    }
    // Stopped, then resumed: the job still finishes cleanly.
    EXPECT_EQ(r.result["scenarios"][0]["verdict"], "pass")
        << c.target << ": " << r.result["scenarios"][0]["verdict_reason"];
  }
}

TEST_F(Faults, TimeTriggerFiresAfterItsDelay) {
  auto r = run({"{action: SIGTERM, target: launcher, at: {after: 300ms}}"},
               {e2e::bin("tc_hang"), "--life", "20s"});
  json f = fault(r);
  EXPECT_EQ(f["status"], "injected");
  double top_start = 0;
  for (const auto& p : scenario(r)["processes"])
    if (p["top"]) top_start = p["started_ms"];
  EXPECT_GE(f["sent_ms"].get<double>() - top_start, 300.0);
  // Well before the job's own end (20 s), whatever the load.
  EXPECT_LT(f["sent_ms"].get<double>() - top_start, 10000.0);
  EXPECT_EQ(scenario(r)["top"]["outcome"]["signal"], "SIGTERM");
  EXPECT_EQ(check_status_of(r, "no_hang"), "pass");
}

TEST_F(Faults, FaultsFireInOrder) {
  // The second fault's 200 ms count from the first fault, not from the start.
  auto r = run({"{action: SIGSTOP, target: launcher, at: {after: 300ms}}",
                "{action: SIGKILL, target: launcher, at: {after: 200ms}}"},
               {e2e::bin("tc_hang"), "--life", "20s"});
  json f0 = fault(r, 0), f1 = fault(r, 1);
  EXPECT_EQ(f0["status"], "injected");
  EXPECT_EQ(f1["status"], "injected");
  EXPECT_GE(f1["sent_ms"].get<double>() - f0["sent_ms"].get<double>(), 200.0);
  EXPECT_NE(f0["effect_ms"], nullptr);  // the stop was seen (state T)
  EXPECT_EQ(scenario(r)["top"]["outcome"]["signal"], "SIGKILL");
}

TEST_F(Faults, SignalsEndTheTargetWithThatSignal) {
  for (std::string sig : {"SIGINT", "SIGSEGV", "SIGBUS", "SIGKILL"}) {
    TempDir d;
    auto r = e2e::aftermath(d, {"run", "--out", d / "out", "--fault",
                                "{action: " + sig + ", target: launcher, at: {after: 50ms}}", "--",
                                e2e::bin("tc_hang"), "--life", "20s"});
    ASSERT_FALSE(r.result.is_null()) << r.err;
    EXPECT_EQ(r.result["scenarios"][0]["top"]["outcome"]["signal"], sig);
    EXPECT_EQ(r.result["scenarios"][0]["faults"][0]["mechanism"], "signal");
  }
}

TEST_F(Faults, StopWithoutResumeIsAHangWithDiagnosis) {
  auto r = run({"{action: SIGSTOP, target: rank:0, at: {point: step, hit: 3}}"},
               {points(), "--workers", "1", "--steps", "50"}, {"--timeout", "1500ms"});
  EXPECT_EQ(check_status_of(r, "no_hang"), "fail");
  bool stopped = false;
  for (const auto& d : scenario(r)["hang_diagnosis"]["processes"])
    if (d["role"] == "rank") stopped = d["state"] == "T" || d["state"] == "t";
  EXPECT_TRUE(stopped) << scenario(r)["hang_diagnosis"].dump();
  // Teardown still ended the stopped process (SIGTERM + SIGCONT, or SIGKILL).
  for (const auto& p : scenario(r)["processes"]) EXPECT_NE(p["gone_ms"], nullptr);
}

TEST_F(Faults, HostOomMakesTheNextAllocationFailForReal) {
  auto r =
      run({"{action: host_oom, at: {point: alloc}}"},
          {points(), "--workers", "1", "--steps", "4", "--alloc-step", "2", "--alloc-mb", "256"});
  json f = fault(r);
  EXPECT_EQ(f["status"], "injected");
  EXPECT_EQ(f["mechanism"], "rlimit");
  std::string err = e2e::job_output(scenario(r), "stderr");
  EXPECT_NE(err.find("allocation of 256 MiB failed: Cannot allocate memory"), std::string::npos)
      << err;
  EXPECT_EQ(scenario(r)["top"]["outcome"]["code"], 3);

  // Negative control: the same job without the fault allocates fine.
  TempDir d2;
  auto ok = e2e::aftermath(d2, {"run", "--out", d2 / "out", "--", points(), "--workers", "1",
                                "--steps", "4", "--alloc-step", "2", "--alloc-mb", "256"});
  EXPECT_NE(e2e::job_output(ok.result["scenarios"][0], "stderr").find("succeeded"),
            std::string::npos);
}

TEST_F(Faults, UnavailableMechanismsAreSkippedWithTheReason) {
  // No memory cgroup to use: here, because the one named does not exist.
  // Both at points, so the second is the next to fire when its hit comes
  // (after a time trigger, a slow harness could answer hit 2 before the
  // first fault had fired, and the second would never be reached).
  ::setenv("AFTERMATH_CGROUP", (dir / "no-such-cgroup").c_str(), 1);
  auto r =
      run({"{action: host_oom, mechanism: cgroup, target: launcher, at: {point: step, hit: 1}}",
           "{action: device_oom, at: {point: step, hit: 2}}"},
          {points(), "--workers", "1", "--steps", "4"});
  ::unsetenv("AFTERMATH_CGROUP");
  json cg = fault(r, 0), dev = fault(r, 1);
  EXPECT_EQ(cg["mechanism"], "cgroup");
  EXPECT_EQ(cg["status"], "skipped") << cg.dump();
  EXPECT_EQ(cg["reason"], "no memory cgroup to limit the target in: AFTERMATH_CGROUP=" +
                              (dir / "no-such-cgroup") + " is not a directory");
  EXPECT_EQ(scenario(r)["top"]["outcome"]["code"], 0);  // nothing was done to the job
  if (!std::filesystem::exists("/dev/nvidiactl")) {
    EXPECT_EQ(dev["status"], "skipped") << dev.dump();
    EXPECT_NE(dev["reason"].get<std::string>().find("no GPU"), std::string::npos);
  }
}

// The kernel's OOM killer, through a memory cgroup of the target's own: the
// rank is moved in at its point with 16 MiB of headroom, and its 256 MiB
// memset ends in SIGKILL from the kernel, counted by the cgroup.
TEST_F(Faults, HostOomByCgroupIsTheKernelsOomKiller) {
  auto home = aftermath::find_memory_cgroup_home();
  if (!home) GTEST_SKIP() << "no memory cgroup to use here: " << home.error().what;
  auto r =
      run({"{action: host_oom, mechanism: cgroup, at: {point: alloc}}"},
          {points(), "--workers", "1", "--steps", "4", "--alloc-step", "2", "--alloc-mb", "256"});
  json f = fault(r);
  EXPECT_EQ(f["status"], "injected") << f.dump();
  EXPECT_EQ(f["mechanism"], "cgroup");
  EXPECT_EQ(f["oom_kills"], 1) << f.dump();
  ASSERT_EQ(f["pids"].size(), 1u);
  int rank = f["pids"][0];
  // The launcher reaps its rank and exits 128 + the signal that ended it.
  EXPECT_EQ(scenario(r)["top"]["outcome"]["code"], 128 + SIGKILL) << procs(r)[rank].dump();
  EXPECT_NE(f["effect_ms"], nullptr);
  int seen = 0;
  for (const auto& e : scenario(r)["timeline"])
    if (e["kind"] == "oom_kill") {
      ++seen;
      EXPECT_EQ(e["pid"], rank);
      EXPECT_EQ(e["kills"], 1);
    }
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(e2e::job_output(scenario(r), "stderr").find("succeeded"), std::string::npos);
  // The kernel's own line, where its log can be read here.
  if (aftermath::KmsgTail().open().empty()) {
    ASSERT_EQ(f["kernel_log"].size(), 1u) << f.dump();
    EXPECT_NE(
        f["kernel_log"][0].get<std::string>().find("Killed process " + std::to_string(rank) + " "),
        std::string::npos)
        << f["kernel_log"][0];
  }
  EXPECT_NE(e2e::slurp(dir / "out/report.html").find("injected (cgroup), oom_kill 1"),
            std::string::npos);
  EXPECT_NE(e2e::slurp(dir / "out/report.html")
                .find("SIGKILL from the kernel to " + std::to_string(rank)),
            std::string::npos);
  EXPECT_NE(e2e::slurp(dir / "out/trace.json").find("\"name\":\"oom_kill\""), std::string::npos);
  // The fault cgroups are gone with the job.
  ASSERT_EQ(f["cgroups"].size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(f["cgroups"][0].get<std::string>()));
}

// Without a point (here, a time), `auto` means the cgroup: the limit is put
// on from outside, and the rank's allocation 5 s later meets it (the harness
// must have moved the rank by then, however loaded the machine).
TEST_F(Faults, HostOomOnATimeTriggerUsesTheCgroup) {
  auto home = aftermath::find_memory_cgroup_home();
  if (!home) GTEST_SKIP() << "no memory cgroup to use here: " << home.error().what;
  auto r = run({"{action: host_oom, target: rank:0, at: {after: 10ms}}"},
               {points(), "--workers", "1", "--steps", "200", "--step-ms", "25", "--alloc-step",
                "200", "--alloc-mb", "256"});
  json f = fault(r);
  EXPECT_EQ(f["status"], "injected") << f.dump();
  EXPECT_EQ(f["mechanism"], "cgroup");
  EXPECT_EQ(f["oom_kills"], 1) << f.dump();
  EXPECT_EQ(scenario(r)["top"]["outcome"]["code"], 128 + SIGKILL);
}

// SIGKILL the harness while its fault cgroup holds the rank: the job dies
// with the harness (its PID namespace, or the reaper's lifeline), the cgroup
// stays behind; `aftermath check` names it and `aftermath reap --yes`
// removes it.
TEST_F(Faults, AKilledHarnessLeavesItsFaultCgroupToCheckAndReap) {
  auto home = aftermath::find_memory_cgroup_home();
  if (!home) GTEST_SKIP() << "no memory cgroup to use here: " << home.error().what;
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  std::string pids = dir / "pids";
  e2e::PidSink sink(pids);  // host pids, from inside the job's PID namespace too
  e2e::Child c =
      e2e::spawn({e2e::bin("aftermath"), "run", "--out", dir / "out", "--timeout", "60s", "--fault",
                  "{action: host_oom, target: rank:0, at: {after: 10ms}}", "--", points(),
                  "--workers", "0", "--steps", "100000", "--step-ms", "50", "--pidfile", pids},
                 dir / "o", dir / "e");
  // Its fault cgroup, once the rank is in it.
  const std::string prefix = "aftermath-" + std::to_string(c.pid) + "-";
  std::string made;
  auto end = std::chrono::steady_clock::now() + 20s;
  while (made.empty() && std::chrono::steady_clock::now() < end) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(home->dir, ec))
      if (e.path().filename().string().rfind(prefix, 0) == 0 &&
          !e2e::slurp(e.path().string() + "/cgroup.procs").empty())
        made = e.path().string();
    if (made.empty()) ::poll(nullptr, 0, 10);
  }
  auto job = e2e::read_pids(pids);
  ::syscall(SYS_pidfd_send_signal, c.pidfd, SIGKILL, nullptr, 0);
  e2e::wait_for(c, 10s);
  EXPECT_TRUE(e2e::all_gone_within(job, 5s));
  e2e::kill_leftovers(job);
  EXPECT_TRUE(e2e::reap_orphans(5s));
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  ASSERT_FALSE(made.empty()) << e2e::slurp(dir / "e");
  EXPECT_TRUE(std::filesystem::exists(made));

  // Looked at apart from this machine's /dev/shm, temp dir and devices (reap
  // would clean them).
  std::filesystem::create_directories(dir / "shm");
  std::filesystem::create_directories(dir / "tmp");
  std::vector<std::string> scope{
      "--no-probe",       "--shm-dir",     dir / "shm",    "--tmp-dir", dir / "tmp",
      "--device-pattern", dir / "nvidia*", "--cgroup-dir", home->dir,   "--json"};
  std::vector<std::string> check{"check"}, reap{"reap", "--yes"};
  check.insert(check.end(), scope.begin(), scope.end());
  reap.insert(reap.end(), scope.begin(), scope.end());
  TempDir d1, d2;
  auto checked = e2e::aftermath(d1, check);
  EXPECT_EQ(checked.exit_code, 1) << checked.out << checked.err;
  bool listed = false;
  const json report = json::parse(checked.out);
  for (const auto& g : report["cgroups"])
    if (g["dir"] == made) listed = g["leftover"].get<bool>() && g["owner"] == c.pid;
  EXPECT_TRUE(listed) << checked.out;
  auto reaped = e2e::aftermath(d2, reap);
  EXPECT_FALSE(std::filesystem::exists(made)) << reaped.out << reaped.err;
  if (std::filesystem::exists(made))
    (void)aftermath::remove_cgroup_dir(made, 5 * aftermath::kSecond);
}

TEST_F(Faults, DelayHoldsThePoint) {
  auto r = run({"{action: delay, duration: 400ms, at: {point: step, hit: 3}}"},
               {points(), "--workers", "1", "--steps", "5"});
  EXPECT_EQ(fault(r)["status"], "injected");
  std::map<int, double> step_at;
  for (const auto& e : scenario(r)["timeline"])
    if (e["kind"] == "event" && e["name"] == "step") step_at[e["fields"]["step"]] = e["t_ms"];
  ASSERT_TRUE(step_at.count(2) && step_at.count(3));
  EXPECT_GE(step_at[3] - step_at[2], 400.0);
  EXPECT_LT(step_at[3] - step_at[2], 4000.0);
  EXPECT_EQ(scenario(r)["verdict"], "pass");
}

TEST_F(Faults, HangAtAPointIsDiagnosed) {
  auto r = run({"{action: hang, at: {point: step, labels: {rank: 0}, hit: 2}}"},
               {points(), "--workers", "1", "--steps", "5"},
               // gdb's time depends on the machine's load: a budget that does not.
               {"--timeout", "1s", "--check", "no_hang: {diagnose: 30s}"});
  EXPECT_EQ(check_status_of(r, "no_hang"), "fail");
  auto diag = scenario(r)["hang_diagnosis"];
  ASSERT_GE(diag["processes"].size(), 2u);
  bool gdb = diag["note"].get<std::string>().find("gdb not installed") == std::string::npos;
  for (const auto& d : diag["processes"]) {
    EXPECT_FALSE(d["wchan"].get<std::string>().empty());
    if (gdb && d["role"] == "rank") {
      EXPECT_NE(d["user_stacks"].get<std::string>().find("sync_point"), std::string::npos);
    }
  }
}

TEST_F(Faults, PhaseAndPredicateTriggers) {
  // (A process-count predicate can hold before the workers have announced
  // themselves; a role-based target then matches nobody. The workers
  // predicate counts announced workers.)
  auto r = run({"{action: SIGSTOP, target: launcher, at: {phase: startup}, resume_after: 10ms}",
                "{action: SIGSTOP, target: rank:0, at: {phase: steady}, resume_after: 10ms}",
                "{action: SIGSTOP, target: workers:0, at: {when: {workers: {rank: 0, count: 2}}}, "
                "resume_after: 10ms}"},
               {points(), "--workers", "2", "--steps", "20", "--items", "40"});
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(fault(r, i)["status"], "injected") << i << fault(r, i).dump();
  EXPECT_EQ(scenario(r)["verdict"], "pass") << scenario(r)["verdict_reason"];
  // And the process-count predicate itself, with a target that needs no role.
  TempDir d2;
  auto p = e2e::aftermath(
      d2, {"run", "--out", d2 / "out", "--fault",
           "{action: SIGSTOP, target: all, at: {when: {processes: 4}}, resume_after: 10ms}", "--",
           points(), "--workers", "2", "--steps", "20", "--items", "40"});
  EXPECT_EQ(p.result["scenarios"][0]["faults"][0]["status"], "injected");
  EXPECT_GE(p.result["scenarios"][0]["faults"][0]["pids"].size(), 4u);
}

TEST_F(Faults, MatchSeesTheCommandLineAfterExec) {
  // The subshell is seen at its fork, a copy of its parent (same command
  // line), and execs 400 ms later: the selector must see the new one. Only
  // the exec'd process's command line is exactly "sleep 37".
  auto r = run({"{action: SIGKILL, target: 'match:^sleep 37$', at: {after: 1500ms}}"},
               {"/bin/sh", "-c", "x=7; (sleep 0.4; exec sleep 3$x) & wait"});
  ASSERT_FALSE(r.result.is_null()) << r.err;
  json f = fault(r);
  EXPECT_EQ(f["status"], "injected") << f.dump();
  ASSERT_EQ(f["pids"].size(), 1u) << f.dump();
  EXPECT_TRUE(procs(r).count(f["pids"][0].get<int>()));
  EXPECT_NE(f["effect_ms"], nullptr);  // its exit was seen after the signal
}

TEST_F(Faults, AFaultWithNoMatchingTargetFailsVisibly) {
  auto r = run({"{action: SIGKILL, target: rank:9, at: {after: 50ms}}"},
               {points(), "--workers", "1", "--steps", "20"});
  EXPECT_EQ(fault(r)["status"], "failed");
  EXPECT_NE(fault(r)["reason"].get<std::string>().find("rank:9"), std::string::npos);
  // It waited for rank 9 from its trigger until the job ended.
  EXPECT_NE(fault(r)["waited_from_ms"], nullptr);
  // The scenario did not stage what it says: never a pass.
  EXPECT_EQ(scenario(r)["verdict"], "error");
  EXPECT_EQ(r.exit_code, 1);
}

// A job that never announces ranks: the fault cannot act, so the run is an
// error with the fault's reason in every report, not "every check passed".
// The job lives 3 s, so the trigger (100 ms) comes while it runs however
// late a loaded machine lets the harness look.
TEST_F(Faults, AFaultThatNeverFiredIsNeverAPass) {
  auto r = run({"{action: SIGKILL, target: rank:1, at: {after: 100ms}}"}, {"/bin/sleep", "3"});
  ASSERT_FALSE(r.result.is_null()) << r.err;
  EXPECT_EQ(scenario(r)["verdict"], "error");
  std::string why = scenario(r)["verdict_reason"];
  EXPECT_NE(why.find("fault 1 (SIGKILL rank:1, after 100ms) failed"), std::string::npos) << why;
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("fault 1 (SIGKILL rank:1"), std::string::npos) << r.out;  // the table
  std::string junit = e2e::slurp(dir / "out/junit.xml");
  EXPECT_NE(junit.find("name=\"fault 1 (SIGKILL rank:1)\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("type=\"fault_failed\""), std::string::npos) << junit;
  std::string summary = e2e::slurp(dir / "out/summary.md");
  EXPECT_NE(summary.find("fault 1 (SIGKILL rank:1"), std::string::npos) << summary;
  std::string html = e2e::slurp(dir / "out/report.html");
  EXPECT_NE(html.find("fault 1 (SIGKILL rank:1"), std::string::npos);
  // optional: true keeps the old behaviour, explicitly.
  auto opt = run({"{action: SIGKILL, target: rank:1, at: {after: 100ms}, optional: true}"},
                 {"/bin/sleep", "3"});
  EXPECT_EQ(opt.result["scenarios"][0]["verdict"], "pass")
      << opt.result["scenarios"][0]["verdict_reason"];
  EXPECT_EQ(opt.exit_code, 0);
}

TEST_F(Faults, APointNeverReachedIsAnError) {
  auto r = run({"{action: SIGKILL, target: self, at: {point: no.such.point}}"},
               {points(), "--workers", "1", "--steps", "3"});
  ASSERT_FALSE(r.result.is_null()) << r.err;
  EXPECT_EQ(fault(r)["status"], "not_triggered");
  EXPECT_EQ(fault(r)["reason"],
            "point 'no.such.point' was never reached before the job ended "
            "(does the job run the points client, and is the point's name right?)");
  EXPECT_EQ(scenario(r)["verdict"], "error");
  // A point the job passes, but never at the hit asked for (the client
  // reports only armed hits, so the harness never hears of the others).
  auto h = run({"{action: SIGKILL, target: self, at: {point: step, hit: 50}}"},
               {points(), "--workers", "1", "--steps", "3"});
  EXPECT_EQ(h.result["scenarios"][0]["faults"][0]["status"], "not_triggered");
  EXPECT_NE(h.result["scenarios"][0]["faults"][0]["reason"].get<std::string>().find("point 'step'"),
            std::string::npos);
  EXPECT_EQ(h.result["scenarios"][0]["verdict"], "error");
}

// A role target that does not exist yet when its trigger comes is waited for:
// "after 1 ms, kill rank 0" means rank 0 once it has said who it is.
TEST_F(Faults, ARoleTargetNotThereYetIsWaitedFor) {
  for (const char* contain : {"pidns", "subreaper"}) {
    auto r = run({"{action: SIGKILL, target: rank:0, at: {after: 1ms}}"},
                 {points(), "--workers", "1", "--steps", "40"}, {"--contain", contain});
    ASSERT_FALSE(r.result.is_null()) << r.err;
    EXPECT_EQ(fault(r)["status"], "injected") << contain << fault(r).dump();
    EXPECT_EQ(fault(r)["target_role"], "rank") << contain;
  }
}

TEST_F(Faults, BadFaultsAreRejectedBeforeLaunch) {
  std::string marker = dir / "launched";
  auto r = run({"{action: SIGKIL, target: launcher, at: {after: 1s}}"},
               {e2e::bin("tc_clean"), "--pidfile", marker});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--fault 1:1:10: fault.action: unknown action 'SIGKIL'"), std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(marker));

  std::string yaml = dir / "bad.yaml";
  std::ofstream(yaml) << "name: bad\ndescription: d\njob:\n  command: " << e2e::bin("tc_clean")
                      << "\nfaults:\n  - action: SIGKILL\n    target: self\n    at: {after: 1s}\n"
                      << "  - action: SIGTERM\n    target: worker:1\n    at: {point: step}\n";
  auto b = e2e::aftermath(dir, {"run", "--out", dir / "out", yaml});
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find(yaml + ":6:5: faults[0].target"), std::string::npos) << b.err;
  EXPECT_NE(b.err.find(yaml + ":10:13: faults[1].target"), std::string::npos) << b.err;
}

// A fixture waiting at a point must not hang when nobody answers: the
// client's deadline ends the wait (and an absent harness costs nothing).
TEST_F(Faults, PointClientNeverHangsOnADeadOrSilentHarness) {
  for (std::string events : {"@aftermath-nobody-is-here", ""}) {
    std::vector<std::string> env_cmd = {"/usr/bin/env", "AFTERMATH_POINTS=step#2",
                                        "AFTERMATH_POINT_TIMEOUT_MS=300"};
    if (!events.empty()) env_cmd.push_back("AFTERMATH_EVENTS=" + events);
    env_cmd.push_back(points());
    env_cmd.insert(env_cmd.end(), {"--workers", "1", "--steps", "4"});
    e2e::Child c = e2e::spawn(env_cmd, dir / "o", dir / "e");
    int status = e2e::wait_for(c, 10s);
    ASSERT_TRUE(WIFEXITED(status)) << events;
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
}

TEST_F(Faults, PythonClientTakesPartToo) {
  if (!std::filesystem::exists(e2e::python())) GTEST_SKIP() << "no " << e2e::python();
  std::string script = dir / "job.py";
  std::ofstream(script) << "import sys\nsys.path.insert(0, '" << e2e::src("fixtures/points")
                        << "')\nimport aftermath_points as ap\nap.announce('rank', rank=0)\n"
                        << "for step in range(1, 6):\n    ap.point('step', hit=step)\n"
                        << "    print('step', step, flush=True)\n";
  auto r =
      run({"{action: SIGKILL, target: self, at: {point: step, hit: 3}}"}, {e2e::python(), script});
  json f = fault(r);
  EXPECT_EQ(f["status"], "injected");
  EXPECT_EQ(f["target_role"], "rank");
  EXPECT_EQ(scenario(r)["top"]["outcome"]["signal"], "SIGKILL");
  EXPECT_EQ(e2e::job_output(scenario(r), "stdout"), "step 1\nstep 2\n");
}

}  // namespace
