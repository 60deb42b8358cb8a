// no_hang's stall rule across the nodes of a multi-node run, through the
// supervisor's two hooks on a real job that sleeps (no progress of its own):
// another node's progress (remote_progress) keeps this node from being
// called hung, and this node's own progress is told (on_progress).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>

#include "e2e_util.h"
#include "harness/check/scenario_load.h"
#include "harness/supervise/runner.h"
#include "tests/unit/parse_helpers.h"

namespace aftermath {
namespace {

using e2e::TempDir;

Scenario sleeper() {
  ParseContext ctx;
  ctx.file = "<test>";
  auto r = parse_scenario(
      "name: stall-across-nodes\n"
      "description: a job that sleeps past its stall window\n"
      "job: {command: /bin/sleep, args: ['30']}\n"
      "timeouts: {job: 20s, settle: 1s, teardown: 2s}\n"
      "checks: {no_hang: {stall: 500ms}}\n",
      ctx);
  for (const auto& d : diagnostics_of(r)) ADD_FAILURE() << d.to_string();
  return r.value_or(Scenario{});
}

RunOptions options(const TempDir& dir) {
  RunOptions o;
  o.out_dir = dir / "out";
  o.contain.reaper_path = e2e::bin("aftermath-reaper");
  o.device = false;
  return o;
}

TEST(StallAcrossNodes, AnotherNodesProgressKeepsThisOneFromBeingHung) {
  TempDir dir;
  RunOptions o = options(dir);
  int told = 0;
  o.node.on_progress = [&] { ++told; };
  // Another node moves for 4 s from the run's first question, then stops
  // too: counted from inside the run, so a slow start cannot eat into it.
  std::optional<Nanos> until;
  o.node.remote_progress = [&] {
    if (!until) until = monotonic_now() + 4 * kSecond;
    return monotonic_now() < *until;
  };
  ScenarioResult r = run_scenario(sleeper(), o);
  ASSERT_TRUE(r.timeline.facts.stalled_since) << r.verdict_reason;
  // Stalled from the other node's last progress, 4 s or more into the run;
  // alone (below) it is the job's start.
  EXPECT_GE(*r.timeline.facts.stalled_since, 3000 * kMilli);
  EXPECT_GE(told, 1);  // the job's start, at least
}

TEST(StallAcrossNodes, AloneASleepingJobIsHungAfterItsWindow) {
  TempDir dir;
  ScenarioResult r = run_scenario(sleeper(), options(dir));
  ASSERT_TRUE(r.timeline.facts.stalled_since) << r.verdict_reason;
  EXPECT_LT(*r.timeline.facts.stalled_since, 3000 * kMilli);
}

}  // namespace
}  // namespace aftermath
