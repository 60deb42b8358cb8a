// Unit tests for harness/supervise/sample_pacer: the sampler's period
// stretches under samples that take more than half of it, not under one slow
// sample, never past a second, and comes back to the scenario's.
#include "harness/supervise/sample_pacer.h"

#include <gtest/gtest.h>

namespace aftermath {
namespace {

constexpr Nanos kMs = kMilli;

TEST(SamplePacer, CheapSamplesKeepTheScenariosPeriod) {
  SamplePacer p(20 * kMs);
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(p.took(kMs / 10));
  EXPECT_EQ(p.period(), 20 * kMs);
}

TEST(SamplePacer, OneSlowSampleAmongCheapOnesDoesNotMoveIt) {
  SamplePacer p(20 * kMs);
  for (int i = 0; i < 100; ++i) {
    EXPECT_FALSE(p.took(i % 25 == 24 ? 25 * kMs : kMs / 10)) << "sample " << i;
  }
  EXPECT_EQ(p.period(), 20 * kMs);
}

TEST(SamplePacer, SamplesLongerThanHalfThePeriodStretchItUntilTheyFit) {
  SamplePacer p(20 * kMs);
  // A thousand processes: every sample takes 33 ms, longer than the period.
  std::optional<Nanos> moved;
  for (int i = 0; i < 10 && !moved; ++i) moved = p.took(33 * kMs);
  ASSERT_TRUE(moved);
  EXPECT_EQ(*moved, 40 * kMs);
  for (int i = 0; i < 20; ++i) (void)p.took(33 * kMs);
  EXPECT_EQ(p.period(), 80 * kMs);  // 33 ms is less than half of 80: it stays
  EXPECT_GE(p.period(), 2 * 33 * kMs);
}

TEST(SamplePacer, NeverPastASecond) {
  SamplePacer p(20 * kMs);
  for (int i = 0; i < 200; ++i) (void)p.took(5 * kSecond);
  EXPECT_EQ(p.period(), SamplePacer::kMaxPeriod);
}

TEST(SamplePacer, ComesBackToTheScenariosPeriodWhenSamplesAreCheapAgain) {
  SamplePacer p(20 * kMs);
  for (int i = 0; i < 50; ++i) (void)p.took(100 * kMs);
  ASSERT_GT(p.period(), 20 * kMs);
  for (int i = 0; i < 200; ++i) (void)p.took(kMs / 10);
  EXPECT_EQ(p.period(), 20 * kMs);
}

}  // namespace
}  // namespace aftermath
