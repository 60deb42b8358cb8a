// Repeat statistics: the Wilson interval and the per-scenario aggregates.
#include "harness/core/repeat_stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/unit/repeat_fixture.h"

namespace aftermath {
namespace {

TEST(WilsonInterval, KnownValues) {
  auto [lo, hi] = wilson_interval(7, 20);
  EXPECT_NEAR(lo, 0.1812, 1e-4);
  EXPECT_NEAR(hi, 0.5671, 1e-4);
  auto [lo0, hi0] = wilson_interval(0, 10);
  EXPECT_DOUBLE_EQ(lo0, 0.0);
  EXPECT_NEAR(hi0, 0.2775, 1e-4);
  auto [lo1, hi1] = wilson_interval(10, 10);
  EXPECT_NEAR(lo1, 0.7225, 1e-4);
  EXPECT_DOUBLE_EQ(hi1, 1.0);
  auto [a, b] = wilson_interval(0, 0);
  EXPECT_EQ(a, 0.0);
  EXPECT_EQ(b, 1.0);
}

ScenarioResult run_of(const std::string& name, Verdict v, std::optional<double> gone,
                      const std::string& expect = "fail: no_hang") {
  ScenarioResult r;
  r.name = name;
  r.verdict = v;
  r.expect = testing_repeats::expect_of(expect);
  r.timings_ms["to_all_gone_ms"] = gone;
  return r;
}

TEST(Aggregate, RateFlakinessAndDistributions) {
  std::vector<ScenarioResult> rs = {
      run_of("hang", Verdict::XFail, 10), run_of("hang", Verdict::XPass, 30),
      run_of("hang", Verdict::XFail, 20), run_of("hang", Verdict::XFail, std::nullopt),
      run_of("ok", Verdict::Pass, 5, "pass")};
  auto aggs = aggregate(rs);
  ASSERT_EQ(aggs.size(), 2u);
  const Aggregate& h = aggs[0];
  EXPECT_EQ(h.name, "hang");
  EXPECT_EQ(h.runs, 4);
  EXPECT_EQ(h.reproduced, 3);
  EXPECT_DOUBLE_EQ(h.rate, 0.75);
  EXPECT_TRUE(h.flaky);
  EXPECT_TRUE(h.expects_failure);
  EXPECT_EQ(h.verdicts.at(Verdict::XFail), 3);
  const auto& d = h.timings_ms.at("to_all_gone_ms");
  EXPECT_EQ(d.n, 3);  // the run without the timing is left out, not counted as 0
  EXPECT_DOUBLE_EQ(d.min, 10);
  EXPECT_DOUBLE_EQ(d.median, 20);
  EXPECT_DOUBLE_EQ(d.max, 30);
  EXPECT_DOUBLE_EQ(d.p95, 30);
  EXPECT_FALSE(aggs[1].flaky);
  EXPECT_FALSE(aggs[1].expects_failure);
}

// Scenarios keep the order they were first seen in, not their names' order;
// a scenario that never reproduced has rate 0 with a Wilson upper bound above 0.
TEST(Aggregate, FirstSeenOrderAndAnUnreproducedBug) {
  std::vector<ScenarioResult> rs = {run_of("zeta", Verdict::Fail, 1),
                                    run_of("alpha", Verdict::Pass, 2, "pass"),
                                    run_of("zeta", Verdict::Fail, 3)};
  auto aggs = aggregate(rs);
  ASSERT_EQ(aggs.size(), 2u);
  EXPECT_EQ(aggs[0].name, "zeta");
  EXPECT_EQ(aggs[1].name, "alpha");
  EXPECT_EQ(aggs[0].runs, 2);
  EXPECT_EQ(aggs[0].reproduced, 0);
  EXPECT_DOUBLE_EQ(aggs[0].rate, 0.0);
  EXPECT_FALSE(aggs[0].flaky);
  auto [lo, hi] = wilson_interval(0, 2);
  EXPECT_DOUBLE_EQ(aggs[0].rate_low, lo);
  EXPECT_DOUBLE_EQ(aggs[0].rate_high, hi);
  EXPECT_GT(aggs[0].rate_high, 0.5);
  EXPECT_TRUE(aggregate({}).empty());
}

ScenarioResult failing_run(int index, int runs, std::vector<std::string> failing,
                           Verdict v = Verdict::Fail) {
  ScenarioResult r = run_of("leaky", v, 1, "pass");
  r.run_index = index;
  r.runs = runs;
  for (const auto& name : {"no_orphans", "shm_clean", "all_exited"}) {
    CheckResult c;
    c.name = name;
    bool fails = std::find(failing.begin(), failing.end(), name) != failing.end();
    c.status = fails ? CheckStatus::Fail : CheckStatus::Pass;
    r.checks.push_back(c);
  }
  return r;
}

// Both runs fail, on different checks: one verdict, two bugs (or one bug
// that shows two ways). Flaky, and each set is named with its runs.
TEST(Aggregate, DifferentFailedChecksAreFlakyUnderOneVerdict) {
  auto aggs = aggregate({failing_run(0, 2, {"shm_clean"}), failing_run(1, 2, {"no_orphans"})});
  ASSERT_EQ(aggs.size(), 1u);
  const Aggregate& a = aggs[0];
  EXPECT_EQ(a.verdicts.size(), 1u);
  EXPECT_TRUE(a.flaky);
  ASSERT_EQ(a.outcomes.size(), 2u);
  EXPECT_EQ(a.outcomes[0].failed_checks, std::vector<std::string>{"shm_clean"});
  EXPECT_EQ(a.outcomes[0].runs, std::vector<int>{1});
  EXPECT_EQ(a.outcomes[1].failed_checks, std::vector<std::string>{"no_orphans"});
  EXPECT_EQ(a.outcomes[1].runs, std::vector<int>{2});
  EXPECT_EQ(outcomes_text(a), "1/2 fail on shm_clean (run 1); 1/2 fail on no_orphans (run 2)");
}

// The negative control: the same checks fail in every run (an error counts
// as a failure, and the order they are listed in does not matter).
TEST(Aggregate, TheSameFailedChecksEveryRunAreNotFlaky) {
  ScenarioResult second = failing_run(1, 3, {"shm_clean", "no_orphans"});
  std::reverse(second.checks.begin(), second.checks.end());
  ScenarioResult third = failing_run(2, 3, {"shm_clean"});
  third.checks[0].status = CheckStatus::Error;  // no_orphans
  auto aggs = aggregate({failing_run(0, 3, {"shm_clean", "no_orphans"}), second, third});
  EXPECT_FALSE(aggs[0].flaky) << outcomes_text(aggs[0]);
  ASSERT_EQ(aggs[0].outcomes.size(), 1u);
  EXPECT_EQ(aggs[0].outcomes[0].runs, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(outcomes_text(aggs[0]), "3/3 fail on no_orphans, shm_clean (runs 1, 2, 3)");
}

// A scenario that expects to pass is repeated to see how often it fails; a
// skipped run is not judged either way.
TEST(Aggregate, ThePassingScenariosRateCountsFailuresOverTheJudgedRuns) {
  auto aggs = aggregate({failing_run(0, 4, {"shm_clean"}), failing_run(1, 4, {}, Verdict::Pass),
                         failing_run(2, 4, {"all_exited"}, Verdict::Error),
                         failing_run(3, 4, {}, Verdict::Skipped)});
  const Aggregate& a = aggs[0];
  EXPECT_FALSE(a.expects_failure);
  EXPECT_EQ(a.failed, 2);
  EXPECT_EQ(a.skipped, 1);
  EXPECT_EQ(a.judged, 3);
  EXPECT_DOUBLE_EQ(a.rate, 2.0 / 3);
  auto [lo, hi] = wilson_interval(2, 3);
  EXPECT_DOUBLE_EQ(a.rate_low, lo);
  EXPECT_DOUBLE_EQ(a.rate_high, hi);
  EXPECT_EQ(rate_counts(a), "failed");
  EXPECT_EQ(rate_text(a), "failed 2/3 (67%, 95% interval 21\u201394%), 1 skipped");
}

// A scenario that expects a pass, with a check a known race may fail, counts
// its failures like any passing scenario: it expects no failure.
TEST(Aggregate, AScenarioThatMayFailACheckStillExpectsAPass) {
  ScenarioResult r = failing_run(0, 2, {"no_orphans"});
  r.expect = testing_repeats::expect_of("pass; may fail: shm_clean");
  ScenarioResult ok = failing_run(1, 2, {}, Verdict::Pass);
  ok.expect = r.expect;
  const Aggregate a = aggregate({r, ok})[0];
  EXPECT_FALSE(a.expects_failure);
  EXPECT_EQ(rate_counts(a), "failed");
  EXPECT_DOUBLE_EQ(a.rate, 0.5);
}

TEST(RateText, ReadsAsASentence) {
  auto run = testing_repeats::repeated_run();
  ASSERT_EQ(run.aggregates.size(), 2u);
  EXPECT_EQ(rate_text(run.aggregates[0]), testing_repeats::kHangRate);
  EXPECT_EQ(rate_text(run.aggregates[1]), testing_repeats::kLeakyRate);
  EXPECT_EQ(outcomes_text(run.aggregates[0]), testing_repeats::kHangOutcomes);
  EXPECT_EQ(outcomes_text(run.aggregates[1]), testing_repeats::kLeakyOutcomes);
  Aggregate none;
  none.name = "gpu";
  none.runs = none.skipped = 3;
  EXPECT_EQ(rate_text(none), "not judged: 3/3 skipped");
}

}  // namespace
}  // namespace aftermath
