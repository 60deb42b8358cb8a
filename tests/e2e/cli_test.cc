// End-to-end: the real CLI runs the real testcase programs. Each misbehaving
// program must make exactly its check fail; a well-behaved one passes all.
#include <gtest/gtest.h>
#include <sys/prctl.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "e2e_util.h"

using namespace std::chrono_literals;
using e2e::TempDir;

namespace {

class Cli : public ::testing::Test {
 protected:
  TempDir dir;
  std::string out() const { return dir / "out"; }
  e2e::Run run_cmd(std::vector<std::string> opts, std::vector<std::string> cmd) {
    std::vector<std::string> a{"run", "--out", out()};
    a.insert(a.end(), opts.begin(), opts.end());
    a.push_back("--");
    a.insert(a.end(), cmd.begin(), cmd.end());
    return e2e::aftermath(dir, a);
  }
  // no_hang failed by its stall rule, with the verdict before `before_ms`.
  void expect_stalled(const e2e::Run& r, double before_ms) {
    ASSERT_FALSE(r.result.is_null()) << r.err;
    auto c = e2e::check(r, "no_hang");
    EXPECT_EQ(c["status"], "fail");
    EXPECT_NE(c["reason"].get<std::string>().find("hang: progress stopped at"), std::string::npos)
        << c["reason"];
    EXPECT_LT(c["measured"]["verdict_ms"].get<double>(), before_ms);
  }
  // no_hang passed and so did the run.
  void expect_progressing(const e2e::Run& r) {
    ASSERT_FALSE(r.result.is_null()) << r.err;
    EXPECT_EQ(e2e::check_status(r, "no_hang"), "pass") << e2e::check(r, "no_hang")["reason"];
    EXPECT_EQ(r.result["scenarios"][0]["verdict"], "pass")
        << r.result["scenarios"][0]["verdict_reason"];
  }
  void expect_only_failing(const e2e::Run& r, std::set<std::string> failing) {
    ASSERT_FALSE(r.result.is_null()) << r.err;
    for (const auto& c : r.result["scenarios"][0]["checks"]) {
      std::string name = c["name"];
      // The device checks skip, never pass, on a machine without a GPU.
      bool device = name == "device_memory_released" || name == "no_device_holders" ||
                    name == "device_alloc_probe";
      std::string want = failing.count(name)                               ? "fail"
                         : device && ::access("/dev/nvidiactl", F_OK) != 0 ? "skipped"
                                                                           : "pass";
      EXPECT_EQ(c["status"], want) << name << ": " << c["reason"].get<std::string>();
    }
  }
};

TEST_F(Cli, WellBehavedJobPassesEveryCheck) {
  auto r = run_cmd({}, {e2e::bin("tc_clean"), "--children", "3", "--work", "100ms"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_only_failing(r, {});
  EXPECT_EQ(r.result["scenarios"][0]["verdict"], "pass");
  // The children were seen, with the top as their parent.
  int children = 0;
  int top = r.result["scenarios"][0]["top"]["pid"];
  for (const auto& p : r.result["scenarios"][0]["processes"])
    if (p["ppid"] == top) ++children;
  EXPECT_EQ(children, 3);
  EXPECT_NE(r.out.find("pass"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(out() + "/junit.xml"));
}

TEST_F(Cli, OrphanFailsNoOrphansAndAllExited) {
  auto r = run_cmd({"--grace", "300ms", "--settle", "1s"},
                   {e2e::bin("tc_orphan"), "--children", "2", "--child-life", "20s"});
  EXPECT_EQ(r.exit_code, 1);
  expect_only_failing(r, {"no_orphans", "all_exited"});
  auto orphans = e2e::check(r, "no_orphans")["measured"]["orphans"];
  ASSERT_EQ(orphans.size(), 2u);
  for (const auto& o : orphans) {
    EXPECT_TRUE(o["alive_at_teardown"].get<bool>());
    EXPECT_GE(o["orphan_lifetime_ms"].get<double>(), 900.0);  // the 1 s settle, tight lower bound
  }
}

TEST_F(Cli, OrphanWithinGracePasses) {
  // A grace far above the orphan's 100 ms: it costs nothing when the orphan
  // is quick (the run ends when it exits), and a loaded machine stays inside it.
  auto r = run_cmd({"--grace", "10s", "--settle", "15s"},
                   {e2e::bin("tc_orphan"), "--children", "1", "--child-life", "100ms"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  expect_only_failing(r, {});
  auto orphans = e2e::check(r, "no_orphans")["measured"]["orphans"];
  ASSERT_EQ(orphans.size(), 1u);
  // It lives 100 ms from its parent's death (tc_orphan waits for it); the
  // two ends are seen by the harness, each with its own delay on a loaded
  // machine: measured, not zero, and inside the grace.
  EXPECT_GE(orphans[0]["orphan_lifetime_ms"].get<double>(), 50.0);
  EXPECT_LT(orphans[0]["orphan_lifetime_ms"].get<double>(), 10000.0);
}

TEST_F(Cli, ZombieFailsNoZombies) {
  auto r = run_cmd({"--grace", "200ms"}, {e2e::bin("tc_zombie"), "--life", "1s"});
  EXPECT_EQ(r.exit_code, 1);
  expect_only_failing(r, {"no_zombies"});
  auto z = e2e::check(r, "no_zombies")["measured"]["zombies"];
  ASSERT_EQ(z.size(), 1u);
  EXPECT_GE(z[0]["zombie_lifetime_ms"].get<double>(), 800.0);
  EXPECT_LT(z[0]["zombie_lifetime_ms"].get<double>(), 10000.0);
}

// Its leader shows 'Z' for 2 s while a thread of its group runs on, and its
// parent reaps it the moment it can: exiting, not a zombie. (Seen on a GPU
// runner: 16 DataLoader workers with CUDA contexts, each 'Z' for 0.6-0.8 s
// while the driver tore its context down, were called zombies.)
TEST_F(Cli, ALeaderExitingWhileItsThreadsRunIsNoZombie) {
  std::string pids = dir / "pids";
  e2e::PidSink sink(pids);
  auto r = run_cmd({"--grace", "200ms"},
                   {e2e::bin("tc_zombie"), "--exiting-leader", "2s", "--pidfile", pids});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  expect_only_failing(r, {});
  EXPECT_TRUE(e2e::check(r, "no_zombies")["measured"]["zombies"].empty());
  // It was seen, and it lived on (2 s, of which the harness, seeing its fork
  // and its end each a little late on a loaded machine, is asked for half):
  // the window the check had to get right.
  auto all = e2e::read_pids(pids);
  ASSERT_EQ(all.size(), 2u);
  bool seen = false;
  for (const auto& p : r.result["scenarios"][0]["processes"])
    if (p["pid"] == all[1]) {
      seen = true;
      EXPECT_GE(p["exited_ms"].get<double>() - p["started_ms"].get<double>(), 1000.0);
    }
  EXPECT_TRUE(seen);
}

TEST_F(Cli, DoubleForkedSetsidDaemonIsStillFound) {
  std::string pids = dir / "pids";
  e2e::PidSink sink(pids);  // host pids, from inside the job's PID namespace too
  auto r = run_cmd({"--grace", "200ms", "--settle", "500ms"},
                   {e2e::bin("tc_daemon"), "--life", "20s", "--pidfile", pids});
  EXPECT_EQ(r.exit_code, 1);
  expect_only_failing(r, {"no_orphans", "all_exited"});
  auto all = e2e::read_pids(pids);
  ASSERT_EQ(all.size(), 2u);
  bool seen = false;
  for (const auto& p : r.result["scenarios"][0]["processes"])
    if (p["pid"] == all[1]) seen = true;
  EXPECT_TRUE(seen) << "the daemon must be part of the job";
  EXPECT_TRUE(e2e::all_gone_within(all, 10s));
  e2e::kill_leftovers(all);
}

// An escaped daemon holding 1 MiB of /dev/shm when the teardown comes is
// itself a leftover (an orphan long past its grace): what it holds is the
// job's leak, named with its holder, not "cut by teardown".
TEST_F(Cli, ShmHeldByAnEscapedDaemonIsALeakNamingIt) {
  std::string pids = dir / "pids";
  e2e::PidSink sink(pids);
  auto r = run_cmd(
      {"--grace", "200ms", "--settle", "2s"},
      {e2e::bin("tc_daemon"), "--life", "30s", "--shm-bytes", "1048576", "--pidfile", pids});
  EXPECT_EQ(r.exit_code, 1);
  expect_only_failing(r, {"no_orphans", "all_exited", "shm_clean"});
  auto all = e2e::read_pids(pids);
  ASSERT_EQ(all.size(), 2u);
  auto m = e2e::check(r, "shm_clean")["measured"];
  ASSERT_EQ(m["leaked"].size(), 1u) << m.dump(1);
  EXPECT_EQ(m["leaked"][0]["bytes"], 1048576);
  EXPECT_NE(m["leaked"][0]["held_by_leftover"].get<std::string>().find("orphaned"),
            std::string::npos)
      << m.dump(1);
  EXPECT_TRUE(m["held_at_teardown"].empty()) << m.dump(1);
  EXPECT_TRUE(e2e::all_gone_within(all, 10s));
  e2e::kill_leftovers(all);
}

TEST_F(Cli, ShmLeakIsRecordedThenRemoved) {
  auto r =
      run_cmd({"--settle", "300ms"}, {e2e::bin("tc_shm_leak"), "--count", "3", "--bytes", "65536"});
  EXPECT_EQ(r.exit_code, 1);
  expect_only_failing(r, {"shm_clean"});
  auto m = e2e::check(r, "shm_clean")["measured"];
  ASSERT_EQ(m["leaked"].size(), 3u);
  EXPECT_EQ(m["leaked_bytes"], 3 * 65536);
  EXPECT_TRUE(m["reclaimed_by_harness"].get<bool>());
  for (const auto& e : m["leaked"]) {
    std::string name = e["name"];
    EXPECT_EQ(name.rfind("torch_", 0), 0u);
    EXPECT_FALSE(std::filesystem::exists("/dev/shm/" + name)) << name << " was not removed";
  }
}

TEST_F(Cli, KeepLeaksKeepsACopyOfAPrivateShm) {
  auto r = run_cmd({"--settle", "200ms", "--keep-leaks"},
                   {e2e::bin("tc_shm_leak"), "--count", "1", "--bytes", "4096"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  if (r.result["scenarios"][0]["containment"]["shm"] != "private")
    GTEST_SKIP() << "no mount namespace";
  auto m = e2e::check(r, "shm_clean")["measured"];
  ASSERT_EQ(m["leaked"].size(), 1u);
  std::string name = m["leaked"][0]["name"];
  std::string copy = r.result["scenarios"][0]["out_dir"].get<std::string>() + "/leaked-shm/" + name;
  std::error_code ec;
  EXPECT_EQ(std::filesystem::file_size(copy, ec), 4096u) << copy << ": " << ec.message() << "\n"
                                                         << r.out;
  EXPECT_FALSE(std::filesystem::exists("/dev/shm/" + name)) << "the host's /dev/shm was touched";
}

// With the host's /dev/shm: the leak is really there, and the harness removes
// it unless --keep-leaks.
TEST_F(Cli, HostShmLeakIsRemovedOrKept) {
  auto r =
      run_cmd({"--settle", "200ms", "--shm", "host"}, {e2e::bin("tc_shm_leak"), "--count", "1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.result["scenarios"][0]["containment"]["shm"], "host");
  auto m = e2e::check(r, "shm_clean")["measured"];
  ASSERT_EQ(m["leaked"].size(), 1u);
  EXPECT_FALSE(std::filesystem::exists("/dev/shm/" + m["leaked"][0]["name"].get<std::string>()));

  TempDir d2;
  auto k = e2e::aftermath(d2, {"run", "--out", d2 / "out", "--settle", "200ms", "--shm", "host",
                               "--keep-leaks", "--", e2e::bin("tc_shm_leak"), "--count", "1"});
  auto km = e2e::check(k, "shm_clean")["measured"];
  ASSERT_EQ(km["leaked"].size(), 1u);
  std::string path = "/dev/shm/" + km["leaked"][0]["name"].get<std::string>();
  EXPECT_TRUE(std::filesystem::exists(path));
  std::filesystem::remove(path);  // the test's own cleanup
}

TEST_F(Cli, HangIsDetectedAndTornDown) {
  std::string pids = dir / "pids";
  e2e::PidSink sink(pids);  // host pids, from inside the job's PID namespace too
  auto r = run_cmd({"--timeout", "1s"},
                   {e2e::bin("tc_hang"), "--ignore-term", "--children", "2", "--pidfile", pids});
  EXPECT_EQ(r.exit_code, 1);
  expect_only_failing(r, {"no_hang", "job_exit", "all_exited"});
  EXPECT_EQ(e2e::check(r, "no_hang")["measured"]["live_at_deadline"].size(), 3u);
  // SIGTERM was ignored: the teardown escalated to SIGKILL.
  int kills = 0;
  for (const auto& e : r.result["scenarios"][0]["timeline"])
    if (e["kind"] == "signal" && e["signal"] == "SIGKILL") ++kills;
  EXPECT_EQ(kills, 3);
  auto all = e2e::read_pids(pids);
  EXPECT_EQ(all.size(), 3u);
  EXPECT_TRUE(e2e::all_gone_within(all, 10s));
  e2e::kill_leftovers(all);
}

TEST_F(Cli, ExitCodeAndSignalAreDistinctOutcomes) {
  auto r = run_cmd({}, {e2e::bin("tc_exit"), "--code", "3"});
  EXPECT_EQ(r.exit_code, 1);
  expect_only_failing(r, {"job_exit"});
  EXPECT_EQ(r.result["scenarios"][0]["top"]["outcome"]["kind"], "exited");
  EXPECT_EQ(r.result["scenarios"][0]["top"]["outcome"]["code"], 3);

  TempDir d2;
  auto k = e2e::aftermath(
      d2, {"run", "--out", d2 / "out", "--", e2e::bin("tc_exit"), "--signal", "KILL"});
  EXPECT_EQ(k.result["scenarios"][0]["top"]["outcome"]["kind"], "killed");
  EXPECT_EQ(k.result["scenarios"][0]["top"]["outcome"]["signal"], "SIGKILL");
}

// `run PROGRAM ARGS` with the `--` forgotten: one line that says what was
// meant, whether or not the program's arguments look like options, and
// nothing is launched.
TEST_F(Cli, AProgramWithoutTheDoubleDashGetsTheHint) {
  TempDir d;
  const std::string prog = e2e::bin("tc_clean");
  for (const std::vector<std::string>& rest :
       {std::vector<std::string>{"--children", "1"}, std::vector<std::string>{"children"}}) {
    std::vector<std::string> args{"run", "--out", d / "out", prog};
    args.insert(args.end(), rest.begin(), rest.end());
    auto r = e2e::aftermath(d, args);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    std::string cmd = prog;
    for (const auto& w : rest) cmd += " " + w;
    EXPECT_NE(
        r.err.find(prog + ": a program, not a scenario or suite; did you mean `aftermath run -- " +
                   cmd + "`?"),
        std::string::npos)
        << r.err;
    EXPECT_FALSE(std::filesystem::exists(d / "out/result.json"));
  }
}

// A mistyped option or command names what was meant; nothing is launched.
TEST_F(Cli, AMistypedOptionOrCommandGetsTheNearestName) {
  TempDir d;
  struct Case {
    std::vector<std::string> args;
    std::string said;
  };
  const std::string prog = e2e::bin("tc_clean");
  for (const Case& c : std::vector<Case>{
           {{"run", "--out", d / "out", "--timout", "5s", "--", prog},
            "aftermath: --timout: no such option of `aftermath run`; did you mean --timeout?"},
           {{"run", "--out", d / "out", "--repaet=3", "--", prog},
            "aftermath: --repaet: no such option of `aftermath run`; did you mean --repeat?"},
           {{"rn", "--out", d / "out", "--", prog},
            "aftermath: rn: no such command; did you mean `aftermath run`?"},
           {{"run", "--out", d / "out", "--frobnicate", "--", prog},
            "aftermath: --frobnicate: no such option of `aftermath run` (see `aftermath run "
            "--help`)"}}) {
    auto r = e2e::aftermath(d, c.args);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find(c.said), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(d / "out/result.json"));
  }
}

// `--name` names an ad-hoc run in every report; a bad one is refused before
// anything is launched.
TEST_F(Cli, NameNamesAnAdHocRun) {
  TempDir d;
  auto r = e2e::aftermath(d, {"run", "--out", d / "out", "--name", "ddp-smoke", "--",
                              e2e::bin("tc_clean"), "--children", "1", "--work", "50ms"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.result["scenarios"][0]["name"], "ddp-smoke");
  EXPECT_NE(e2e::slurp(d / "out/junit.xml").find("name=\"ddp-smoke\""), std::string::npos);
  TempDir d2;
  auto bad = e2e::aftermath(
      d2, {"run", "--out", d2 / "out", "--name", "Bad Name", "--", e2e::bin("tc_clean")});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--name: invalid name 'Bad Name'"), std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(d2 / "out/result.json"));
}

TEST_F(Cli, TheSkeletonSuiteMatchesItsExpectations) {
  auto r = e2e::aftermath(dir, {"run", "--out", out(), e2e::src("scenarios/skeleton.suite")}, 120s);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_FALSE(r.result.is_null());
  EXPECT_GE(r.result["scenarios"].size(), 9u);
  for (const auto& s : r.result["scenarios"]) {
    std::string v = s["verdict"];
    EXPECT_TRUE(v == "pass" || v == "xfail")
        << s["name"] << ": " << v << " " << s["verdict_reason"];
  }
}

TEST_F(Cli, UnexpectedPassIsXpassAndExitsOne) {
  std::string yaml = dir / "xpass.yaml";
  std::ofstream(yaml) << "name: xpass-demo\ndescription: d\njob:\n  command: "
                      << e2e::bin("tc_clean") << "\nexpect:\n  fail: [no_orphans]\n";
  auto r = e2e::aftermath(dir, {"run", "--out", out(), yaml});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.result["scenarios"][0]["verdict"], "xpass");
}

TEST_F(Cli, BadScenarioIsRejectedAndNothingIsLaunched) {
  std::string good = dir / "good.yaml", bad = dir / "bad.yaml", marker = dir / "launched";
  std::ofstream(good) << "name: good\ndescription: d\njob:\n  command: " << e2e::bin("tc_clean")
                      << "\n  args: [--pidfile, " << marker << "]\n";
  std::ofstream(bad) << "name: bad\ndescription: d\njob:\n  command: " << e2e::bin("tc_clean")
                     << "\ntimeouts:\n  job: 5\n  colour: red\n";
  auto r = e2e::aftermath(dir, {"run", "--out", out(), good, bad});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(bad + ":6:8: timeouts.job"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(bad + ":7:3: timeouts.colour"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(marker)) << "a job was launched";
  EXPECT_FALSE(std::filesystem::exists(out() + "/result.json"));
}

TEST_F(Cli, MissingCommandIsAUsageError) {
  auto r = run_cmd({}, {"/nonexistent/definitely-not-here"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not found"), std::string::npos);
  auto r2 = e2e::aftermath(dir, {"run", "--timeout", "5", "--", e2e::bin("tc_clean")});
  EXPECT_EQ(r2.exit_code, 2);
  EXPECT_NE(r2.err.find("not a duration"), std::string::npos) << r2.err;
}

TEST_F(Cli, ListShowsScenarios) {
  auto r = e2e::aftermath(dir, {"list", e2e::src("scenarios")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("orphan-outlives-parent"), std::string::npos);
  EXPECT_NE(r.out.find("skeleton"), std::string::npos);
}

// Interrupting the harness still tears the job down and reports.
TEST_F(Cli, SigintTearsDownAndReports) {
  std::string pids = dir / "pids";
  e2e::PidSink sink(pids);  // host pids, from inside the job's PID namespace too
  e2e::Child c = e2e::spawn({e2e::bin("aftermath"), "run", "--out", out(), "--timeout", "60s", "--",
                             e2e::bin("tc_hang"), "--children", "2", "--pidfile", pids},
                            dir / "o", dir / "e");
  ASSERT_TRUE(e2e::wait_lines(pids, 3, 10s));
  ::syscall(SYS_pidfd_send_signal, c.pidfd, SIGINT, nullptr, 0);
  int status = e2e::wait_for(c, 20s);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  auto all = e2e::read_pids(pids);
  EXPECT_TRUE(e2e::all_gone_within(all, 10s));
  e2e::kill_leftovers(all);
  auto result = nlohmann::json::parse(e2e::slurp(out() + "/result.json"));
  EXPECT_EQ(result["scenarios"][0]["verdict"], "error");
}

// SIGKILL the harness mid-run: no job process may survive it by more than a
// second, in either containment mode.
class HarnessKilled : public ::testing::TestWithParam<std::string> {};

TEST_P(HarnessKilled, NoJobProcessSurvives) {
  // The harness's reaper is orphaned when the harness dies: have it come back
  // to this test, which reaps it, rather than to whatever init this machine has.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  TempDir dir;
  std::string pids = dir / "pids";
  e2e::PidSink sink(pids);  // host pids, from inside the job's PID namespace too
  e2e::Child c = e2e::spawn(
      {e2e::bin("aftermath"), "run", "--contain", GetParam(), "--out", dir / "out", "--timeout",
       "60s", "--", e2e::bin("tc_hang"), "--ignore-term", "--children", "3", "--pidfile", pids},
      dir / "o", dir / "e");
  ASSERT_TRUE(e2e::wait_lines(pids, 4, 10s)) << e2e::slurp(dir / "e");
  auto all = e2e::read_pids(pids);
  for (int p : all) ASSERT_TRUE(e2e::alive(p));
  ::syscall(SYS_pidfd_send_signal, c.pidfd, SIGKILL, nullptr, 0);
  e2e::wait_for(c, 10s);
  EXPECT_TRUE(e2e::all_gone_within(all, 10s)) << "job processes outlived the harness";
  e2e::kill_leftovers(all);
  EXPECT_TRUE(e2e::reap_orphans(5s));
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
}

INSTANTIATE_TEST_SUITE_P(Containment, HarnessKilled, ::testing::Values("auto", "subreaper"));

}  // namespace

namespace {

// How every orphan ended is known, even when the teardown's SIGTERMs and the
// closing of the reaper's lifeline land in the same instant: the reaper
// reports what it reaps on its way out. 8 runs, 4 side by side on a small
// machine, make that instant common (before the fix, 11 of 30 orphan
// outcomes were lost in 15 loaded runs).
TEST(Parallel, EveryOrphansOutcomeIsKnownUnderLoad) {
  TempDir dir;
  auto r = e2e::aftermath(dir,
                          {"run", "--out", dir / "out", "--repeat", "8", "--jobs", "4",
                           e2e::src("scenarios/orphan-outlives-parent.yaml")},
                          std::chrono::seconds(120));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_EQ(r.result["scenarios"].size(), 8u);
  for (const auto& s : r.result["scenarios"]) {
    int orphans = 0;
    for (const auto& p : s["processes"]) {
      if (p.value("top", false)) continue;
      ++orphans;
      ASSERT_TRUE(p["outcome"].is_object()) << p.dump();
      EXPECT_EQ(p["outcome"]["text"], "killed(SIGTERM)") << p.dump();
    }
    EXPECT_EQ(orphans, 2);
  }
}

// The same leaky scenario 4 times side by side: 4 identical results, each
// attributed to its own run (private /dev/shm per job), and the repeat
// statistics over them.
TEST(Parallel, SameLeakyScenarioFourTimesSideBySide) {
  TempDir dir;
  auto r = e2e::aftermath(dir, {"run", "--out", dir / "out", "--repeat", "4", "--jobs", "4",
                                e2e::src("scenarios/shm-leak.yaml")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_EQ(r.result["scenarios"].size(), 4u);
  std::set<std::string> dirs;
  for (const auto& s : r.result["scenarios"]) {
    EXPECT_EQ(s["verdict"], "xfail");
    dirs.insert(s["out_dir"].get<std::string>());
    nlohmann::json leaked;
    for (const auto& c : s["checks"])
      if (c["name"] == "shm_clean") leaked = c["measured"]["leaked"];
    EXPECT_EQ(leaked.size(), 2u) << "each run sees exactly its own two segments";
    if (s["containment"]["shm"] == "private") {
      for (const auto& e : leaked)
        EXPECT_FALSE(std::filesystem::exists("/dev/shm/" + e["name"].get<std::string>()));
    }
  }
  EXPECT_EQ(dirs.size(), 4u);
  auto agg = r.result["aggregates"][0];
  EXPECT_EQ(agg["runs"], 4);
  EXPECT_EQ(agg["reproduced"], 4);
  EXPECT_FALSE(agg["flaky"].get<bool>());
  EXPECT_NEAR(agg["rate_ci95"][0].get<double>(), 0.510, 0.001);  // Wilson, 4 of 4
  // The rate, in words, wherever a person looks; every run numbered.
  const std::string rate = "reproduced 4/4 (100%, 95% interval 51\u2013100%)";
  EXPECT_NE(r.out.find(rate), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nshm-leak run 3/4 "), std::string::npos) << r.out;
  std::string md = e2e::slurp(dir / "out/summary.md");
  EXPECT_NE(md.find("| shm-leak | 4 | 4 xfail | " + rate + " |"), std::string::npos) << md;
  EXPECT_NE(md.find("| shm-leak run 4/4 | "), std::string::npos) << md;
  std::string html = e2e::slurp(dir / "out/report.html");
  EXPECT_NE(html.find("<td class=\"rate\">" + rate + "</td>"), std::string::npos);
  EXPECT_NE(html.find("<h2>shm-leak run 2/4</h2>"), std::string::npos);
  std::string xml = e2e::slurp(dir / "out/junit.xml");
  EXPECT_NE(xml.find("<property name=\"aftermath.repeat.interval95\" value=\"0.510-1.000\"/>"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<property name=\"aftermath.repeat.flaky\" value=\"false\"/>"),
            std::string::npos);
}

// One verdict, two ways of failing: run 2 leaves an orphan, runs 1 and 3
// exit 3. Every run fails, yet the scenario is flaky, and each report says
// which checks failed in which runs.
TEST_F(Cli, RepeatsThatFailDifferentChecksAreFlaky) {
  std::string counter = dir / "n";
  auto r = run_cmd({"--repeat", "3", "--settle", "3s"},
                   {"/bin/sh", "-c",
                    "n=$(cat " + counter + " 2>/dev/null || echo 0); echo $((n+1)) > " + counter +
                        "; if [ $n = 1 ]; then sleep 1.5 & exit 0; fi; exit 3"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  ASSERT_EQ(r.result["aggregates"].size(), 1u) << r.out;
  const auto& agg = r.result["aggregates"][0];
  EXPECT_EQ(agg["verdicts"], (nlohmann::json{{"fail", 3}}));
  EXPECT_TRUE(agg["flaky"].get<bool>());
  const std::string outcomes = "2/3 fail on job_exit (runs 1, 3); 1/3 fail on no_orphans (run 2)";
  EXPECT_NE(r.out.find("    flaky: " + outcomes + "\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("failed 3/3 (100%, 95% interval 44\u2013100%)"), std::string::npos) << r.out;
  EXPECT_NE(e2e::slurp(out() + "/summary.md").find("is flaky: " + outcomes), std::string::npos);
  EXPECT_NE(e2e::slurp(out() + "/report.html").find("flaky: " + outcomes), std::string::npos);
  EXPECT_NE(e2e::slurp(out() + "/junit.xml")
                .find("<property name=\"aftermath.repeat.outcomes\" value=\"" + outcomes + "\"/>"),
            std::string::npos);
}

// The job's resident memory is on the timeline: a job that touches 96 MiB
// is seen holding at least that much, and the report draws it.
TEST_F(Cli, JobMemoryIsSampledOnTheTimeline) {
  if (::access(e2e::python().c_str(), X_OK) != 0)
    GTEST_SKIP() << e2e::python() << " is not installed";
  auto r = run_cmd({}, {e2e::python(), "-c",
                        "import time\n"
                        "b = bytearray(96 << 20)\n"
                        "for i in range(0, len(b), 4096): b[i] = 1\n"
                        "time.sleep(0.8)\n"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  double peak = 0;
  int samples = 0;
  for (const auto& e : r.result["scenarios"][0]["timeline"]) {
    if (e["kind"] != "memory") continue;
    ++samples;
    peak = std::max(peak, e["rss_bytes"].get<double>());
  }
  EXPECT_GE(samples, 2);
  EXPECT_GE(peak, 96.0 * (1 << 20));
  EXPECT_LT(peak, 1024.0 * (1 << 20));
  std::string html = e2e::slurp(out() + "/report.html");
  EXPECT_NE(html.find("job memory (RSS)"), std::string::npos);
}

// A program that is supposed to fail states so on the command line, and the
// statement is validated like a scenario file's (exit 2, nothing launched).
TEST_F(Cli, ExpectationsOnTheCommandLine) {
  auto code = run_cmd({"--expect-exit", "3"}, {e2e::bin("tc_exit"), "--code", "3"});
  EXPECT_EQ(code.result["scenarios"][0]["verdict"], "pass")
      << code.result["scenarios"][0]["verdict_reason"];
  EXPECT_EQ(code.exit_code, 0);
  auto sig = run_cmd({"--expect-signal", "SIGSEGV", "--expect-output", "about to end"},
                     {e2e::bin("tc_exit"), "--signal", "SIGSEGV"});
  EXPECT_EQ(sig.result["scenarios"][0]["verdict"], "pass")
      << sig.result["scenarios"][0]["verdict_reason"];
  auto wrong = run_cmd({"--expect-exit", "3"}, {e2e::bin("tc_exit"), "--code", "4"});
  EXPECT_EQ(wrong.result["scenarios"][0]["verdict"], "fail");
  EXPECT_EQ(wrong.exit_code, 1);
  // A known bug: exactly these checks fail -> xfail, exit 0.
  auto x = run_cmd({"--expect-fail", "no_orphans,all_exited", "--check",
                    "no_orphans: {grace: 300ms}", "--timeout", "10s", "--settle", "1s"},
                   {e2e::bin("tc_orphan"), "--children", "1", "--child-life", "30s"});
  EXPECT_EQ(x.result["scenarios"][0]["verdict"], "xfail")
      << x.result["scenarios"][0]["verdict_reason"];
  EXPECT_EQ(x.exit_code, 0);
  EXPECT_EQ(e2e::check(x, "no_orphans")["measured"]["grace_ms"], 300.0);
}

TEST_F(Cli, BadExpectationsAreRejectedBeforeLaunch) {
  struct Case {
    std::vector<std::string> opts;
    std::string message;
  };
  std::vector<Case> cases = {
      {{"--expect-exit", "300"}, "--expect-exit: '300' is not an exit code (an integer 0..255)"},
      {{"--expect-signal", "SIGFOO"}, "--expect-signal: unknown signal 'SIGFOO'"},
      {{"--expect-output", "(unclosed"}, "--expect-output: invalid regex '(unclosed'"},
      {{"--expect-fail", "no_such_check"}, "--expect-fail: unknown check 'no_such_check'"},
      {{"--expect-fail", "memory_growth"}, "--expect-fail: check 'memory_growth' does not run"},
      {{"--check", "no_orphans: {grace: 5}"}, "no_orphans.grace: bare number '5' needs a unit"},
      {{"--check", "no_such: true"}, "no_such: unknown check 'no_such'"},
      {{"--grace", "{helpr: 3s}"}, "--grace: unknown role 'helpr'"},
  };
  for (const auto& c : cases) {
    std::string marker = dir / "launched";
    auto r = run_cmd(c.opts, {"/bin/sh", "-c", "touch " + marker});
    EXPECT_EQ(r.exit_code, 2) << c.message << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos)
        << "want: " << c.message << "\ngot: " << r.err;
    EXPECT_FALSE(std::filesystem::exists(marker)) << c.message;
  }
}

TEST_F(Cli, ValidateAndDryRunLaunchNothing) {
  auto ok = e2e::aftermath(dir, {"validate", e2e::src("scenarios/nightly-cpu.suite")});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("all valid"), std::string::npos) << ok.out;
  std::string bad = dir / "bad.yaml";
  std::ofstream(bad) << "name: bad\njob:\n  command: /bin/true\ntimeouts: {job: 5}\n";
  auto no = e2e::aftermath(dir, {"validate", bad});
  EXPECT_EQ(no.exit_code, 2);
  EXPECT_NE(no.err.find(bad + ":4:"), std::string::npos) << no.err;
  std::string marker = dir / "launched";
  auto dry = run_cmd({"--dry-run"}, {"/bin/sh", "-c", "touch " + marker});
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_FALSE(std::filesystem::exists(marker));
  EXPECT_FALSE(std::filesystem::exists(dir / "out/result.json"));
}

// --shard I/N: the shards of a suite name each of its scenarios once; a bad
// shard or one with -- COMMAND is refused before anything runs.
TEST_F(Cli, ShardsSliceASuite) {
  std::multiset<std::string> seen;
  std::size_t total = 0;
  for (int i = 1; i <= 3; ++i) {
    auto r = e2e::aftermath(dir, {"run", "--dry-run", "--shard", std::to_string(i) + "/3",
                                  e2e::src("scenarios/nightly-cpu.suite")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::istringstream in(r.out);
    std::string line;
    ASSERT_TRUE(std::getline(in, line));
    EXPECT_NE(line.find("aftermath run --shard " + std::to_string(i) + "/3: "), std::string::npos)
        << line;
    total = std::stoul(line.substr(line.find(" of ") + 4));
    while (std::getline(in, line))
      if (line.rfind("  ", 0) == 0) seen.insert(line.substr(2));
  }
  EXPECT_EQ(seen.size(), total);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), total)
      << "a scenario in two shards";
  auto bad =
      e2e::aftermath(dir, {"run", "--shard", "4/3", e2e::src("scenarios/nightly-cpu.suite")});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--shard: expected I/N"), std::string::npos) << bad.err;
  auto cmd = run_cmd({"--shard", "1/2"}, {"/bin/true"});
  EXPECT_EQ(cmd.exit_code, 2);
  EXPECT_NE(cmd.err.find("--shard slices scenario files and suites"), std::string::npos) << cmd.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "out/result.json"));
  // More shards than scenarios: the empty one still writes its reports, and
  // says which slice it was, for a job array's merge.
  auto empty = e2e::aftermath(
      dir, {"run", "--out", dir / "out", "--shard", "2/2", e2e::src("scenarios/clean-job.yaml")});
  ASSERT_EQ(empty.exit_code, 0) << empty.out << empty.err;
  ASSERT_FALSE(empty.result.is_null()) << empty.out << empty.err;
  EXPECT_EQ(empty.result["scenarios"].size(), 0u);
  EXPECT_EQ(empty.result["shard"]["index"], 2);
  EXPECT_EQ(empty.result["shard"]["total"], 1);
}

// aftermath merge: a small suite run as two shards into two folders becomes
// one run again, in the suite's order, every report covering every scenario
// and every log found from the merged folder. A missing shard is said (exit
// 1, reports still written), and so is a red verdict.
TEST_F(Cli, MergeMakesOneRunOfTheShards) {
  namespace fs = std::filesystem;
  const std::vector<std::string> suite = {"clean-job", "exit-code-expected", "killed-by-signal",
                                          "zombie-unreaped"};
  std::vector<std::string> files;
  for (const auto& name : suite) files.push_back(e2e::src("scenarios/" + name + ".yaml"));
  for (int i = 1; i <= 2; ++i) {
    std::vector<std::string> args{"run", "--out", dir / ("shard-" + std::to_string(i)), "--shard",
                                  std::to_string(i) + "/2"};
    args.insert(args.end(), files.begin(), files.end());
    auto r = e2e::aftermath(dir, args);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  auto shard1 = nlohmann::json::parse(e2e::slurp(dir / "shard-1/result.json"));
  EXPECT_EQ(shard1["shard"], nlohmann::json::parse(R"({"index": 1, "count": 2, "total": 4,
      "positions": [0, 2], "names": ["clean-job", "killed-by-signal"]})"));

  // Given out of order, one as a folder and one as a file.
  auto m =
      e2e::aftermath(dir, {"merge", "--out", out(), dir / "shard-2", dir / "shard-1/result.json"});
  ASSERT_EQ(m.exit_code, 0) << m.out << m.err;
  ASSERT_FALSE(m.result.is_null()) << m.err;
  std::vector<std::string> names;
  for (const auto& sc : m.result["scenarios"]) names.push_back(sc["name"]);
  EXPECT_EQ(names, suite);
  EXPECT_EQ(m.result["summary"]["scenarios"], 4);
  EXPECT_EQ(m.result["summary"]["pass"], 3);
  EXPECT_EQ(m.result["summary"]["xfail"], 1);
  EXPECT_EQ(m.result["merge"]["complete"], true);
  for (const char* file : {"result.json", "junit.xml", "report.html", "trace.json", "summary.md"})
    EXPECT_NE(m.out.find(out() + "/" + file + "\n"), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("reports: " + out() +
                       "/{result.json, junit.xml, report.html, trace.json, summary.md}"),
            std::string::npos)
      << m.out;
  const std::string junit = e2e::slurp(out() + "/junit.xml");
  std::size_t suites = 0;
  for (auto at = junit.find("<testsuite "); at != std::string::npos;
       at = junit.find("<testsuite ", at + 1))
    ++suites;
  EXPECT_EQ(suites, suite.size()) << junit;
  const std::string summary = e2e::slurp(out() + "/summary.md"),
                    html = e2e::slurp(out() + "/report.html");
  for (const auto& name : suite) {
    EXPECT_NE(junit.find("<testsuite name=\"" + name + "\""), std::string::npos) << name;
    EXPECT_NE(summary.find("| " + name + " |"), std::string::npos) << name;
    EXPECT_NE(html.find(name), std::string::npos) << name;
  }
  // The logs stay in the shards' folders and are found from the merged one.
  for (const auto& sc : m.result["scenarios"]) {
    const std::string stdout_path = sc["stdout_path"];
    EXPECT_TRUE(fs::path(stdout_path).is_relative()) << stdout_path;
    EXPECT_TRUE(fs::exists(fs::path(out()) / stdout_path)) << stdout_path;
    EXPECT_TRUE(fs::is_directory(fs::path(out()) / sc["out_dir"].get<std::string>()));
  }
  EXPECT_EQ(m.result["scenarios"][0]["stdout_path"], "../shard-1/clean-job/stdout.log");

  // Shard 2 missing: said, recorded, exit 1; the partial reports are written.
  auto partial = e2e::aftermath(dir, {"merge", "--out", dir / "partial", dir / "shard-1"});
  EXPECT_EQ(partial.exit_code, 1) << partial.out << partial.err;
  EXPECT_NE(partial.err.find("shard 2/2 is missing: positions 1, 3 (of 4, from 0) did not run"),
            std::string::npos)
      << partial.err;
  auto partial_result = nlohmann::json::parse(e2e::slurp(dir / "partial/result.json"));
  EXPECT_EQ(partial_result["merge"]["missing_shards"], nlohmann::json({2}));
  EXPECT_NE(e2e::slurp(dir / "partial/summary.md").find("incomplete"), std::string::npos);

  // A red verdict in a shard makes the merge exit 1, as it made the run.
  auto red = nlohmann::json::parse(e2e::slurp(dir / "shard-2/result.json"));
  red["scenarios"][0]["verdict"] = "fail";
  dir.write("red/result.json", red.dump());
  auto failing =
      e2e::aftermath(dir, {"merge", "--out", dir / "failing", dir / "shard-1", dir / "red"});
  EXPECT_EQ(failing.exit_code, 1) << failing.out << failing.err;
  EXPECT_EQ(failing.err.find("incomplete"), std::string::npos) << failing.err;
}

// Bad merge input gets one line naming the file, exit 2, and nothing is written.
TEST_F(Cli, MergeRefusesBadInputAndWritesNothing) {
  const std::string fixture = e2e::slurp(e2e::src("tests/data/reports/result.json"));
  ASSERT_FALSE(fixture.empty());
  dir.write("a/result.json", fixture);
  dir.write("b/result.json", fixture);
  dir.write("text.json", "this is not JSON");
  dir.write("other.json", R"({"results": []})");
  nlohmann::json odd = nlohmann::json::parse(fixture);
  odd["scenarios"][2]["checks"][0]["status"] = "maybe";
  dir.write("odd.json", odd.dump());
  std::filesystem::create_directories(dir / "empty");
  const std::string a = dir / "a", b = dir / "b";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{dir / "missing"}, dir / "missing: no such file or folder"},
      {{dir / "empty"}, dir / "empty: no result.json in this folder"},
      {{a, dir / "text.json"}, dir / "text.json: not valid JSON"},
      {{dir / "other.json"},
       dir / "other.json: not an aftermath result.json (no \"scenarios\" list)"},
      {{a, dir / "odd.json"},
       dir / "odd.json: scenarios[2].checks[0].status has an unknown value \"maybe\""},
      {{a, b}, "scenario 'clean-job' is in both " + a + "/result.json and " + b + "/result.json"},
      {{a, a + "/result.json"}, a + "/result.json: the same result.json as " + a + ", given twice"},
  };
  for (const auto& [inputs, message] : cases) {
    std::vector<std::string> args{"merge", "--out", out()};
    args.insert(args.end(), inputs.begin(), inputs.end());
    auto r = e2e::aftermath(dir, args);
    EXPECT_EQ(r.exit_code, 2) << message << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("aftermath merge: " + message + "\n"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("nothing was written"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out())) << message;
  }
  // report and diff refuse a document that is not one the same way.
  const std::string odd_why =
      dir / "odd.json: scenarios[2].checks[0].status has an unknown value \"maybe\"\n";
  auto rendered = e2e::aftermath(dir, {"report", dir / "odd.json", "--out", dir / "rendered"});
  EXPECT_EQ(rendered.exit_code, 2) << rendered.out << rendered.err;
  EXPECT_NE(rendered.err.find("aftermath report: " + odd_why), std::string::npos) << rendered.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "rendered/report.html"));
  auto diffed = e2e::aftermath(dir, {"diff", a + "/result.json", dir / "odd.json"});
  EXPECT_EQ(diffed.exit_code, 2) << diffed.out << diffed.err;
  EXPECT_NE(diffed.err.find("aftermath diff: " + odd_why), std::string::npos) << diffed.err;
  // Merging into an input's own folder would overwrite it.
  auto into = e2e::aftermath(dir, {"merge", "--out", a, a, b});
  EXPECT_EQ(into.exit_code, 2);
  EXPECT_NE(into.err.find("holds the input"), std::string::npos) << into.err;
  EXPECT_EQ(e2e::slurp(a + "/result.json"), fixture);
  EXPECT_FALSE(std::filesystem::exists(a + "/junit.xml"));
}

// grace per role: a helper may linger longer than the default.
TEST_F(Cli, GracePerRoleOnTheCommandLine) {
  auto strict = run_cmd({"--grace", "{default: 100ms, unknown: 100ms}", "--settle", "3s"},
                        {e2e::bin("tc_orphan"), "--children", "1", "--child-life", "600ms"});
  EXPECT_EQ(e2e::check_status(strict, "no_orphans"), "fail")
      << e2e::check(strict, "no_orphans")["reason"];
  auto lenient = run_cmd({"--grace", "{default: 100ms, unknown: 2s}", "--settle", "3s"},
                         {e2e::bin("tc_orphan"), "--children", "1", "--child-life", "600ms"});
  EXPECT_EQ(e2e::check_status(lenient, "no_orphans"), "pass")
      << e2e::check(lenient, "no_orphans")["reason"];
  EXPECT_EQ(e2e::check(lenient, "no_orphans")["measured"]["grace_by_role_ms"]["unknown"], 2000.0);
}

}  // namespace

namespace {

// Without the kernel's process events, pid 1 of the job's namespace watches
// the namespace's own last pid and says when the job forked: a child forked
// late, living half a second, is found from that alone (the look at every
// process's children files comes only every few seconds then).
TEST_F(Cli, WithoutProcessEventsTheReaperSaysWhenTheJobForks) {
  const char* late =
      "import os, time\n"
      "time.sleep(1.0)\n"
      "pid = os.fork()\n"
      "if pid == 0:\n"
      "    time.sleep(0.5)\n"
      "    os._exit(0)\n"
      "os.waitpid(pid, 0)\n";
  ::setenv("AFTERMATH_PROC_EVENTS", "0", 1);
  auto r = run_cmd({}, {e2e::python(), "-c", late});
  ::unsetenv("AFTERMATH_PROC_EVENTS");
  ASSERT_FALSE(r.result.is_null()) << r.err;
  const auto& s = r.result["scenarios"][0];
  if (s["containment"]["mode"] == "subreaper")
    GTEST_SKIP() << "no PID namespace here: " << s["containment"]["note"];
  EXPECT_EQ(s["containment"]["forks"], "reaper");
  int top = s["top"]["pid"];
  int children = 0;
  for (const auto& p : s["processes"])
    if (p["ppid"] == top) ++children;
  EXPECT_EQ(children, 1) << s["processes"].dump(1).substr(0, 2000);
  EXPECT_EQ(s["verdict"], "pass") << s["verdict_reason"];
}

// A child reaped by its own parent: its status comes from the kernel's exit
// event; where there are none, the report says the status is unknown.
TEST_F(Cli, ExitStatusOfAProcessReapedByItsParent) {
  if (::geteuid() != 0) GTEST_SKIP() << "process events need root";
  auto r = run_cmd({}, {e2e::bin("tc_clean"), "--children", "2", "--work", "300ms"});
  ASSERT_FALSE(r.result.is_null()) << r.err;
  int top = r.result["scenarios"][0]["top"]["pid"];
  int children = 0;
  for (const auto& p : r.result["scenarios"][0]["processes"])
    if (p["ppid"] == top) {
      ++children;
      EXPECT_EQ(p["outcome"]["text"], "exited(0)") << p.dump();
    }
  EXPECT_EQ(children, 2);
  ::setenv("AFTERMATH_PROC_EVENTS", "0", 1);
  auto blind = run_cmd({}, {e2e::bin("tc_clean"), "--children", "2", "--work", "300ms"});
  ::unsetenv("AFTERMATH_PROC_EVENTS");
  bool said = false;
  for (const auto& o : blind.result["scenarios"][0]["timeline"])
    if (o.value("kind", "") == "note" &&
        o.value("text", "").find("exit status unknown") != std::string::npos)
      said = true;
  EXPECT_TRUE(said) << blind.result["scenarios"][0]["timeline"].dump(1).substr(0, 3000);
}

}  // namespace

namespace {

// no_hang's stall rule: a job that stops making progress is a hang as soon
// as the stall window passes, long before its deadline; a slow job that keeps
// working between long sleeps is not.
TEST_F(Cli, StallRuleDeclaresAHangWhenProgressStops) {
  auto r = run_cmd({"--timeout", "60s", "--check", "no_hang: {stall: 2s}"},
                   {e2e::bin("tc_hang"), "--life", "50s", "--children", "1"});
  expect_stalled(r, 30000.0);  // the 60 s deadline was not waited for
  auto c = e2e::check(r, "no_hang");
  double stopped = c["measured"]["progress_stopped_ms"], verdict = c["measured"]["verdict_ms"];
  EXPECT_NEAR(verdict - stopped, 2000.0 + c["measured"]["cpu_wait_ms"].get<double>(), 1e-3);
  EXPECT_GE(c["measured"]["diagnosis"].size(), 1u);  // diagnosed as at a deadline
}

TEST_F(Cli, StallRuleLeavesASlowButProgressingJobAlone) {
  // Four rounds of 0.2 s of CPU then 2 s asleep: its only progress is that
  // CPU time, and the job (8.8 s and more) outlasts the 5 s window, which a
  // rule blind to CPU work would call at 5 s. The window leaves 3 s beside
  // each sleep for a loaded machine to start Python and let it spin: a 3 s
  // window with the sleep first once saw no work before its end.
  const char* slow =
      "import time\n"
      "for _ in range(4):\n"
      "    t = time.process_time()\n"
      "    while time.process_time() - t < 0.2: pass\n"
      "    time.sleep(2.0)\n";
  expect_progressing(run_cmd({"--timeout", "60s", "--check", "no_hang: {stall: 5s}"},
                             {e2e::python(), "-c", slow}));
}

// Eight processes that only poll: every 100 ms each wakes and spins for
// 0.5 ms (as a hung rank's network loop wakes), 0.5% of a core each, 4%
// together: more than the 1% that summed CPU time once took for progress,
// each far under the 2% a poller may use. Nothing progresses: a hang at the
// stall window, not at the deadline.
TEST_F(Cli, ManyPollersThatDoNoWorkAreAHang) {
  const char* pollers =
      "import os, time\n"
      "for _ in range(7):\n"
      "    if os.fork() == 0: break\n"
      "while True:\n"
      "    t = time.perf_counter()\n"
      "    while time.perf_counter() - t < 0.0005: pass\n"
      "    time.sleep(0.1)\n";
  // The 60 s deadline is not waited for.
  expect_stalled(run_cmd({"--timeout", "60s", "--check", "no_hang: {stall: 4s}"},
                         {e2e::python(), "-c", pollers}),
                 30000.0);
}

// A job the machine keeps from running is not hung. The job pins itself to
// one CPU at SCHED_IDLE, where a thread of this test spins at normal
// priority for 8 s, and itself spins 6 s by the clock: runnable all along,
// it gets about 0.3% of that CPU (under the 2% of a core a poller may use)
// and waits until the test's thread stops (its next slice may otherwise be
// more than 10 s away). Without the time it waited taken out of the window,
// the stall rule calls it hung 4 s after its switch; the three windows of
// waiting left out (12 s) outlast the 8 s. With a 0.5 s window it waits
// longer than three windows: a hang, not counting 1.5 s.
TEST_F(Cli, AJobKeptWaitingForACpuIsNotAHangForUpToThreeWindows) {
  cpu_set_t mine;
  ASSERT_EQ(::sched_getaffinity(0, sizeof mine, &mine), 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &mine)) ++cpu;
  // Spins on `cpu` for 8 s at most: the starvation ends then, whenever the
  // scheduler would next have given the job a slice.
  struct Spinner {
    std::atomic<bool> stop{false};
    std::thread thread;
    explicit Spinner(int cpu)
        : thread([this, cpu] {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            ::pthread_setaffinity_np(::pthread_self(), sizeof one, &one);
            const auto end = std::chrono::steady_clock::now() + 8s;
            while (!stop.load(std::memory_order_relaxed) &&
                   std::chrono::steady_clock::now() < end) {
            }
          }) {}
    ~Spinner() {
      stop = true;
      thread.join();
    }
  };
  const char* starved =
      "import os, sys, time\n"
      "os.sched_setaffinity(0, {int(sys.argv[1])})\n"
      "os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))\n"
      "def waited():\n"
      "    with open('/proc/self/schedstat') as f: return int(f.read().split()[1]) / 1e9\n"
      "w, c, t = waited(), time.process_time(), time.monotonic()\n"
      "while time.monotonic() - t < 6.0: pass\n"
      "print(f'waited {waited() - w:.3f} cpu {time.process_time() - c:.3f}')\n";
  auto run = [&](const char* window) {
    Spinner spinner(cpu);
    return run_cmd({"--timeout", "60s", "--check", std::string("no_hang: {stall: ") + window + "}"},
                   {e2e::python(), "-c", starved, std::to_string(cpu)});
  };
  auto kept = run("4s");
  expect_progressing(kept);
  // The plant: kept from the CPU for longer than the window, on less CPU
  // time than the rule counts as work.
  const std::string said = e2e::job_output(kept.result["scenarios"][0], "stdout");
  double waited = -1, used = -1;
  ASSERT_EQ(std::sscanf(said.c_str(), "waited %lf cpu %lf", &waited, &used), 2) << said;
  EXPECT_GT(waited, 5.0) << "the job was not kept waiting";
  EXPECT_LT(used, 0.08) << "the job had CPU time enough to count as work (2% of the window)";

  auto longer = run("500ms");
  // A stall (had the job reached its end first, no_hang would pass), not
  // the 60 s deadline.
  expect_stalled(longer, 60000.0);
  auto c = e2e::check(longer, "no_hang");
  EXPECT_LE(c["measured"]["cpu_wait_ms"].get<double>(), 1500.0);
  EXPECT_NE(c["reason"].get<std::string>().find("a job process waited for a CPU"),
            std::string::npos)
      << c["reason"];
}

// A job that uses next to no CPU but moves data (2 KiB written every
// second, the pace of a slow loader or a job stepping on a slow peer) makes
// progress.
TEST_F(Cli, AJobThatMovesDataOnLittleCpuIsNotAHang) {
  const char* writer =
      "import os, sys, tempfile, time\n"
      "fd, path = tempfile.mkstemp()\n"
      "os.unlink(path)\n"
      "for _ in range(8):\n"
      "    os.write(fd, b'x' * 2048)\n"
      "    time.sleep(1.0)\n";
  expect_progressing(run_cmd({"--timeout", "60s", "--check", "no_hang: {stall: 3s}"},
                             {e2e::python(), "-c", writer}));
}

// after_failure: a child fails, its sibling keeps working (CPU, the kind of
// progress that hid mp.spawn's hang), the parent waits for both forever.
// From the failure on only the parent's reaction counts: a hang within the
// stall window. Without after_failure the same job is busy to the deadline.
TEST_F(Cli, AfterAFailureOnlyTheLaunchersReactionIsProgress) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "the exit status of a child its parent reaps comes from process events: root";
  const char* job =
      "import os, sys, time\n"
      "a = os.fork()\n"
      "if a == 0:\n"
      "    time.sleep(0.5)\n"
      "    os._exit(3)\n"
      "b = os.fork()\n"
      "if b == 0:\n"
      "    while True: sum(range(10000))\n"
      "os.waitpid(a, 0)\n"
      "os.waitpid(b, 0)\n";
  expect_stalled(
      run_cmd({"--timeout", "15s", "--check", "no_hang: {stall: 3s, after_failure: true}"},
              {e2e::python(), "-c", job}),
      15000.0);
  auto without =
      run_cmd({"--timeout", "8s", "--check", "no_hang: {stall: 3s}"}, {e2e::python(), "-c", job});
  ASSERT_FALSE(without.result.is_null()) << without.err;
  auto d = e2e::check(without, "no_hang");
  EXPECT_EQ(d["status"], "fail");
  EXPECT_EQ(d["reason"].get<std::string>().find("progress stopped"), std::string::npos)
      << "the busy sibling is progress without after_failure: " << d["reason"];
}

}  // namespace

namespace {

// The repro line of a run keeps every option that changes its verdict: run
// again as printed, an xfail run is an xfail again (the same name, the same
// expectations and checks), not a failure.
TEST(CliRepro, TheReproLineKeepsTheVerdictsOptions) {
  TempDir dir;
  auto r = e2e::aftermath(
      dir, {"run", "--out", dir / "out", "--name", "orphan-known", "--grace", "100ms",
            "--expect-fail", "no_orphans", "--check", "no_hang: {stall: 20s}", "--",
            e2e::bin("tc_orphan"), "--child-life", "1500ms"});
  ASSERT_FALSE(r.result.is_null()) << r.err;
  const auto& s = r.result["scenarios"][0];
  ASSERT_EQ(s["verdict"], "xfail") << s["verdict_reason"];
  std::string repro = s["repro"];
  for (const char* part : {"--name orphan-known", "--expect-fail no_orphans", "--grace 100ms",
                           "--check 'no_hang: {stall: 20s}'"})
    EXPECT_NE(repro.find(part), std::string::npos) << part << " not in: " << repro;
  // Rerun exactly as printed, in a folder of its own (the default --out).
  TempDir again;
  e2e::Child c = e2e::spawn({"/bin/sh", "-c", "cd " + again.path() + " && " + repro}, again / "o",
                            again / "e");
  ASSERT_GE(e2e::wait_for(c, std::chrono::seconds(60)), 0);
  auto rerun = nlohmann::json::parse(e2e::slurp(again / "aftermath-out/result.json"));
  EXPECT_EQ(rerun["scenarios"][0]["name"], "orphan-known");
  EXPECT_EQ(rerun["scenarios"][0]["verdict"], "xfail") << rerun["scenarios"][0]["verdict_reason"];
}

// An expected exit status is the verdict's too: a job that must exit 3 passes
// when it does, and its repro line says so, or the rerun's job_exit fails.
TEST(CliRepro, TheReproLineKeepsTheExpectedExit) {
  TempDir dir;
  auto r = e2e::aftermath(
      dir, {"run", "--out", dir / "out", "--expect-exit", "3", "--", "/bin/sh", "-c", "exit 3"});
  ASSERT_FALSE(r.result.is_null()) << r.err;
  const auto& s = r.result["scenarios"][0];
  ASSERT_EQ(s["verdict"], "pass") << s["verdict_reason"];
  std::string repro = s["repro"];
  EXPECT_NE(repro.find("--expect-exit 3"), std::string::npos) << repro;
  TempDir again;
  e2e::Child c = e2e::spawn({"/bin/sh", "-c", "cd " + again.path() + " && " + repro}, again / "o",
                            again / "e");
  ASSERT_GE(e2e::wait_for(c, std::chrono::seconds(60)), 0);
  auto rerun = nlohmann::json::parse(e2e::slurp(again / "aftermath-out/result.json"));
  EXPECT_EQ(rerun["scenarios"][0]["verdict"], "pass") << rerun["scenarios"][0]["verdict_reason"];
}

}  // namespace

namespace {

// What a first-time user reads: the version, the exit codes, a pytest help
// that is pytest's, scripts that answer --help without building anything.
TEST(CliHelp, VersionExitCodesAndHelpThatFitTheCommand) {
  TempDir dir;
  auto v = e2e::aftermath(dir, {"--version"});
  EXPECT_EQ(v.exit_code, 0) << v.err;
  EXPECT_EQ(v.out.rfind("aftermath ", 0), 0u) << v.out;
  auto h = e2e::aftermath(dir, {"--help"});
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("Exit status: 0 when every verdict is pass"), std::string::npos) << h.out;
  auto p = e2e::aftermath(dir, {"pytest", "--help"});
  EXPECT_EQ(p.exit_code, 0);
  for (const char* run_only :
       {"--shard", "--slurm", "--jobs", "scenario .yaml files", "-- COMMAND"})
    EXPECT_EQ(p.out.find(run_only), std::string::npos) << run_only << " in pytest's help:\n"
                                                       << p.out;
  EXPECT_NE(p.out.find("the pytest run is expected to exit"), std::string::npos) << p.out;
  auto r = e2e::aftermath(dir, {"run", "--help"});
  EXPECT_NE(r.out.find("--shard"), std::string::npos);
  // Every script: --help prints its usage at once, builds and makes nothing.
  std::vector<std::string> scripts;
  for (const auto& e : std::filesystem::directory_iterator(e2e::src("scripts")))
    if (e.path().extension() == ".sh") scripts.push_back("scripts/" + e.path().filename().string());
  std::sort(scripts.begin(), scripts.end());
  EXPECT_GE(scripts.size(), 10u);
  for (const std::string& script : scripts) {
    TempDir cwd;
    e2e::Child c =
        e2e::spawn({"/bin/sh", "-c", "cd " + cwd.path() + " && " + e2e::src(script) + " --help"},
                   cwd / "o", cwd / "e");
    int status = e2e::wait_for(c, std::chrono::seconds(20));
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << script << ": " << e2e::slurp(cwd / "e");
    EXPECT_FALSE(e2e::slurp(cwd / "o").empty()) << script;
    EXPECT_FALSE(std::filesystem::exists(cwd / "--help")) << script << " took --help for a folder";
  }
}

}  // namespace
