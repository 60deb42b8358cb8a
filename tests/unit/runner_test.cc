// Repeat statistics: the Wilson interval and the per-scenario aggregates.
#include <gtest/gtest.h>

#include "harness/supervise/runner.h"

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

}  // namespace
}  // namespace aftermath
