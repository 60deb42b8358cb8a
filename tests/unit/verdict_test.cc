// Unit tests for the verdict (harness/check/verdict): the checks' results
// against the scenario's expectation, what its faults make of it, and the
// recovery timings read off hand-made timelines.
#include "harness/check/verdict.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <set>
#include <string>
#include <vector>

#include "tests/unit/run_fixtures.h"

namespace aftermath {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using namespace testing_run;

// ============================================================ decide_verdict

CheckResult result(const std::string& name, CheckStatus s) {
  CheckResult r;
  r.name = name;
  r.status = s;
  r.reason = "because";
  return r;
}

Scenario expecting(std::set<std::string> failing) {
  Scenario sc = make_scenario();
  sc.expect.expect_pass = failing.empty();
  sc.expect.failing = std::move(failing);
  return sc;
}

TEST(DecideVerdict, PassWhenNothingFailed) {
  auto v = decide_verdict(expecting({}),
                          {result("a", CheckStatus::Pass), result("b", CheckStatus::Skipped)});
  EXPECT_EQ(v.verdict, Verdict::Pass);
  EXPECT_EQ(v.reason, "every check passed");
  EXPECT_EQ(decide_verdict(expecting({}), {}).verdict, Verdict::Pass);
}

TEST(DecideVerdict, FailWhenAnythingFailedUnexpectedly) {
  auto v =
      decide_verdict(expecting({}), {result("a", CheckStatus::Pass), result("b", CheckStatus::Fail),
                                     result("c", CheckStatus::Fail)});
  EXPECT_EQ(v.verdict, Verdict::Fail);
  EXPECT_EQ(v.reason, "failed: b, c");
}

TEST(DecideVerdict, XFailWhenTheFailedSetEqualsTheExpectedSet) {
  auto v = decide_verdict(expecting({"a", "b"}),
                          {result("a", CheckStatus::Fail), result("b", CheckStatus::Fail),
                           result("c", CheckStatus::Pass)});
  EXPECT_EQ(v.verdict, Verdict::XFail);
  EXPECT_EQ(v.reason, "expected failure reproduced: a, b");
}

TEST(DecideVerdict, XPassWhenAStrictSubsetFailed) {
  auto v = decide_verdict(expecting({"a", "b"}),
                          {result("a", CheckStatus::Fail), result("b", CheckStatus::Pass)});
  EXPECT_EQ(v.verdict, Verdict::XPass);
  EXPECT_EQ(v.reason, "expected failure did not reproduce: b passed");

  auto none = decide_verdict(expecting({"a"}), {result("a", CheckStatus::Pass)});
  EXPECT_EQ(none.verdict, Verdict::XPass);
  EXPECT_EQ(none.reason, "expected failure did not reproduce: a passed");
}

TEST(DecideVerdict, FailWhenSomethingOutsideTheExpectedSetFailed) {
  auto v = decide_verdict(expecting({"a"}),
                          {result("a", CheckStatus::Fail), result("c", CheckStatus::Fail)});
  EXPECT_EQ(v.verdict, Verdict::Fail);
  EXPECT_EQ(v.reason, "failed beyond the expected failure: c");
  // Even if the expected one did not fail.
  EXPECT_EQ(decide_verdict(expecting({"a"}),
                           {result("a", CheckStatus::Pass), result("c", CheckStatus::Fail)})
                .verdict,
            Verdict::Fail);
}

// A check a known race fails in some runs only leaves the verdict alone,
// and is named; any other failure still counts.
TEST(DecideVerdict, AChecksThatMayFailLeavesTheVerdictAlone) {
  Scenario pass = expecting({});
  pass.expect.may_fail = {"m"};
  EXPECT_EQ(decide_verdict(pass, {result("m", CheckStatus::Pass)}).verdict, Verdict::Pass);
  auto v = decide_verdict(pass, {result("m", CheckStatus::Fail), result("a", CheckStatus::Pass)});
  EXPECT_EQ(v.verdict, Verdict::Pass);
  EXPECT_EQ(v.reason, "every check passed (m failed too, as the scenario says it may)");
  EXPECT_EQ(decide_verdict(pass, {result("m", CheckStatus::Fail), result("a", CheckStatus::Fail)})
                .verdict,
            Verdict::Fail);

  Scenario xfail = expecting({"a"});
  xfail.expect.may_fail = {"m"};
  auto x = decide_verdict(xfail, {result("a", CheckStatus::Fail), result("m", CheckStatus::Fail)});
  EXPECT_EQ(x.verdict, Verdict::XFail);
  EXPECT_EQ(x.reason, "expected failure reproduced: a (m failed too, as the scenario says it may)");
  EXPECT_EQ(decide_verdict(xfail, {result("a", CheckStatus::Fail), result("m", CheckStatus::Pass)})
                .verdict,
            Verdict::XFail);
  EXPECT_EQ(decide_verdict(xfail, {result("a", CheckStatus::Pass), result("m", CheckStatus::Fail)})
                .verdict,
            Verdict::XPass);
}

TEST(DecideVerdict, ErrorWinsOverEverything) {
  auto v = decide_verdict(expecting({"a"}),
                          {result("a", CheckStatus::Fail), result("b", CheckStatus::Error)});
  EXPECT_EQ(v.verdict, Verdict::Error);
  EXPECT_EQ(v.reason, "check b errored: because");
  EXPECT_EQ(decide_verdict(expecting({}), {result("x", CheckStatus::Error)}).verdict,
            Verdict::Error);
}

// ============================================================ compute_timings

Timings timings_of(const Timeline& raw) {
  Timeline tl = sorted(raw);
  return compute_timings(tl, build_histories(tl));
}

TEST(ComputeTimings, FromTheTopsExit) {
  Timeline tl = skeleton();
  life(tl, 101, kTop, msec(20), msec(900), msec(950));
  tl.add(obs::shm_add(msec(30), "psm_a", 4096));
  tl.add(obs::shm_remove(msec(1200), "psm_a"));
  auto t = timings_of(tl);
  EXPECT_EQ(t.origin, TimingsOrigin::TopExit);
  EXPECT_EQ(t.ms.at("job_ms"), to_ms(kTopExit - kTopStart));
  EXPECT_EQ(t.ms.at("to_all_exited_ms"), 200.0);
  EXPECT_EQ(t.ms.at("to_all_gone_ms"), 250.0);
  EXPECT_EQ(t.ms.at("to_shm_baseline_ms"), 500.0);
  EXPECT_EQ(t.ms.at("teardown_ms"), 100.0);
  EXPECT_EQ(t.ms.at("total_ms"), 5100.0);
}

TEST(ComputeTimings, EverythingBeforeTheTopClampsToZero) {
  auto t = timings_of(clean_run());  // worker and shm gone before the top exits
  EXPECT_EQ(t.ms.at("to_all_exited_ms"), 0.0);
  EXPECT_EQ(t.ms.at("to_all_gone_ms"), 1.0);  // the top's own reap, 1ms after its exit
  EXPECT_EQ(t.ms.at("to_shm_baseline_ms"), 0.0);
}

TEST(ComputeTimings, NoShmCreatedIsAtBaselineAtOnce) {
  auto t = timings_of(skeleton());
  EXPECT_EQ(t.ms.at("to_shm_baseline_ms"), 0.0);
}

TEST(ComputeTimings, LeakedShmNeverReachesBaseline) {
  auto t = timings_of(leaky_run());
  EXPECT_EQ(t.ms.at("to_shm_baseline_ms"), std::nullopt);
}

TEST(ComputeTimings, ProcessOutlivingTeardown) {
  Timeline tl = skeleton();
  life(tl, 101, kTop, msec(20), kTeardown + msec(30), kTeardown + msec(40));
  auto t = timings_of(tl);
  EXPECT_EQ(t.ms.at("job_ms"), to_ms(kTopExit - kTopStart));
  EXPECT_EQ(t.ms.at("to_all_exited_ms"), std::nullopt);
  EXPECT_EQ(t.ms.at("to_all_gone_ms"), to_ms(kTeardown + msec(40) - kTopExit));

  Timeline never = skeleton();
  life(never, 101, kTop, msec(20), std::nullopt, std::nullopt);
  auto tn = timings_of(never);
  EXPECT_EQ(tn.ms.at("to_all_exited_ms"), std::nullopt);
  EXPECT_EQ(tn.ms.at("to_all_gone_ms"), std::nullopt);
}

TEST(ComputeTimings, TopEndedByTeardown) {
  auto t = timings_of(skeleton(kTeardown + msec(20), Outcome::killed(SIGTERM)));
  EXPECT_EQ(t.origin, TimingsOrigin::TopExit);
  EXPECT_EQ(t.ms.at("job_ms"), std::nullopt);
  EXPECT_EQ(t.ms.at("to_all_exited_ms"), std::nullopt);
  EXPECT_EQ(t.ms.at("to_all_gone_ms"), 1.0);
  EXPECT_EQ(t.ms.at("teardown_ms"), 100.0);
}

TEST(ComputeTimings, DeadlineIsTheOriginWhenTheTopNeverEnded) {
  Timeline tl = skeleton(std::nullopt);
  tl.add(obs::phase(msec(4000), RunPhase::Deadline));
  life(tl, 101, kTop, msec(20), msec(4500), msec(4600));
  auto t = timings_of(tl);
  EXPECT_EQ(t.origin, TimingsOrigin::Deadline);
  EXPECT_EQ(t.ms.at("job_ms"), std::nullopt);
  EXPECT_EQ(t.ms.at("to_all_exited_ms"), std::nullopt);  // the top never ended
  EXPECT_EQ(t.ms.at("to_shm_baseline_ms"), 0.0);
}

TEST(ComputeTimings, NoOrigin) {
  Timeline tl = skeleton(std::nullopt);
  auto t = timings_of(tl);
  EXPECT_EQ(t.origin, TimingsOrigin::None);
  EXPECT_EQ(t.ms.at("job_ms"), std::nullopt);
  EXPECT_EQ(t.ms.at("to_all_exited_ms"), std::nullopt);
  EXPECT_EQ(t.ms.at("to_all_gone_ms"), std::nullopt);
  EXPECT_EQ(t.ms.at("to_shm_baseline_ms"), std::nullopt);
  EXPECT_EQ(t.ms.at("total_ms"), 5100.0);
}

TEST(ComputeTimings, WithoutTeardownOrDonePhases) {
  Timeline tl;
  tl.facts.top_pid = kTop;
  tl.add(obs::proc_start(msec(1), kTop, kInit, "x", "x"));
  tl.add(obs::proc_exit(msec(11), kTop, Outcome::exited(0)));
  tl.add(obs::proc_gone(msec(12), kTop));
  auto t = timings_of(tl);
  EXPECT_EQ(t.ms.at("job_ms"), 10.0);
  EXPECT_EQ(t.ms.at("to_all_exited_ms"), 0.0);
  EXPECT_EQ(t.ms.at("teardown_ms"), std::nullopt);
  EXPECT_EQ(t.ms.at("total_ms"), std::nullopt);
}

// A fault that never acted makes the verdict: the scenario did not stage what
// it says, so its checks prove nothing.
FaultRecord fault_record(int index, std::string status, std::string reason = "why") {
  FaultRecord f;
  f.index = index;
  f.action = FaultAction::Sigkill;
  f.target = "rank:1";
  f.trigger = "after 1s";
  f.status = parse_fault_status(status).value();
  f.reason = std::move(reason);
  return f;
}

TEST(FaultVerdict, EveryFaultInjectedLeavesTheVerdictToTheChecks) {
  EXPECT_FALSE(fault_verdict({}).has_value());
  EXPECT_FALSE(
      fault_verdict({fault_record(0, "injected"), fault_record(1, "injected")}).has_value());
}

TEST(FaultVerdict, AFaultThatFailedOrNeverFiredIsAnError) {
  auto failed = fault_verdict({fault_record(0, "failed", "no live job process matches 'rank:1'")});
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(failed->verdict, Verdict::Error);
  EXPECT_EQ(failed->reason,
            "fault 1 (SIGKILL rank:1, after 1s) failed: no live job process matches 'rank:1'");
  auto never = fault_verdict({fault_record(0, "injected"),
                              fault_record(1, "not_triggered", "point 'step' was never reached")});
  ASSERT_TRUE(never.has_value());
  EXPECT_EQ(never->verdict, Verdict::Error);
  EXPECT_THAT(never->reason, HasSubstr("fault 2"));
  EXPECT_THAT(never->reason, HasSubstr("never fired: point 'step' was never reached"));
}

TEST(FaultVerdict, AnUnavailableMechanismSkipsButAnErrorOutranksIt) {
  auto skipped = fault_verdict({fault_record(0, "skipped", "no GPU")});
  ASSERT_TRUE(skipped.has_value());
  EXPECT_EQ(skipped->verdict, Verdict::Skipped);
  EXPECT_THAT(skipped->reason, HasSubstr("cannot act on this machine: no GPU"));
  auto both =
      fault_verdict({fault_record(0, "skipped", "no GPU"), fault_record(1, "failed", "gone")});
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->verdict, Verdict::Error);
  auto both2 =
      fault_verdict({fault_record(0, "failed", "gone"), fault_record(1, "skipped", "no GPU")});
  ASSERT_TRUE(both2.has_value());
  EXPECT_EQ(both2->verdict, Verdict::Error);
}

TEST(FaultVerdict, OptionalFaultsAreLeftOut) {
  auto f = fault_record(0, "failed");
  f.optional = true;
  auto g = fault_record(1, "skipped");
  g.optional = true;
  EXPECT_FALSE(fault_verdict({f, g}).has_value());
}

// ============================================================ more timings and fault verdicts

FaultRecord sent_fault(int index, Nanos sent, std::string status = "injected") {
  FaultRecord f;
  f.index = index;
  f.action = FaultAction::Sigkill;
  f.target = "rank:1";
  f.status = parse_fault_status(status).value();
  f.sent = sent;
  return f;
}

// A fault's timings count from the first fault the harness sent, not from the
// top's exit, and to_job_exit_ms says how long the job took to notice.
TEST(ComputeTimings, TheFirstInjectedFaultIsTheOrigin) {
  Timeline tl = skeleton();
  life(tl, 101, kTop, msec(20), msec(650), msec(660));
  tl.facts.faults = {sent_fault(1, msec(600)), sent_fault(0, msec(500)),
                     sent_fault(2, msec(100), "failed")};  // failed: not an origin
  auto t = timings_of(tl);
  EXPECT_EQ(t.origin, TimingsOrigin::FirstFault);
  EXPECT_EQ(t.ms.at("to_job_exit_ms"), to_ms(kTopExit - msec(500)));
  EXPECT_EQ(t.ms.at("to_all_exited_ms"), to_ms(kTopExit - msec(500)));  // the top ended last
  EXPECT_EQ(t.ms.at("to_all_gone_ms"), to_ms(kTopExit + msec(1) - msec(500)));
  EXPECT_EQ(t.ms.at("job_ms"), to_ms(kTopExit - kTopStart));  // still the top's own life
}

TEST(ComputeTimings, NoFaultNoTimeToJobExit) {
  auto t = timings_of(clean_run());
  EXPECT_EQ(t.origin, TimingsOrigin::TopExit);
  EXPECT_EQ(t.ms.at("to_job_exit_ms"), std::nullopt);

  Timeline unsent = skeleton();
  FaultRecord f = sent_fault(0, msec(100));
  f.sent.reset();  // injected by a point reply the harness never timed
  unsent.facts.faults = {f};
  EXPECT_EQ(timings_of(unsent).origin, TimingsOrigin::TopExit);
}

TEST(FaultVerdict, EveryFaultThatDidNotActIsNamedInOrder) {
  auto a = fault_record(0, "failed", "gone");
  auto b = fault_record(1, "skipped", "no GPU");
  auto c = fault_record(2, "not_triggered", "point 'step' was never reached");
  c.trigger = "";
  auto v = fault_verdict({a, b, c});
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->verdict, Verdict::Error);
  EXPECT_EQ(v->reason,
            "fault 1 (SIGKILL rank:1, after 1s) failed: gone; "
            "fault 3 (SIGKILL rank:1) never fired: point 'step' was never reached");
}

TEST(DecideVerdict, SkippedChecksNeverCountAsFailedOrAsTheExpectedFailure) {
  auto v = decide_verdict(expecting({"a"}), {result("a", CheckStatus::Skipped)});
  EXPECT_EQ(v.verdict, Verdict::XPass);
  EXPECT_EQ(v.reason, "expected failure did not reproduce: a passed");
}

}  // namespace
}  // namespace aftermath
