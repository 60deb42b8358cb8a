// Unit tests for memory_growth (harness/check/memory_checks): hand-made
// timelines with the "memory" events the Python fixtures send from each
// DataLoader worker. Planted growth must fail, flat memory must pass, a
// one-off jump must not count as a trend, and every param must bite.
#include "harness/check/memory_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "harness/check/checks.h"
#include "harness/core/timeline.h"
#include "harness/scenario/scenario.h"
#include "tests/unit/check_fixtures.h"

namespace aftermath {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

using testing_checks::msec;

constexpr int kInit = 10;
constexpr int kMain = 100;
constexpr int kWorker0 = 101;
constexpr int kWorker1 = 102;
constexpr Nanos kTeardown = msec(9000);

Scenario make_scenario() { return testing_checks::every_check_scenario(); }

// A main process (rank 0) and two DataLoader workers that announced themselves.
Timeline job() {
  Timeline tl;
  tl.facts.top_pid = kMain;
  tl.facts.init_pid = kInit;
  tl.add(obs::phase(0, RunPhase::Launch));
  tl.add(obs::proc_start(msec(1), kMain, kInit, "python3", "python3 loader_job.py", Role::Unknown));
  tl.add(obs::announce(msec(2), kMain, Role::Rank, 0, -1, "{}"));
  tl.add(obs::proc_start(msec(3), kWorker0, kMain, "python3", "python3 loader_job.py",
                         Role::Unknown, 1));
  tl.add(obs::proc_start(msec(3), kWorker1, kMain, "python3", "python3 loader_job.py",
                         Role::Unknown, 1));
  tl.add(obs::announce(msec(4), kWorker0, Role::Worker, 0, 0, "{}"));
  tl.add(obs::announce(msec(4), kWorker1, Role::Worker, 0, 1, "{}"));
  return tl;
}

void finish(Timeline& tl) {
  for (int pid : {kWorker0, kWorker1, kMain})
    tl.add(obs::proc_exit(msec(8000), pid, Outcome::exited(0)));
  tl.add(obs::phase(kTeardown, RunPhase::Teardown));
  tl.add(obs::phase(kTeardown + msec(100), RunPhase::Done));
}

void memory(Timeline& tl, int pid, int step, double pss_kb, double rss_kb = 150000) {
  tl.add(obs::event(msec(100 + 10 * step), pid, "memory",
                    json{{"rss_kb", rss_kb}, {"pss_kb", pss_kb}, {"step", step}}.dump()));
}

// n steps of pss = base + slope * step (+ a deterministic wiggle of +-noise).
void series(Timeline& tl, int pid, int n, double base, double slope, double noise = 0) {
  for (int s = 1; s <= n; ++s) memory(tl, pid, s, base + slope * s + (s % 2 ? noise : -noise));
}

CheckResult run(const Timeline& tl, const MemoryGrowthParams& p = {}) {
  static Scenario sc = make_scenario();
  auto procs = build_histories(tl);
  auto in = make_check_input(sc, tl, procs);
  return memory_growth(in, p);
}

json proc(const CheckResult& r, int pid) {
  for (const auto& j : r.measured["processes"])
    if (j["pid"] == pid) return j;
  return nullptr;
}

TEST(MemoryGrowth, PlantedGrowthFails) {
  // Copy-on-read: worker 0's PSS grows ~600 KB per batch, worker 1 is flat.
  Timeline tl = job();
  series(tl, kWorker0, 16, 22000, 600, 40);
  series(tl, kWorker1, 16, 22000, 0, 40);
  finish(tl);
  CheckResult r = run(tl);
  EXPECT_EQ(r.status, CheckStatus::Fail) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("1 of 2 process(es)"));
  EXPECT_THAT(r.reason, HasSubstr("worker 101 (rank 0 worker 0) +600 KB/step"));
  EXPECT_THAT(r.reason, Not(HasSubstr("worker 102")));
  EXPECT_NEAR(proc(r, kWorker0)["slope_kb_per_step"].get<double>(), 600, 1);
  EXPECT_NEAR(proc(r, kWorker0)["ls_slope_kb_per_step"].get<double>(), 600, 10);
  EXPECT_EQ(proc(r, kWorker0)["over"], true);
  EXPECT_EQ(proc(r, kWorker1)["over"], false);
  EXPECT_EQ(proc(r, kWorker0)["role"], "worker");
  EXPECT_EQ(proc(r, kWorker0)["points"], 16);
  EXPECT_NEAR(proc(r, kWorker0)["growth_kb"].get<double>(), 600 * 15, 100);
  EXPECT_EQ(r.measured["judged"], 2);
  EXPECT_NEAR(r.measured["steepest_kb_per_step"].get<double>(), 600, 1);
}

TEST(MemoryGrowth, FlatPasses) {
  Timeline tl = job();
  series(tl, kWorker0, 16, 14000, 0, 150);  // noisy but flat
  series(tl, kWorker1, 16, 15000, 20, 0);   // a slow drift, under the limit
  finish(tl);
  CheckResult r = run(tl);
  EXPECT_EQ(r.status, CheckStatus::Pass) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("2 process(es) judged on pss_kb"));
  EXPECT_THAT(r.reason, HasSubstr("worker 102"));  // the steepest one
  EXPECT_NEAR(r.measured["steepest_kb_per_step"].get<double>(), 20, 1);
}

TEST(MemoryGrowth, OneOffJumpsAreNotATrend) {
  // A step up early on (another worker forked beside it) and one spike (a
  // big batch in flight): the least-squares slope is steep, the median of
  // pairwise slopes is not. (A step that splits the series near its middle
  // would read as growth: Theil-Sen tolerates up to ~29% outlying pairs.)
  Timeline tl = job();
  for (int s = 1; s <= 16; ++s) memory(tl, kWorker0, s, s < 3 ? 14000 : s == 12 ? 54000 : 24000);
  finish(tl);
  CheckResult r = run(tl);
  EXPECT_EQ(r.status, CheckStatus::Pass) << r.reason;
  EXPECT_GT(proc(r, kWorker0)["ls_slope_kb_per_step"].get<double>(), 256);
  EXPECT_LE(proc(r, kWorker0)["slope_kb_per_step"].get<double>(), 256);
}

TEST(MemoryGrowth, PssGrowsWhileRssStaysFlat) {
  // What copy-on-read looks like: the pages were resident (shared) from the
  // fork, so RSS does not move; they turn private, so PSS does.
  Timeline tl = job();
  for (int s = 1; s <= 12; ++s) memory(tl, kWorker0, s, 20000 + 550 * s, 301000);
  finish(tl);
  EXPECT_EQ(run(tl).status, CheckStatus::Fail);
  MemoryGrowthParams rss;
  rss.field = "rss_kb";
  CheckResult r = run(tl, rss);
  EXPECT_EQ(r.status, CheckStatus::Pass) << r.reason;
  EXPECT_EQ(r.measured["field"], "rss_kb");
}

TEST(MemoryGrowth, ThresholdIsAParam) {
  Timeline tl = job();
  series(tl, kWorker0, 10, 10000, 300);
  finish(tl);
  MemoryGrowthParams p;
  EXPECT_EQ(run(tl, p).status, CheckStatus::Fail);  // default 256
  p.max_kb_per_step = 512;
  CheckResult r = run(tl, p);
  EXPECT_EQ(r.status, CheckStatus::Pass) << r.reason;
  EXPECT_EQ(r.measured["threshold_kb_per_step"], 512.0);
  EXPECT_THAT(r.reason, HasSubstr("limit 512"));
}

TEST(MemoryGrowth, SkipStepsLeavesTheWarmUpOut) {
  // Steep for the first 4 steps (workers still forking), flat after.
  Timeline tl = job();
  for (int s = 1; s <= 16; ++s) memory(tl, kWorker0, s, s <= 4 ? 10000 + 3000 * s : 22000);
  finish(tl);
  MemoryGrowthParams p;
  p.min_points = 8;
  p.skip_steps = 8;
  CheckResult r = run(tl, p);
  EXPECT_EQ(r.status, CheckStatus::Pass) << r.reason;
  EXPECT_EQ(proc(r, kWorker0)["first_step"], 9.0);
}

TEST(MemoryGrowth, RoleFilter) {
  Timeline tl = job();
  series(tl, kMain, 10, 90000, 2000);  // the main process grows (it keeps batches)
  series(tl, kWorker0, 10, 14000, 0);
  finish(tl);
  EXPECT_EQ(run(tl).status, CheckStatus::Fail);
  MemoryGrowthParams p;
  p.role = Role::Worker;
  CheckResult r = run(tl, p);
  EXPECT_EQ(r.status, CheckStatus::Pass) << r.reason;
  EXPECT_EQ(r.measured["judged"], 1);
  EXPECT_TRUE(proc(r, kMain).is_null());
}

TEST(MemoryGrowth, SkippedWithoutEnoughData) {
  {
    Timeline tl = job();
    finish(tl);
    CheckResult r = run(tl);
    EXPECT_EQ(r.status, CheckStatus::Skipped);
    EXPECT_THAT(r.reason, HasSubstr("no \"memory\" events"));
  }
  {
    Timeline tl = job();
    for (int s = 1; s <= 8; ++s)
      tl.add(obs::event(msec(100 + s), kWorker0, "memory",
                        json{{"rss_kb", 1000}, {"step", s}}.dump()));
    finish(tl);
    CheckResult r = run(tl);
    EXPECT_EQ(r.status, CheckStatus::Skipped);
    EXPECT_THAT(r.reason, HasSubstr("no \"memory\" event carries pss_kb"));
  }
  {
    Timeline tl = job();
    series(tl, kWorker0, 3, 10000, 5000);  // steep, but only 3 points
    finish(tl);
    CheckResult r = run(tl);
    EXPECT_EQ(r.status, CheckStatus::Skipped) << r.reason;
    EXPECT_THAT(r.reason, HasSubstr("worker 101 (rank 0 worker 0) (3 point(s))"));
    EXPECT_EQ(proc(r, kWorker0)["judged"], false);
  }
}

TEST(MemoryGrowth, MalformedEventsAreIgnored) {
  Timeline tl = job();
  series(tl, kWorker0, 8, 10000, 0);
  tl.add(obs::event(msec(500), kWorker0, "memory", "not json"));
  tl.add(obs::event(msec(501), kWorker0, "memory", json{{"pss_kb", "lots"}, {"step", 9}}.dump()));
  tl.add(obs::event(msec(502), kWorker0, "memory", json{{"pss_kb", 99999}}.dump()));  // no step
  tl.add(
      obs::event(msec(503), kWorker0, "memory", json{{"pss_kb", "10000"}, {"step", "9"}}.dump()));
  finish(tl);
  CheckResult r = run(tl);
  EXPECT_EQ(r.status, CheckStatus::Pass) << r.reason;
  EXPECT_EQ(proc(r, kWorker0)["points"], 9);  // the numeric-text one counts
}

TEST(MemoryGrowth, UnannouncedSenderIsStillJudged) {
  Timeline tl = job();
  series(tl, 555, 10, 10000, 1000);
  finish(tl);
  CheckResult r = run(tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_THAT(r.reason, HasSubstr("process 555"));
}

}  // namespace
}  // namespace aftermath

namespace aftermath {
namespace {

// Through the catalogue: the scenario's checks.memory_growth params reach the
// check (parsed from YAML, run by run_checks), and it runs only when named.
TEST(MemoryGrowthCatalogue, ScenarioParamsDecideTheVerdict) {
  Timeline tl = job();
  series(tl, kWorker0, 16, 22000, 600, 40);
  finish(tl);
  auto procs = build_histories(tl);
  auto parse = [](const std::string& checks) {
    ParseContext ctx;
    ctx.file = "<unit>";
    ctx.check_command = false;
    auto r = parse_scenario("name: t\ndescription: d\njob: {command: /bin/true}\n" + checks, ctx);
    EXPECT_TRUE(r.ok());
    return *r;
  };
  auto status = [&](const Scenario& sc) -> std::optional<CheckStatus> {
    for (const auto& c : run_checks(sc, tl, procs))
      if (c.name == "memory_growth") return c.status;
    return std::nullopt;
  };
  EXPECT_EQ(status(parse("")), std::nullopt);                                      // opt-in
  EXPECT_EQ(status(parse("checks: {memory_growth: true}\n")), CheckStatus::Fail);  // default 256
  EXPECT_EQ(status(parse("checks: {memory_growth: {max_kb_per_step: 1000}}\n")), CheckStatus::Pass);
  // Judging only ranks leaves the growing worker out: nothing to judge.
  EXPECT_EQ(status(parse("checks: {memory_growth: {role: rank}}\n")), CheckStatus::Skipped);
}

}  // namespace
}  // namespace aftermath
