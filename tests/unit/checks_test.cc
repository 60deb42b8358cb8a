// Unit tests for the check catalogue (harness/check/checks): every check runs
// on hand-made timelines (run_fixtures.h), once where it must pass and once
// with the fault planted, and the measured values are pinned.
#include "harness/check/checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/core/timeline.h"
#include "harness/scenario/scenario.h"
#include "tests/unit/run_fixtures.h"

namespace aftermath {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

using namespace testing_run;

// ============================================================ the clean run

TEST(CleanRun, EveryCheckPasses) {
  Scenario sc = make_scenario();
  Timeline tl = sorted(clean_run());
  auto results = run_checks(sc, tl, build_histories(tl));
  // Every default but tests_clean, which only a job that reports pytest tests gets.
  std::vector<std::string> judged;
  for (const auto& name : default_checks())
    if (name != "tests_clean") judged.push_back(name);
  ASSERT_EQ(results.size(), judged.size());
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(results[i].name, judged[i]);
    // A timeline without a device side: the device checks skip, never pass.
    bool device =
        results[i].name.rfind("device_", 0) == 0 || results[i].name == "no_device_holders";
    EXPECT_EQ(results[i].status, device ? CheckStatus::Skipped : CheckStatus::Pass)
        << results[i].name << ": " << results[i].reason;
    EXPECT_FALSE(results[i].expected_to_fail);
  }
  Decision d = decide_verdict(sc, results);
  EXPECT_EQ(d.verdict, Verdict::Pass);
  EXPECT_EQ(d.reason, "every check passed");
}

// ============================================================ all_exited

TEST(AllExited, PassesWhenEveryProcessEndsBeforeTeardown) {
  auto r = check("all_exited", make_scenario(), clean_run());
  EXPECT_EQ(r.name, "all_exited");
  EXPECT_EQ(r.status, CheckStatus::Pass);
  EXPECT_TRUE(r.measured["survivors"].empty());
  EXPECT_EQ(r.measured["processes"].get<int>(), 2);
  EXPECT_DOUBLE_EQ(r.measured["last_exit_after_top_ms"].get<double>(), 0.0);
  EXPECT_THAT(r.reason, HasSubstr("2 processes"));
}

TEST(AllExited, MeasuresTheLastExitAfterTheTop) {
  Timeline tl = skeleton();
  life(tl, 101, kTop, msec(20), msec(750), msec(751));
  auto r = check("all_exited", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Pass);
  EXPECT_DOUBLE_EQ(r.measured["last_exit_after_top_ms"].get<double>(), 50.0);
}

TEST(AllExited, ExitExactlyAtTeardownCountsAsExited) {
  Timeline tl = skeleton();
  life(tl, 101, kTop, msec(20), kTeardown, kTeardown + msec(1));
  EXPECT_EQ(check("all_exited", make_scenario(), tl).status, CheckStatus::Pass);
}

TEST(AllExited, FailsOnProcessesAliveAtTeardown) {
  Timeline tl = skeleton();
  life(tl, 101, kTop, msec(20), std::nullopt, std::nullopt);                  // never ends
  life(tl, 102, kTop, msec(30), kTeardown + msec(50), kTeardown + msec(60));  // ended by teardown
  life(tl, 103, kTop, msec(40), msec(300), msec(301));                        // fine
  auto r = check("all_exited", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_EQ(r.measured["processes"].get<int>(), 4);
  const json& s = r.measured["survivors"];
  EXPECT_EQ(pids_of(s), (std::vector<int>{101, 102}));
  EXPECT_TRUE(s[0]["gone_ms"].is_null());
  EXPECT_DOUBLE_EQ(s[1]["gone_ms"].get<double>(), 5050.0);
  EXPECT_EQ(s[0]["role"], "worker");
  EXPECT_TRUE(r.measured["last_exit_after_top_ms"].is_null());
  EXPECT_THAT(r.reason, HasSubstr("2 process(es) still alive at teardown"));
  EXPECT_THAT(r.reason, HasSubstr("101"));
}

TEST(AllExited, FailsWhenTheTopItselfHangs) {
  Timeline tl = skeleton(std::nullopt);
  tl.facts.deadline_hit = true;
  auto r = check("all_exited", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_EQ(pids_of(r.measured["survivors"]), std::vector<int>{kTop});
}

// ============================================================ no_orphans

TEST(NoOrphans, PassesWithoutOrphans) {
  auto r = check("no_orphans", make_scenario(), clean_run());
  EXPECT_EQ(r.status, CheckStatus::Pass);
  EXPECT_TRUE(r.measured["orphans"].empty());  // the top's ppid is the reaper: not an orphan
  EXPECT_DOUBLE_EQ(r.measured["max_orphan_lifetime_ms"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(r.measured["grace_ms"].get<double>(), 1000.0);
  EXPECT_EQ(r.reason, "no process outlived its parent");
}

TEST(NoOrphans, PassesWithAnOrphanGoneWithinGrace) {
  Timeline tl = skeleton();
  life(tl, 101, kTop, msec(20), msec(1200), msec(1201));
  tl.add(obs::proc_parent(msec(720), 101, kInit));
  auto r = check("no_orphans", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Pass);
  ASSERT_EQ(r.measured["orphans"].size(), 1u);
  const json& o = r.measured["orphans"][0];
  EXPECT_EQ(o["pid"], 101);
  EXPECT_DOUBLE_EQ(o["orphaned_ms"].get<double>(), 700.0);  // the parent's exit, not the sample
  EXPECT_DOUBLE_EQ(o["orphan_lifetime_ms"].get<double>(), 500.0);
  EXPECT_EQ(o["over_grace"], false);
  EXPECT_DOUBLE_EQ(r.measured["max_orphan_lifetime_ms"].get<double>(), 500.0);
}

TEST(NoOrphans, FailsOnAnOrphanOutlivingItsParentPastGrace) {
  Timeline tl = skeleton();
  life(tl, 101, kTop, msec(20), msec(100), msec(101));   // the parent, dies early
  life(tl, 102, 101, msec(30), msec(1600), msec(1601));  // its child lives 1.5s more
  tl.add(obs::proc_parent(msec(120), 102, kInit));
  auto r = check("no_orphans", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  ASSERT_EQ(r.measured["orphans"].size(), 1u);
  const json& o = r.measured["orphans"][0];
  EXPECT_EQ(o["pid"], 102);
  EXPECT_EQ(o["parent_pid"], 101);
  EXPECT_DOUBLE_EQ(o["orphaned_ms"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(o["orphan_lifetime_ms"].get<double>(), 1500.0);
  EXPECT_EQ(o["alive_at_teardown"], false);
  EXPECT_EQ(o["over_grace"], true);
  EXPECT_DOUBLE_EQ(r.measured["max_orphan_lifetime_ms"].get<double>(), 1500.0);
  EXPECT_THAT(r.reason, HasSubstr("1 orphan(s) over their grace (1 worker orphaned)"));
  EXPECT_THAT(r.reason, HasSubstr("outlived its parent by 1.5s"));
}

TEST(NoOrphans, FailsOnAProcessFirstSeenUnderTheReaper) {
  // A double fork: its parent died before any sample, so it was first seen
  // already re-parented to the reaper.
  Timeline tl = skeleton();
  life(tl, 103, kInit, msec(50), msec(2050), msec(2051), "daemon", Role::Unknown);
  auto r = check("no_orphans", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  ASSERT_EQ(r.measured["orphans"].size(), 1u);
  const json& o = r.measured["orphans"][0];
  EXPECT_EQ(o["pid"], 103);
  EXPECT_EQ(o["parent_pid"], kInit);
  EXPECT_DOUBLE_EQ(o["orphaned_ms"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(o["orphan_lifetime_ms"].get<double>(), 2000.0);
}

TEST(NoOrphans, FailsOnAnOrphanAliveAtTeardownWhateverTheGrace) {
  Timeline tl = skeleton();
  life(tl, 104, kTop, msec(20), std::nullopt, std::nullopt);
  Scenario sc = make_scenario();
  sc.grace = 100 * kSecond;  // far more than its life: still a failure
  auto r = check("no_orphans", sc, tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  ASSERT_EQ(r.measured["orphans"].size(), 1u);
  const json& o = r.measured["orphans"][0];
  EXPECT_EQ(o["alive_at_teardown"], true);
  EXPECT_EQ(o["over_grace"], true);
  EXPECT_DOUBLE_EQ(o["orphan_lifetime_ms"].get<double>(), 4300.0);  // teardown - top exit
  // Cut short by the harness: a lower bound, and said so.
  EXPECT_EQ(o["lifetime_is_lower_bound"], true);
  EXPECT_EQ(r.measured["max_orphan_lifetime_is_lower_bound"], true);
  EXPECT_THAT(r.reason, HasSubstr("outlived its parent by ≥ 4.3s, cut by teardown"));
}

TEST(NoOrphans, OrphanedByTheTeardownItselfIsNotCounted) {
  // The harness's SIGTERM ended the top a moment before its child: the child
  // is orphaned at/after teardown, which is not the job's doing.
  Timeline tl = skeleton(kTeardown + msec(10), Outcome::killed(SIGTERM));
  life(tl, 101, kTop, msec(20), kTeardown + msec(20), kTeardown + msec(21));
  auto procs = build_histories(sorted(tl));
  ASSERT_EQ(history(procs, 101).orphaned_at, kTeardown + msec(10));
  auto r = check("no_orphans", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Pass);
  EXPECT_TRUE(r.measured["orphans"].empty());
}

Timeline orphan_living(Nanos after_parent) {
  Timeline tl = skeleton();
  life(tl, 101, kTop, msec(20), kTopExit + after_parent, kTopExit + after_parent + msec(1));
  return tl;
}

TEST(NoOrphans, GraceBoundaries) {
  Scenario sc = make_scenario();
  EXPECT_EQ(check("no_orphans", sc, orphan_living(msec(999))).status, CheckStatus::Pass);
  EXPECT_EQ(check("no_orphans", sc, orphan_living(msec(1000))).status, CheckStatus::Pass);
  EXPECT_EQ(check("no_orphans", sc, orphan_living(msec(1001))).status, CheckStatus::Fail);
}

TEST(NoOrphans, PerCheckGraceOverride) {
  Timeline tl = orphan_living(msec(1500));
  Scenario sc = make_scenario();
  EXPECT_EQ(check("no_orphans", sc, tl).status, CheckStatus::Fail);

  sc.checks["no_zombies"].grace = 2 * kSecond;  // another check's grace does not apply
  EXPECT_EQ(check("no_orphans", sc, tl).status, CheckStatus::Fail);

  sc.checks["no_orphans"].grace = 2 * kSecond;
  auto r = check("no_orphans", sc, tl);
  EXPECT_EQ(r.status, CheckStatus::Pass);
  EXPECT_DOUBLE_EQ(r.measured["grace_ms"].get<double>(), 2000.0);

  sc.checks["no_orphans"].grace = msec(100);  // tighter than the scenario's
  sc.grace = 10 * kSecond;
  EXPECT_EQ(check("no_orphans", sc, orphan_living(msec(500))).status, CheckStatus::Fail);
}

// ============================================================ no_zombies

// A worker 101 that lives [20ms, 4s] and its child 105 that exits at
// `exit_at` and is reaped at `gone_at`.
Timeline zombie_run(Nanos exit_at, std::optional<Nanos> gone_at) {
  Timeline tl = skeleton();
  life(tl, 101, kTop, msec(20), msec(4000), msec(4001));
  life(tl, 105, 101, msec(30), exit_at, gone_at, "child", Role::Unknown);
  return tl;
}

TEST(NoZombies, PassesWhenReapedPromptly) {
  auto r = check("no_zombies", make_scenario(), zombie_run(msec(1000), msec(1010)));
  EXPECT_EQ(r.status, CheckStatus::Pass);
  EXPECT_TRUE(r.measured["zombies"].empty());
  EXPECT_DOUBLE_EQ(r.measured["grace_ms"].get<double>(), 1000.0);
}

TEST(NoZombies, PassesWhenReapedAtTheExitInstant) {
  auto r = check("no_zombies", make_scenario(), zombie_run(msec(1000), msec(1000)));
  EXPECT_EQ(r.status, CheckStatus::Pass);
  EXPECT_TRUE(r.measured["zombies"].empty());
}

TEST(NoZombies, FailsOnAnExitedProcessLeftUnreaped) {
  auto r = check("no_zombies", make_scenario(), zombie_run(msec(1000), msec(3000)));
  EXPECT_EQ(r.status, CheckStatus::Fail);
  ASSERT_EQ(r.measured["zombies"].size(), 1u);
  const json& z = r.measured["zombies"][0];
  EXPECT_EQ(z["pid"], 105);
  EXPECT_EQ(z["parent_pid"], 101);
  EXPECT_DOUBLE_EQ(z["zombie_since_ms"].get<double>(), 1000.0);
  EXPECT_DOUBLE_EQ(z["zombie_lifetime_ms"].get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(z["reaped_ms"].get<double>(), 3000.0);
  EXPECT_THAT(r.reason, HasSubstr("1 zombie(s)"));
  EXPECT_THAT(r.reason, HasSubstr("unreaped for 2s (parent 101)"));
}

TEST(NoZombies, SampledZombieStateStartsTheClock) {
  Timeline tl = zombie_run(msec(1000), msec(3000));
  tl.add(obs::proc_state(msec(900), 105, 'Z'));  // seen as Z before the exit event
  auto r = check("no_zombies", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  ASSERT_EQ(r.measured["zombies"].size(), 1u);
  EXPECT_DOUBLE_EQ(r.measured["zombies"][0]["zombie_since_ms"].get<double>(), 900.0);
  EXPECT_DOUBLE_EQ(r.measured["zombies"][0]["zombie_lifetime_ms"].get<double>(), 2100.0);
}

// A scan that finds a zombie gone says only that it was reaped since the
// scan before, which still saw it: a slow sampler (a loaded machine) is not
// the parent's delay. It counts until it was last seen, no longer.
TEST(NoZombies, ScannedGoneCountsUntilItWasLastSeenUnreaped) {
  Timeline tl = zombie_run(msec(1000), std::nullopt);
  tl.add(obs::proc_gone(msec(3000), 105, /*last_seen=*/msec(1900)));
  auto r = check("no_zombies", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Pass) << r.reason;

  // Still seen unreaped 2.5 s after its exit: a zombie, for the time it was seen.
  Timeline late = zombie_run(msec(1000), std::nullopt);
  late.add(obs::proc_gone(msec(3600), 105, /*last_seen=*/msec(3500)));
  r = check("no_zombies", make_scenario(), late);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  ASSERT_EQ(r.measured["zombies"].size(), 1u);
  const json& z = r.measured["zombies"][0];
  EXPECT_DOUBLE_EQ(z["zombie_lifetime_ms"].get<double>(), 2500.0);
  EXPECT_DOUBLE_EQ(z["last_seen_unreaped_ms"].get<double>(), 3500.0);
  EXPECT_DOUBLE_EQ(z["reaped_ms"].get<double>(), 3600.0);

  // Last seen before it exited: it may have been reaped at once.
  Timeline prompt = zombie_run(msec(1000), std::nullopt);
  prompt.add(obs::proc_gone(msec(4000), 105, /*last_seen=*/msec(900)));
  EXPECT_EQ(check("no_zombies", make_scenario(), prompt).status, CheckStatus::Pass);
}

TEST(NoZombies, NeverReapedCountsUntilTheEnd) {
  auto r = check("no_zombies", make_scenario(), zombie_run(msec(1000), std::nullopt));
  EXPECT_EQ(r.status, CheckStatus::Fail);
  ASSERT_EQ(r.measured["zombies"].size(), 1u);
  const json& z = r.measured["zombies"][0];
  EXPECT_DOUBLE_EQ(z["zombie_lifetime_ms"].get<double>(), to_ms(kDone - msec(1000)));
  EXPECT_TRUE(z["reaped_ms"].is_null());
}

TEST(NoZombies, GraceBoundaries) {
  Scenario sc = make_scenario();
  EXPECT_EQ(check("no_zombies", sc, zombie_run(msec(1000), msec(1999))).status, CheckStatus::Pass);
  EXPECT_EQ(check("no_zombies", sc, zombie_run(msec(1000), msec(2000))).status, CheckStatus::Pass);
  EXPECT_EQ(check("no_zombies", sc, zombie_run(msec(1000), msec(2001))).status, CheckStatus::Fail);
}

TEST(NoZombies, UnreapedAcrossTeardownIsJudgedByGraceAlone) {
  // Exited 100ms before teardown, reaped 100ms after: within the 1s grace.
  auto ok = check("no_zombies", make_scenario(),
                  zombie_run(kTeardown - msec(100), kTeardown + msec(100)));
  EXPECT_EQ(ok.status, CheckStatus::Pass);
  EXPECT_TRUE(ok.measured["zombies"].empty());
  // Exited 600ms before teardown, reaped 600ms after: over the grace.
  auto bad = check("no_zombies", make_scenario(),
                   zombie_run(kTeardown - msec(600), kTeardown + msec(600)));
  EXPECT_EQ(bad.status, CheckStatus::Fail);
  ASSERT_EQ(bad.measured["zombies"].size(), 1u);
  EXPECT_DOUBLE_EQ(bad.measured["zombies"][0]["zombie_lifetime_ms"].get<double>(), 1200.0);
}

TEST(NoZombies, KilledAndReapedDuringTeardownIsFine) {
  auto r =
      check("no_zombies", make_scenario(), zombie_run(kTeardown + msec(10), kTeardown + msec(20)));
  EXPECT_EQ(r.status, CheckStatus::Pass);
}

TEST(NoZombies, PerCheckGraceOverride) {
  Timeline tl = zombie_run(msec(1000), msec(3000));
  Scenario sc = make_scenario();
  sc.checks["no_orphans"].grace = 5 * kSecond;  // not this check's
  EXPECT_EQ(check("no_zombies", sc, tl).status, CheckStatus::Fail);
  sc.checks["no_zombies"].grace = 3 * kSecond;
  auto r = check("no_zombies", sc, tl);
  EXPECT_EQ(r.status, CheckStatus::Pass);
  EXPECT_DOUBLE_EQ(r.measured["grace_ms"].get<double>(), 3000.0);
}

// ============================================================ shm_clean

TEST(ShmClean, PassesWhenTheJobRemovesWhatItCreated) {
  auto r = check("shm_clean", make_scenario(), clean_run());
  EXPECT_EQ(r.status, CheckStatus::Pass);
  EXPECT_EQ(r.measured["created"].get<int>(), 1);
  EXPECT_TRUE(r.measured["leaked"].empty());
  EXPECT_EQ(r.measured["leaked_bytes"].get<std::int64_t>(), 0);
  EXPECT_EQ(r.measured["reclaimed_by_harness"], false);
  EXPECT_EQ(r.reason, "1 entry created, none left");
}

TEST(ShmClean, BaselineEntriesNeverCount) {
  Timeline tl = skeleton();  // the baseline entry is never removed
  tl.add(obs::shm_resize(msec(100), "baseline_seg", 5000));
  tl.add(obs::shm_add(0, "baseline_two", 7, true));
  tl.add(obs::shm_remove(msec(200), "baseline_two"));  // removed by the job: not ours either
  auto r = check("shm_clean", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Pass);
  EXPECT_EQ(r.measured["created"].get<int>(), 0);
  EXPECT_EQ(r.reason, "0 entries created, none left");
}

TEST(ShmClean, FailsOnEntriesLeftBehind) {
  auto r = check("shm_clean", make_scenario(), leaky_run());
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_EQ(r.measured["created"].get<int>(), 3);
  const json& leaked = r.measured["leaked"];
  ASSERT_EQ(leaked.size(), 2u);
  EXPECT_EQ(leaked[0]["name"], "leak_a");
  EXPECT_EQ(leaked[0]["bytes"].get<std::int64_t>(), 4096);
  EXPECT_EQ(leaked[1]["name"], "leak_b");
  EXPECT_EQ(leaked[1]["bytes"].get<std::int64_t>(), 8192);  // its last size
  EXPECT_EQ(r.measured["leaked_bytes"].get<std::int64_t>(), 4096 + 8192);
  EXPECT_EQ(r.measured["reclaimed_by_harness"], false);
  EXPECT_THAT(r.reason,
              HasSubstr("2 /dev/shm entries left behind with no live owner (12288 bytes)"));
  EXPECT_THAT(r.reason, HasSubstr("/dev/shm/leak_a"));
}

TEST(ShmClean, ReclaimedByTheHarnessIsStillALeak) {
  Timeline tl = leaky_run();
  tl.add(obs::shm_reclaim(kDone - msec(10), "leak_a", 4096));
  tl.add(obs::shm_reclaim(kDone - msec(10), "leak_b", 8192));
  auto r = check("shm_clean", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_EQ(r.measured["leaked"].size(), 2u);
  EXPECT_EQ(r.measured["reclaimed_by_harness"], true);
}

TEST(ShmClean, SkippedWhenShmIsUnavailable) {
  Timeline tl = leaky_run();
  tl.add(obs::harness_failure(0, HarnessPart::ShmDir, "cannot open /dev/shm: Not a directory"));
  auto r = check("shm_clean", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Skipped);
  EXPECT_THAT(r.reason, HasSubstr("/dev/shm"));
}

// ============================================================ job_exit

TEST(JobExit, PassesOnExitZeroByDefault) {
  auto r = check("job_exit", make_scenario(), clean_run());
  EXPECT_EQ(r.status, CheckStatus::Pass);
  EXPECT_EQ(r.measured["outcome"], "exited(0)");
  EXPECT_EQ(r.measured["expected"], "exited(0)");
  EXPECT_EQ(r.measured["exited_by_itself"], true);
  EXPECT_EQ(r.reason, "exited(0)");
}

TEST(JobExit, FailsOnAWrongExitCode) {
  auto r = check("job_exit", make_scenario(), skeleton(kTopExit, Outcome::exited(1)));
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_EQ(r.measured["outcome"], "exited(1)");
  EXPECT_EQ(r.measured["expected"], "exited(0)");
  EXPECT_THAT(r.reason, HasSubstr("exited(1), expected exited(0)"));
}

TEST(JobExit, ExpectedCode) {
  Scenario sc = make_scenario();
  mutable_check_params<JobExitParams>(sc).code = 3;
  EXPECT_EQ(check("job_exit", sc, skeleton(kTopExit, Outcome::exited(3))).status,
            CheckStatus::Pass);
  auto r = check("job_exit", sc, skeleton(kTopExit, Outcome::exited(0)));
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_EQ(r.measured["expected"], "exited(3)");
  EXPECT_EQ(check("job_exit", sc, skeleton(kTopExit, Outcome::killed(3))).status,
            CheckStatus::Fail);
}

TEST(JobExit, ExpectedSignal) {
  Scenario sc = make_scenario();
  mutable_check_params<JobExitParams>(sc).signal = SIGKILL;
  auto ok = check("job_exit", sc, skeleton(kTopExit, Outcome::killed(SIGKILL)));
  EXPECT_EQ(ok.status, CheckStatus::Pass);
  EXPECT_EQ(ok.measured["expected"], "killed(SIGKILL)");
  EXPECT_EQ(ok.measured["outcome"], "killed(SIGKILL)");

  auto wrong_sig = check("job_exit", sc, skeleton(kTopExit, Outcome::killed(SIGTERM)));
  EXPECT_EQ(wrong_sig.status, CheckStatus::Fail);
  EXPECT_THAT(wrong_sig.reason, HasSubstr("killed(SIGTERM), expected killed(SIGKILL)"));

  auto exited = check("job_exit", sc, skeleton(kTopExit, Outcome::exited(0)));
  EXPECT_EQ(exited.status, CheckStatus::Fail);
  EXPECT_THAT(exited.reason, HasSubstr("exited(0), expected killed(SIGKILL)"));
}

TEST(JobExit, OutputRegex) {
  Scenario sc = make_scenario();
  mutable_check_params<JobExitParams>(sc).output_regex = "rank [0-9]+ done";

  Timeline in_stdout = skeleton();
  in_stdout.facts.stdout_text = "starting\nrank 3 done\n";
  auto r = check("job_exit", sc, in_stdout);
  EXPECT_EQ(r.status, CheckStatus::Pass);
  EXPECT_EQ(r.measured["output_matched"], true);
  EXPECT_EQ(r.measured["output_regex"], "rank [0-9]+ done");

  Timeline in_stderr = skeleton();
  in_stderr.facts.stdout_text = "starting\n";
  in_stderr.facts.stderr_text = "warning\nrank 12 done\n";
  EXPECT_EQ(check("job_exit", sc, in_stderr).status, CheckStatus::Pass);

  Timeline nowhere = skeleton();
  nowhere.facts.stdout_text = "rank x done\n";
  nowhere.facts.stderr_text = "rank done\n";
  auto miss = check("job_exit", sc, nowhere);
  EXPECT_EQ(miss.status, CheckStatus::Fail);
  EXPECT_EQ(miss.measured["output_matched"], false);
  EXPECT_THAT(miss.reason, HasSubstr("output does not match /rank [0-9]+ done/"));
}

TEST(JobExit, OutputMatchesButCodeWrongStillFails) {
  Scenario sc = make_scenario();
  mutable_check_params<JobExitParams>(sc).output_regex = "done";
  Timeline tl = skeleton(kTopExit, Outcome::exited(2));
  tl.facts.stdout_text = "done\n";
  auto r = check("job_exit", sc, tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_EQ(r.measured["output_matched"], true);
}

TEST(JobExit, FailsWhenOnlyTheTeardownEndedTheTop) {
  // The top was killed by the harness's SIGTERM after the teardown phase; even
  // a scenario expecting SIGTERM must not pass on the harness's own signal.
  Scenario sc = make_scenario();
  mutable_check_params<JobExitParams>(sc).signal = SIGTERM;
  Timeline tl = skeleton(kTeardown + msec(20), Outcome::killed(SIGTERM));
  tl.add(obs::signal(kTeardown, kTop, SIGTERM, "teardown"));
  auto r = check("job_exit", sc, tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_EQ(r.measured["exited_by_itself"], false);
  EXPECT_EQ(r.measured["outcome"], "killed(SIGTERM)");
  EXPECT_THAT(r.reason, HasSubstr("did not exit by itself"));
  EXPECT_THAT(r.reason, HasSubstr("teardown ended it: killed(SIGTERM)"));
}

TEST(JobExit, FailsWhenTheTopNeverExited) {
  Timeline tl = skeleton(std::nullopt);
  tl.facts.deadline_hit = true;
  auto r = check("job_exit", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_TRUE(r.measured["outcome"].is_null());
  EXPECT_EQ(r.measured["exited_by_itself"], false);
  EXPECT_THAT(r.reason, HasSubstr("did not exit by itself"));
}

TEST(JobExit, StderrTailKeepsTheLastTwentyLines) {
  Timeline tl = skeleton();
  std::string err, tail;
  for (int i = 1; i <= 25; ++i) {
    std::string line = "line " + std::to_string(i) + "\n";
    err += line;
    if (i > 5) tail += line;
  }
  tl.facts.stderr_text = err;
  auto r = check("job_exit", make_scenario(), tl);
  EXPECT_EQ(r.measured["stderr_tail"], tail);

  Timeline short_err = skeleton();
  short_err.facts.stderr_text = "only\ntwo\n";
  EXPECT_EQ(check("job_exit", make_scenario(), short_err).measured["stderr_tail"], "only\ntwo\n");
}

// ============================================================ no_hang

TEST(NoHang, PassesWhenTheDeadlineWasNotHit) {
  auto r = check("no_hang", make_scenario(), clean_run());
  EXPECT_EQ(r.status, CheckStatus::Pass);
  EXPECT_DOUBLE_EQ(r.measured["deadline_ms"].get<double>(), 10000.0);
  EXPECT_THAT(r.reason, HasSubstr("10s deadline"));
}

TEST(NoHang, FailsWhenTheDeadlineWasHit) {
  // The top and a worker are stuck at the 10s deadline; a helper had exited.
  Timeline tl;
  tl.facts.top_pid = kTop;
  tl.facts.init_pid = kInit;
  tl.facts.deadline_hit = true;
  tl.add(obs::phase(0, RunPhase::Launch));
  tl.add(obs::proc_start(msec(1), kTop, kInit, "launcher", "launcher", Role::Launcher, 0, 0, 'R'));
  life(tl, 101, kTop, msec(20), std::nullopt, std::nullopt);
  life(tl, 102, kTop, msec(30), msec(500), msec(501), "helper", Role::Helper);
  tl.add(obs::proc_state(msec(100), kTop, 'S'));
  tl.add(obs::proc_state(msec(100), 101, 'D'));
  tl.add(obs::phase(msec(10000), RunPhase::Deadline));
  tl.add(obs::phase(msec(10000), RunPhase::Teardown));
  tl.add(obs::proc_exit(msec(10010), 101, Outcome::killed(SIGTERM)));
  tl.add(obs::proc_gone(msec(10011), 101));
  tl.add(obs::proc_exit(msec(10020), kTop, Outcome::killed(SIGTERM)));
  tl.add(obs::proc_gone(msec(10021), kTop));
  tl.add(obs::phase(msec(10100), RunPhase::Done));
  auto r = check("no_hang", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_DOUBLE_EQ(r.measured["deadline_ms"].get<double>(), 10000.0);
  const json& live = r.measured["live_at_deadline"];
  EXPECT_EQ(pids_of(live), (std::vector<int>{kTop, 101}));
  EXPECT_EQ(live[0]["state"], "S");
  EXPECT_EQ(live[1]["state"], "D");
  EXPECT_THAT(r.reason, HasSubstr("hang: still running at the 10s deadline"));
}

// A hang by the stall rule: when progress stopped and when the verdict came,
// later by the time a job process waited for a CPU.
TEST(NoHang, AStallSaysWhenProgressStoppedAndWhatTheMachineTookFromTheWindow) {
  Timeline tl;
  tl.facts.top_pid = kTop;
  tl.facts.init_pid = kInit;
  tl.facts.deadline_hit = true;
  tl.facts.stalled_since = msec(1500);
  tl.facts.stall_window = msec(4000);
  tl.add(obs::phase(0, RunPhase::Launch));
  tl.add(obs::proc_start(msec(1), kTop, kInit, "launcher", "launcher", Role::Launcher, 0, 0, 'S'));
  tl.add(obs::phase(msec(5500), RunPhase::Stalled));
  tl.add(obs::phase(msec(5500), RunPhase::Teardown));
  tl.add(obs::proc_exit(msec(5510), kTop, Outcome::killed(SIGTERM)));
  tl.add(obs::proc_gone(msec(5511), kTop));
  tl.add(obs::phase(msec(5600), RunPhase::Done));
  auto r = check("no_hang", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_DOUBLE_EQ(r.measured["verdict_ms"].get<double>(), 5500.0);
  EXPECT_DOUBLE_EQ(r.measured["cpu_wait_ms"].get<double>(), 0.0);
  EXPECT_THAT(r.reason, HasSubstr("hang: progress stopped at 1.5s, verdict at 5.5s (no progress "
                                  "for the 4s stall window); live: "));
  tl.facts.stall_cpu_wait = msec(2250);
  r = check("no_hang", make_scenario(), tl);
  EXPECT_DOUBLE_EQ(r.measured["verdict_ms"].get<double>(), 7750.0);
  EXPECT_DOUBLE_EQ(r.measured["cpu_wait_ms"].get<double>(), 2250.0);
  EXPECT_THAT(r.reason, HasSubstr("verdict at 7.75s (no progress for the 4s stall window, not "
                                  "counting 2.25s a job process waited for a CPU); live: "));
}

// Where the hung processes are: the collective a rank waits in and its
// Python frames, the innermost and the innermost of the user's code.
TEST(NoHang, TheReasonSaysWhereEachProcessIs) {
  Timeline tl;
  tl.facts.top_pid = kTop;
  tl.facts.init_pid = kInit;
  tl.facts.deadline_hit = true;
  tl.add(obs::phase(0, RunPhase::Launch));
  tl.add(obs::proc_start(msec(1), kTop, kInit, "launcher", "launcher", Role::Launcher, 0, 0, 'S'));
  life(tl, 101, kTop, msec(20), std::nullopt, std::nullopt);
  life(tl, 102, kTop, msec(20), std::nullopt, std::nullopt);
  tl.add(obs::phase(msec(10000), RunPhase::Deadline));
  tl.add(obs::phase(msec(10000), RunPhase::Teardown));
  tl.add(obs::phase(msec(10100), RunPhase::Done));
  PythonFrame collective{"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py",
                         1541, "all_reduce", "work.wait()"};
  PythonFrame step{"/home/me/train.py", 42, "step", "dist.all_reduce(t)"};
  PythonFrame wait{"/usr/lib/python3.11/subprocess.py", 1264, "wait", ""};
  PythonFrame main{"/home/me/launch.py", 9, "main", ""};
  ProcessDiagnosis launcher, rank0, rank1;
  launcher.pid = kTop;
  launcher.role = Role::Launcher;
  launcher.python_frames = {wait, main};
  rank0.pid = 101;
  rank0.role = Role::Rank;
  rank0.rank = 0;
  rank0.state = 'T';  // stopped: gdb still reads where it is
  rank0.python_frames = {step};
  rank1.pid = 102;
  rank1.role = Role::Rank;
  rank1.rank = 1;
  rank1.state = 'S';
  rank1.waiting_in = "allreduce #7";
  rank1.python_frames = {collective, step};
  tl.facts.diagnosis = {launcher, rank0, rank1};
  auto r = check("no_hang", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  // Who waits in a collective first, then the others; ranks before the
  // launcher, whatever the diagnoses' order (the launcher's came first).
  EXPECT_THAT(r.reason,
              HasSubstr("; rank 1 (pid 102) waits in allreduce #7, in all_reduce "
                        "(distributed_c10d.py:1541) called from train.py:42; rank 0 (pid 101) is "
                        "in step (train.py:42); launcher (pid " +
                        std::to_string(kTop) +
                        ") is in wait (subprocess.py:1264) called from launch.py:9"));
  const json& d = r.measured["diagnosis"];
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[2]["python_where"], "all_reduce (distributed_c10d.py:1541) called from train.py:42");
  EXPECT_EQ(d[1]["python_where"], "step (train.py:42)");
  EXPECT_EQ(d[1]["state"], "T");
  // Without frames: nothing about Python.
  tl.facts.diagnosis[2].python_frames.clear();
  tl.facts.diagnosis.resize(1);
  tl.facts.diagnosis[0] = rank1;
  tl.facts.diagnosis[0].python_frames.clear();
  r = check("no_hang", make_scenario(), tl);
  EXPECT_THAT(r.reason, ::testing::EndsWith("; rank 1 (pid 102) waits in allreduce #7"));
  EXPECT_EQ(r.measured["diagnosis"][0]["python_where"], "");
}

// ============================================================ run_check / run_checks

TEST(RunCheck, UnknownNameIsAnError) {
  Scenario sc = make_scenario();
  Timeline tl = clean_run();
  auto procs = build_histories(tl);
  auto r = run_check("no_such_check", make_check_input(sc, tl, procs));
  EXPECT_EQ(r.status, CheckStatus::Error);
  EXPECT_EQ(r.name, "no_such_check");
  EXPECT_EQ(r.reason, "unknown check");
}

TEST(RunCheck, AnExceptionInsideACheckIsAnError) {
  Scenario sc = make_scenario();
  mutable_check_params<JobExitParams>(sc).output_regex = "([unclosed";
  auto r = check("job_exit", sc, clean_run());
  EXPECT_EQ(r.status, CheckStatus::Error);
  EXPECT_EQ(r.name, "job_exit");
  EXPECT_THAT(r.reason, HasSubstr("check failed to evaluate"));
  EXPECT_TRUE(r.measured.empty());

  Scenario no_cfg = make_scenario();
  no_cfg.checks.erase("job_exit");
  EXPECT_EQ(check("job_exit", no_cfg, clean_run()).status, CheckStatus::Error);
}

TEST(RunChecks, DisabledChecksAreNotRun) {
  Scenario sc = make_scenario();
  sc.checks["shm_clean"].enabled = false;
  sc.checks["no_hang"].enabled = false;
  for (const char* d : {"device_memory_released", "no_device_holders", "device_alloc_probe"})
    sc.checks[d].enabled = false;
  Timeline tl = sorted(leaky_run());  // would fail shm_clean if it ran
  auto results = run_checks(sc, tl, build_histories(tl));
  std::vector<std::string> names;
  for (const auto& r : results) names.push_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{"all_exited", "no_orphans", "no_zombies", "tmp_clean",
                                             "job_exit"}));
  for (const auto& r : results) EXPECT_EQ(r.status, CheckStatus::Pass) << r.name;
}

TEST(RunChecks, MarksTheChecksExpectedToFail) {
  Scenario sc = make_scenario();
  sc.expect.expect_pass = false;
  sc.expect.failing = {"no_orphans", "all_exited"};
  Timeline tl = sorted(orphan_living(msec(1500)));
  auto results = run_checks(sc, tl, build_histories(tl));
  ASSERT_EQ(results.size(), default_checks().size() - 1);  // no tests_clean: no pytest tests
  for (const auto& r : results) {
    bool expected = r.name == "no_orphans" || r.name == "all_exited";
    EXPECT_EQ(r.expected_to_fail, expected) << r.name;
  }
  // Only no_orphans actually failed: a strict subset of the expectation.
  Decision d = decide_verdict(sc, results);
  EXPECT_EQ(d.verdict, Verdict::XPass);
  EXPECT_THAT(d.reason, HasSubstr("all_exited passed"));

  sc.expect.failing = {"no_orphans"};
  results = run_checks(sc, tl, build_histories(tl));
  d = decide_verdict(sc, results);
  EXPECT_EQ(d.verdict, Verdict::XFail);
  EXPECT_EQ(d.reason, "expected failure reproduced: no_orphans");
}

// ============================================================ CheckInput

TEST(CheckInputTest, TeardownAndEndFromTheTimeline) {
  Scenario sc = make_scenario();
  Timeline tl = sorted(clean_run());
  auto procs = build_histories(tl);
  auto in = make_check_input(sc, tl, procs);
  EXPECT_EQ(in.teardown_at, kTeardown);
  EXPECT_EQ(in.end_at, kDone);
  EXPECT_EQ(&in.scenario, &sc);
  EXPECT_EQ(in.processes.size(), 2u);

  Timeline bare;
  bare.add(obs::note(msec(30), "late"));
  bare.add(obs::note(msec(10), "earlier but appended after"));
  auto none = build_histories(bare);
  auto in2 = make_check_input(sc, bare, none);
  EXPECT_EQ(in2.end_at, msec(30));
  EXPECT_EQ(in2.teardown_at, msec(30));  // no teardown phase: the end

  Timeline empty;
  auto in3 = make_check_input(sc, empty, none);
  EXPECT_EQ(in3.end_at, 0);
  EXPECT_EQ(in3.teardown_at, 0);
}

TEST(CheckInputTest, GracePerCheckElseScenario) {
  Scenario sc = make_scenario();
  sc.grace = 3 * kSecond;
  sc.checks["no_zombies"].grace = msec(250);
  Timeline tl;
  std::vector<ProcessHistory> procs;
  auto in = make_check_input(sc, tl, procs);
  EXPECT_EQ(in.grace("no_zombies"), msec(250));
  EXPECT_EQ(in.grace("no_orphans"), 3 * kSecond);
  EXPECT_EQ(in.grace("not_configured"), 3 * kSecond);
}

}  // namespace
}  // namespace aftermath

namespace aftermath {
namespace {

// Grace per role: PyTorch's helpers linger by design (torch_shm_manager: 2 s
// after its last client); a helper that never exits still fails.
TEST(GraceByRole, HelpersGetTheirOwnGraceByDefault) {
  Timeline tl = skeleton();
  life(tl, 101, kTop, msec(20), msec(100), msec(101));  // a worker
  life(tl, 102, 101, msec(30), msec(2400), msec(2401), "torch_shm_manag", Role::Helper);
  tl.add(obs::proc_parent(msec(120), 102, kInit));
  auto r = check("no_orphans", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Pass) << r.reason;
  EXPECT_DOUBLE_EQ(r.measured["grace_by_role_ms"]["helper"].get<double>(), 5000.0);
  EXPECT_DOUBLE_EQ(r.measured["orphans"][0]["grace_ms"].get<double>(), 5000.0);
  // The same helper never exiting: alive at teardown is a failure whatever the grace.
  Timeline stuck = skeleton();
  life(stuck, 101, kTop, msec(20), msec(100), msec(101));
  life(stuck, 102, 101, msec(30), std::nullopt, std::nullopt, "torch_shm_manag", Role::Helper);
  stuck.add(obs::proc_parent(msec(120), 102, kInit));
  EXPECT_EQ(check("no_orphans", make_scenario(), stuck).status, CheckStatus::Fail);
  // A helper role grace set lower in the scenario is what counts.
  Scenario strict = make_scenario();
  strict.role_grace[Role::Helper] = msec(500);
  EXPECT_EQ(check("no_orphans", strict, tl).status, CheckStatus::Fail);
  // A per-check role grace wins over the scenario's.
  strict.checks["no_orphans"].role_grace[Role::Helper] = 3 * kSecond;
  EXPECT_EQ(check("no_orphans", strict, tl).status, CheckStatus::Pass);
}

TEST(GraceByRole, ADefaultGraceDoesNotLowerTheHelpersButRaisesTheRest) {
  Scenario sc = make_scenario();
  sc.grace = msec(100);
  Timeline tl;
  std::vector<ProcessHistory> procs;
  auto in = make_check_input(sc, tl, procs);
  EXPECT_EQ(in.grace("no_orphans", Role::Worker), msec(100));
  EXPECT_EQ(in.grace("no_orphans", Role::Helper), helper_grace(tl.facts.python));
  EXPECT_EQ(helper_grace(tl.facts.python), 5 * kSecond);
  // A helper's zombie is no design: the plain grace.
  EXPECT_EQ(in.grace("no_zombies", Role::Helper), msec(100));
  sc.checks["no_orphans"].grace = 8 * kSecond;
  auto in2 = make_check_input(sc, tl, procs);
  EXPECT_EQ(in2.grace("no_orphans", Role::Helper), 8 * kSecond);
  EXPECT_EQ(in2.grace("no_orphans", Role::Rank), 8 * kSecond);
}

// torchrun reaps its ranks on its monitor interval (5 s in 1.13, 0.1 s since
// 2.4: the job's PyTorch's, from the run's facts): a rank sitting as a
// zombie under it that long is its design, not a leak.
Timeline zombie_under(const std::string& parent_cmdline, Nanos zombie_for,
                      Nanos monitor_interval = 5 * kSecond) {
  Timeline tl = skeleton();
  tl.facts.python.torchrun_monitor_interval = monitor_interval;
  tl.observations.erase(std::remove_if(tl.observations.begin(), tl.observations.end(),
                                       [](const Observation& o) { return o.is<obs::ProcStart>(); }),
                        tl.observations.end());
  tl.add(obs::proc_start(kTopStart, kTop, kInit, "python3", parent_cmdline, Role::Launcher, 0, 0,
                         'S'));
  life(tl, 101, kTop, msec(20), msec(400), msec(400) + zombie_for, "python3", Role::Rank);
  return tl;
}

TEST(NoZombies, ATorchrunRankIsJudgedAgainstTheAgentsPollInterval) {
  std::string agent = "/usr/bin/python3 /usr/bin/torchrun --nproc_per_node 2 train.py";
  auto ok = check("no_zombies", make_scenario(), zombie_under(agent, 4 * kSecond));
  EXPECT_EQ(ok.status, CheckStatus::Pass) << ok.reason;
  // Past the interval plus the grace it is still a failure.
  auto late = check("no_zombies", make_scenario(), zombie_under(agent, msec(6200)));
  EXPECT_EQ(late.status, CheckStatus::Fail);
  EXPECT_THAT(late.reason, HasSubstr("which reaps every 5s"));
  EXPECT_DOUBLE_EQ(late.measured["zombies"][0]["parent_poll_ms"].get<double>(), 5000.0);
  // A launcher that does not poll: the plain grace.
  auto plain = check("no_zombies", make_scenario(),
                     zombie_under("/usr/bin/python3 spawn_ranks.py", 4 * kSecond));
  EXPECT_EQ(plain.status, CheckStatus::Fail);
  // torchrun told to poll every 0.5 s: 4 s is too long.
  auto fast = check("no_zombies", make_scenario(),
                    zombie_under(agent + " --monitor_interval 0.5", 4 * kSecond));
  EXPECT_EQ(fast.status, CheckStatus::Fail);
  // torchrun 2.4 and later polls every 0.1 s: the same 4 s zombie is a leak,
  // and 0.9 s (the interval plus the 1 s grace) is not.
  auto current =
      check("no_zombies", make_scenario(), zombie_under(agent, 4 * kSecond, 100 * kMilli));
  EXPECT_EQ(current.status, CheckStatus::Fail);
  EXPECT_DOUBLE_EQ(current.measured["zombies"][0]["parent_poll_ms"].get<double>(), 100.0);
  EXPECT_EQ(
      check("no_zombies", make_scenario(), zombie_under(agent, msec(900), 100 * kMilli)).status,
      CheckStatus::Pass);
  // Another launcher's interval, stated in the scenario.
  Scenario sc = make_scenario();
  mutable_check_params<NoZombiesParams>(sc).launcher_poll = 5 * kSecond;
  EXPECT_EQ(
      check("no_zombies", sc, zombie_under("/usr/bin/python3 spawn_ranks.py", 4 * kSecond)).status,
      CheckStatus::Pass);
}

}  // namespace
}  // namespace aftermath

namespace aftermath {
namespace {

// An entry still owned when the teardown began is the teardown's doing, not
// the job's leak: mapped by a live job process, or a torch_* segment of a
// live torch_shm_manager (which unlinks it 2 s after its clients go).
TEST(ShmClean, EntriesOwnedAtTeardownAreNotTheJobsLeak) {
  Timeline tl = skeleton(std::nullopt);  // a hang: the teardown cuts the whole job
  tl.add(obs::shm_add(msec(30), "torch_5_1_0", 4096));
  tl.add(obs::shm_add(msec(31), "psm_mapped", 8192));
  tl.add(obs::shm_add(msec(32), "psm_orphaned", 100));
  life(tl, 102, kInit, msec(20), std::nullopt, std::nullopt, "torch_shm_manag", Role::Helper);
  life(tl, 103, kTop, msec(20), std::nullopt, std::nullopt);
  tl.add(obs::shm_held(kTeardown, 103, "/dev/shm/psm_mapped", 8192, "mapped", false));
  auto r = check("shm_clean", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);  // psm_orphaned: nobody owned it
  ASSERT_EQ(r.measured["leaked"].size(), 1u);
  EXPECT_EQ(r.measured["leaked"][0]["name"], "psm_orphaned");
  ASSERT_EQ(r.measured["held_at_teardown"].size(), 2u);
  EXPECT_EQ(r.measured["held_at_teardown"][0]["owner"], "pid 103 (mapped)");
  EXPECT_EQ(r.measured["held_at_teardown"][1]["owner"], "torch_shm_manager 102");
  EXPECT_THAT(r.reason, HasSubstr("1 /dev/shm entry left behind with no live owner (100 bytes)"));
  EXPECT_THAT(r.reason, HasSubstr("2 still owned by live job processes when the teardown began"));
  // Without the owners, all three are the job's leak.
  Timeline bare = skeleton();
  bare.add(obs::shm_add(msec(30), "torch_5_1_0", 4096));
  bare.add(obs::shm_add(msec(31), "psm_mapped", 8192));
  EXPECT_EQ(check("shm_clean", make_scenario(), bare).measured["leaked"].size(), 2u);
}

// An entry held at teardown by a process that is itself a leftover (an
// escaped daemon orphaned long before, past its grace) is the job's leak,
// and names its holder; a torch_shm_manager still within its designed
// linger keeps its segments "cut by teardown".
TEST(ShmClean, AnEntryHeldByALeftoverIsALeakNamingItsHolder) {
  Timeline tl = skeleton();
  tl.add(obs::shm_add(msec(30), "daemon_1m", 1 << 20));
  tl.add(obs::shm_add(msec(31), "torch_7_1_0", 4096));
  // The daemon: escaped (setsid, its parent gone at once), alive at teardown.
  life(tl, 110, kTop, msec(25), std::nullopt, std::nullopt, "daemon", Role::Unknown);
  tl.add(obs::proc_parent(msec(26), 110, kInit));
  // A manager orphaned 1 s before the teardown: within the helpers' 5 s.
  life(tl, 111, kTop, msec(25), std::nullopt, std::nullopt, "torch_shm_manag", Role::Helper);
  tl.add(obs::proc_parent(kTeardown - kSecond, 111, kInit));
  tl.add(obs::shm_held(kTeardown, 110, "/dev/shm/daemon_1m", 1 << 20, "mapped", false));
  auto r = check("shm_clean", make_scenario(), sorted(tl));
  EXPECT_EQ(r.status, CheckStatus::Fail);
  ASSERT_EQ(r.measured["leaked"].size(), 1u) << r.measured.dump();
  EXPECT_EQ(r.measured["leaked"][0]["name"], "daemon_1m");
  EXPECT_THAT(r.measured["leaked"][0]["held_by_leftover"].get<std::string>(),
              HasSubstr("pid 110 (unknown, daemon), orphaned"));
  EXPECT_THAT(r.reason, HasSubstr("left behind with no live owner but a leftover"));
  EXPECT_THAT(r.reason, HasSubstr("held by pid 110"));
  ASSERT_EQ(r.measured["held_at_teardown"].size(), 1u);
  EXPECT_EQ(r.measured["held_at_teardown"][0]["name"], "torch_7_1_0");
  // The same daemon orphaned only just before the teardown (its parent,
  // alive until then, the top's child), within its 1 s grace: what it holds
  // was cut short, not judged.
  Timeline young = skeleton();
  young.add(obs::shm_add(msec(30), "daemon_1m", 1 << 20));
  life(young, 120, kInit, msec(21), kTeardown - msec(200), kTeardown - msec(199), "server",
       Role::Unknown);
  life(young, 110, 120, msec(25), std::nullopt, std::nullopt, "daemon", Role::Unknown);
  young.add(obs::proc_parent(kTeardown - msec(199), 110, kInit));
  young.add(obs::shm_held(kTeardown, 110, "/dev/shm/daemon_1m", 1 << 20, "mapped", false));
  EXPECT_EQ(check("shm_clean", make_scenario(), sorted(young)).status, CheckStatus::Pass);
  // The manager past its grace (helpers given 500 ms here): it is itself a
  // leftover, so the segments it tracks are the job's leak too.
  Scenario short_grace = make_scenario();
  short_grace.role_grace[Role::Helper] = msec(500);
  auto past = check("shm_clean", short_grace, sorted(tl));
  EXPECT_EQ(past.status, CheckStatus::Fail);
  ASSERT_EQ(past.measured["leaked"].size(), 2u) << past.measured.dump();
  EXPECT_EQ(past.measured["leaked"][1]["name"], "torch_7_1_0");
  EXPECT_TRUE(past.measured["held_at_teardown"].empty()) << past.measured.dump();
}

// Shared memory held through fds and mappings (file_descriptor segments are
// unlinked at once): by the processes that outlived the top, until they let go.
TEST(ShmClean, SharedMemoryHeldAfterTheTopExitedIsReportedWithItsRelease) {
  Timeline tl = skeleton();
  life(tl, 101, kTop, msec(20), msec(3700), msec(3701));
  life(tl, 104, kTop, msec(20), std::nullopt, std::nullopt);
  tl.add(obs::shm_held(kTopExit + msec(10), 101, "/dev/shm/torch_9_2_0", 65536, "mapped", true));
  tl.add(obs::shm_held(kTopExit + msec(10), 104, "/memfd:x", 4096, "fd", true));
  auto r = check("shm_clean", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Pass);
  const json& kept = r.measured["held_after_top_exit"];
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_DOUBLE_EQ(kept[0]["released_after_top_exit_ms"].get<double>(), 2990.0);
  EXPECT_EQ(kept[1]["held_at_teardown"], true);
  EXPECT_EQ(r.measured["held_after_top_exit_bytes"], 65536 + 4096);
}

}  // namespace
}  // namespace aftermath
