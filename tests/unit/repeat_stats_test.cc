// Repeat statistics: the Wilson interval and the per-scenario aggregates.
#include <gtest/gtest.h>

#include "harness/core/repeat_stats.h"

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
  r.expect = expect;
  r.timings_ms["to_all_gone_ms"] = gone;
  return r;
}

TEST(Aggregate, RateFlakinessAndDistributions) {
  std::vector<ScenarioResult> rs = {run_of("hang", Verdict::XFail, 10), run_of("hang", Verdict::XPass, 30),
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
  EXPECT_EQ(h.verdicts.at("xfail"), 3);
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
  std::vector<ScenarioResult> rs = {run_of("zeta", Verdict::Fail, 1), run_of("alpha", Verdict::Pass, 2, "pass"),
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

}  // namespace
}  // namespace aftermath
