// What became of a run's faults, settled from hand-made timelines.
#include "harness/inject/fault_outcomes.h"

#include <gtest/gtest.h>

namespace aftermath {
namespace {

FaultRecord injected(FaultAction a, Nanos sent, std::vector<int> pids) {
  FaultRecord r;
  r.action = a;
  r.status = FaultStatus::Injected;
  r.sent = sent;
  r.pids = std::move(pids);
  return r;
}

TEST(SettleFaultEffects, TheFirstExitOfATargetAfterTheFault) {
  std::vector<FaultRecord> faults = {injected(FaultAction::Sigkill, 100, {7, 8})};
  std::vector<Observation> events = {obs::proc_exit(50, 7, std::nullopt),  // before: not its effect
                                     obs::proc_exit(120, 9, std::nullopt),  // not a target
                                     obs::proc_exit(130, 8, std::nullopt),
                                     obs::proc_exit(140, 7, std::nullopt)};
  settle_fault_effects(faults, events);
  EXPECT_EQ(faults[0].effect, 130);
}

TEST(SettleFaultEffects, AStopIsTheEffectOfSigstopAndNothingOfADelay) {
  std::vector<FaultRecord> faults = {injected(FaultAction::Sigstop, 10, {7}),
                                     injected(FaultAction::Delay, 10, {7}),
                                     injected(FaultAction::Sigkill, 10, {7})};
  faults[2].status = FaultStatus::Failed;
  std::vector<Observation> events = {obs::proc_state(20, 7, 'S'), obs::proc_state(30, 7, 'T'),
                                     obs::proc_exit(40, 7, std::nullopt)};
  settle_fault_effects(faults, events);
  EXPECT_EQ(faults[0].effect, 30);
  EXPECT_FALSE(faults[1].effect);  // a delay ends nothing
  EXPECT_FALSE(faults[2].effect);  // it never acted
}

FaultSpec after(std::string text) {
  FaultSpec f;
  f.action = FaultAction::Sigkill;
  f.at.kind = TriggerSpec::Kind::After;
  f.at.text = std::move(text);
  f.target.text = "rank:1";
  return f;
}

TEST(ExplainUnfiredFaults, EachReasonInTurn) {
  FaultSpec point;
  point.at.kind = TriggerSpec::Kind::Point;
  point.at.point = "step";
  point.at.text = "point step hit 3";
  std::vector<FaultSpec> specs = {after("after 2s"), point, after("after 1s")};
  std::vector<FaultRecord> recs(3);
  UnfiredContext ctx;
  ctx.next_fault = 0;
  ctx.job_ended = true;
  explain_unfired_faults(recs, specs, ctx);
  EXPECT_EQ(recs[0].reason, "its trigger (after 2s) never came before the job ended");
  EXPECT_EQ(recs[1].reason, "not reached: fault 1 before it never fired (faults fire in order)");

  recs = std::vector<FaultRecord>(3);
  recs[0].status = FaultStatus::Injected;
  recs[0].reason = "done";
  ctx.next_fault = 1;
  ctx.job_ended = false;
  ctx.deadline_hit = true;
  explain_unfired_faults(recs, specs, ctx);
  EXPECT_EQ(recs[0].reason, "done");  // acted: left alone
  EXPECT_EQ(recs[1].reason,
            "point 'step' was never reached before the job's deadline passed (does the "
            "job run the points client, and is the point's name right?)");
  ctx.point_hits["step"] = 2;
  ctx.deadline_hit = false;
  recs[1].reason.clear();
  explain_unfired_faults(recs, specs, ctx);
  EXPECT_EQ(recs[1].reason,
            "point 'step' was reached 2 time(s), never matching point step hit 3, before the run "
            "was cut short");

  recs = std::vector<FaultRecord>(3);
  recs[0].waiting_since = 1500 * kMilli;
  ctx.next_fault = 0;
  ctx.job_ended = true;
  explain_unfired_faults(recs, specs, ctx);
  EXPECT_EQ(recs[0].reason, "its trigger came at " + format_duration(1500 * kMilli) +
                                ", but no live job process matched 'rank:1' before the job ended");
}

}  // namespace
}  // namespace aftermath
