// What `aftermath run` prints off a terminal: the per-scenario line, the
// verdict table, the repeat statistics.
#include "harness/cli/run_console.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "reports/repeat_view.h"
#include "tests/unit/repeat_fixture.h"

namespace aftermath {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::internal::CaptureStdout;
using ::testing::internal::GetCapturedStdout;

ScenarioResult scenario(const std::string& name, Verdict v, const std::string& reason) {
  ScenarioResult r;
  r.name = name;
  r.verdict = v;
  r.verdict_reason = reason;
  return r;
}

TEST(RunConsole, TableOffATerminal) {
  RunResult run;
  ScenarioResult ok = scenario("clean", Verdict::Pass, "every check passed");
  ok.timings_ms["job_ms"] = 1500.0;
  ok.timings_ms["to_all_gone_ms"] = 12.25;
  ScenarioResult bad = scenario("leaky", Verdict::Fail, "shm_clean failed");
  CheckResult c;
  c.name = "shm_clean";
  c.status = CheckStatus::Fail;
  bad.checks.push_back(c);
  run.scenarios = {ok, bad, scenario("gpu", Verdict::Skipped, "not launched: requires gpu")};
  CaptureStdout();
  print_table(run, false);
  std::string out = GetCapturedStdout();
  EXPECT_THAT(out, HasSubstr("clean                                pass    -                       "
                             "            1.50s     12.2ms          -\n"));
  EXPECT_THAT(out, HasSubstr("leaky                                fail    shm_clean"));
  EXPECT_THAT(out, HasSubstr("    shm_clean failed\n"));
  EXPECT_THAT(out, HasSubstr("    not launched: requires gpu\n"));
  EXPECT_EQ(out.find("every check passed"), std::string::npos) << "a pass needs no reason";
  EXPECT_THAT(out,
              HasSubstr("3 scenario(s): 1 pass, 0 xfail, 1 fail, 0 xpass, 0 error, 1 skipped\n"));
  EXPECT_EQ(out.find("\033["), std::string::npos) << "no colours off a terminal";
}

// A job that died of a missing module: the console says which checks failed
// and why, then the job's own last words, not only "failed: job_exit".
TEST(RunConsole, AFailedScenarioSaysEachChecksReasonAndTheJobsLastStderrLines) {
  RunResult run;
  ScenarioResult bad = scenario("no-torch", Verdict::Fail, "failed: job_exit");
  CheckResult exit_check;
  exit_check.name = "job_exit";
  exit_check.status = CheckStatus::Fail;
  exit_check.reason = "exited(1), expected 0";
  CheckResult passed;
  passed.name = "no_orphans";
  passed.status = CheckStatus::Pass;
  passed.reason = "no process was orphaned";
  bad.checks = {exit_check, passed};
  bad.timeline.facts.stderr_text =
      "first line\nTraceback (most recent call last):\n  File \"train.py\", line 1, in "
      "<module>\nModuleNotFoundError: No module named 'torch'\n";
  run.scenarios = {bad};
  CaptureStdout();
  print_table(run, false);
  std::string out = GetCapturedStdout();
  EXPECT_THAT(out, HasSubstr("    failed: job_exit\n    job_exit: exited(1), expected 0\n"));
  EXPECT_THAT(out, Not(HasSubstr("no process was orphaned"))) << "only failed checks";
  EXPECT_THAT(out, HasSubstr("    | Traceback (most recent call last):\n"
                             "    |   File \"train.py\", line 1, in <module>\n"
                             "    | ModuleNotFoundError: No module named 'torch'\n"));
  EXPECT_THAT(out, Not(HasSubstr("first line"))) << "the last 3 lines only";
}

TEST(RunConsole, AFailedScenarioSaysWhatItsFaultsDid) {
  RunResult run;
  ScenarioResult bad = scenario("sigint", Verdict::Fail, "failed: job_exit");
  FaultRecord f;
  f.action = FaultAction::Sigint;
  f.trigger = "point step rank=0 hit 5";
  f.status = FaultStatus::Injected;
  f.reason = "SIGINT to 1 process(es); 812 ignores SIGINT (...), so it had no effect there";
  bad.timeline.facts.faults = {f};
  ScenarioResult good = scenario("fine", Verdict::XFail, "as expected");
  good.timeline.facts.faults = {f};
  run.scenarios = {bad, good};
  CaptureStdout();
  print_table(run, false);
  std::string out = GetCapturedStdout();
  EXPECT_THAT(
      out,
      HasSubstr(
          "    fault 0 (SIGINT, point step rank=0 hit 5): injected: SIGINT to 1 process(es); 812 "
          "ignores SIGINT (...), so it had no effect there\n"));
  EXPECT_EQ(out.find("fault 0"), out.rfind("fault 0")) << "only the failed scenario's faults";
}

TEST(RunConsole, DoneLineNamesTheRunOfARepeat) {
  ScenarioResult r = scenario("hang", Verdict::XFail, "no_hang failed as expected");
  r.runs = 3;
  r.run_index = 1;
  r.timeline.facts.containment_note = "no PID namespace here";
  CaptureStdout();
  print_scenario_done(r, false);
  r.run_index = 0;
  print_scenario_done(r, false);
  EXPECT_EQ(GetCapturedStdout(),
            "[hang run 2/3] xfail: no_hang failed as expected\n"
            "[hang run 1/3] xfail: no_hang failed as expected\n"
            "[hang] containment: no PID namespace here\n");
}

TEST(RunConsole, StatusLinesOnlyOnAPhaseChangeOffATerminal) {
  Scenario sc;
  sc.name = "status-test";
  LiveStatus s;
  s.elapsed = 1500000000;
  s.processes = 3;
  s.phase = "running";
  CaptureStdout();
  print_status(sc, s, false);
  print_status(sc, s, false);
  s.phase = "settling";
  print_status(sc, s, false);
  EXPECT_EQ(GetCapturedStdout(),
            "[status-test]    1.5s  procs 3     running\n"
            "[status-test]    1.5s  procs 3     settling\n");
}

// A run of a repeat says which; two runs of one scenario side by side keep
// their own last phase, so neither hides the other's line.
TEST(RunConsole, StatusLinesNumberTheRunsOfARepeat) {
  Scenario sc;
  sc.name = "status-repeat";
  LiveStatus s;
  s.elapsed = 500000000;
  s.processes = 1;
  s.phase = "running";
  s.runs = 3;
  CaptureStdout();
  s.run = 1;
  print_status(sc, s, false);
  s.run = 2;
  print_status(sc, s, false);
  EXPECT_EQ(GetCapturedStdout(),
            "[status-repeat run 1/3]    0.5s  procs 1     running\n"
            "[status-repeat run 2/3]    0.5s  procs 1     running\n");
}

TEST(RunConsole, AggregatesWithRateAndDistribution) {
  RunResult run;
  Aggregate a;
  a.name = "hang";
  a.runs = 4;
  a.judged = 4;
  a.reproduced = 3;
  a.rate = 0.75;
  a.rate_low = 0.3;
  a.rate_high = 0.95;
  a.expects_failure = true;
  a.verdicts = {{Verdict::XFail, 4}};
  a.outcomes = {{Verdict::XFail, {"no_hang"}, {1, 2, 3, 4}}};
  a.timings_ms["to_all_gone_ms"] = Aggregate::Dist{3, 10, 20, 30, 30};
  run.aggregates = {a};
  CaptureStdout();
  print_aggregates(run);
  std::string out = GetCapturedStdout();
  EXPECT_THAT(out,
              HasSubstr("hang                                     4 xfail=4                      "
                        "reproduced 3/4 (75%, 95% interval 30\u201395%)    "
                        "10.0 / 20.0 / 30.0 / 30.0\n"));
  EXPECT_THAT(out, Not(HasSubstr("flaky:"))) << "one outcome: nothing to explain";
}

// Flaky: the line under the scenario names each outcome with its runs.
TEST(RunConsole, AFlakyScenarioSaysWhichOutcomesOccurred) {
  RunResult run = testing_repeats::repeated_run();
  CaptureStdout();
  print_aggregates(run);
  std::string out = GetCapturedStdout();
  EXPECT_THAT(out, HasSubstr("xfail=3 xpass=2 FLAKY"));
  EXPECT_THAT(out, HasSubstr(testing_repeats::kHangRate));
  EXPECT_THAT(out, HasSubstr("\n    flaky: " + std::string(testing_repeats::kHangOutcomes) + "\n"));
  EXPECT_THAT(out, HasSubstr("fail=3 pass=2 FLAKY"));
  EXPECT_THAT(out, HasSubstr(testing_repeats::kLeakyRate));
  EXPECT_THAT(out,
              HasSubstr("\n    flaky: " + std::string(testing_repeats::kLeakyOutcomes) + "\n"));
}

// Every run of a repeat is listed with its number in the verdict table.
TEST(RunConsole, TableNumbersTheRunsOfARepeat) {
  RunResult run = testing_repeats::repeated_run();
  CaptureStdout();
  print_table(run, false);
  std::string out = GetCapturedStdout();
  for (int i = 1; i <= 5; ++i) {
    EXPECT_THAT(out, HasSubstr("\nhang run " + std::to_string(i) + "/5 ")) << out;
    EXPECT_THAT(out, HasSubstr("\nleaky run " + std::to_string(i) + "/5 ")) << out;
  }
  EXPECT_EQ(report::run_label(run.scenarios[2]), "hang run 3/5");
  ScenarioResult once;
  once.name = "clean";
  EXPECT_EQ(report::run_label(once), "clean");
}

// A pytest suite's leaking tests each get a line under the scenario's row;
// a clean test none.
TEST(RunConsole, TableNamesEachLeakingTest) {
  RunResult run;
  ScenarioResult s = scenario("pytest-suite", Verdict::Fail, "failed: tests_clean");
  TestResult clean;
  clean.nodeid = "t.py::test_clean";
  TestResult leaky;
  leaky.nodeid = "t.py::test_leaky";
  leaky.worker = "gw1";
  for (int i = 0; i < 4; ++i)
    leaky.leaks.push_back(TestLeak{LeakKind::Orphan, 80 + i, "", 0,
                                   "worker " + std::to_string(80 + i) + " outlived its parent"});
  s.tests = {clean, leaky};
  run.scenarios.push_back(s);
  CaptureStdout();
  print_table(run, false);
  std::string out = GetCapturedStdout();
  EXPECT_THAT(
      out, HasSubstr("    test t.py::test_leaky [gw1] left orphan: worker 80 outlived its parent; "
                     "orphan: worker 81 outlived its parent; orphan: worker 82 outlived its "
                     "parent; ... (4 in all)\n"));
  EXPECT_THAT(out, Not(HasSubstr("test_clean")));
  EXPECT_EQ(leaking_test_lines(scenario("plain", Verdict::Pass, "")).size(), 0u);
}

}  // namespace
}  // namespace aftermath
