// Tests for the timeline SVG's geometry and number formatting (reports/svg.h).
#include "reports/svg.h"

#include <gtest/gtest.h>

#include <string>

namespace aftermath::svg {
namespace {

TEST(Svg, ScaleMapsTheRecordOntoThePlot) {
  Scale s{2000};
  EXPECT_DOUBLE_EQ(s.x(0), kPlotX0);
  EXPECT_DOUBLE_EQ(s.x(2000), kPlotX1);
  EXPECT_DOUBLE_EQ(s.x(1000), (kPlotX0 + kPlotX1) / 2);
}

TEST(Svg, NiceStepsAreOneTwoOrFiveTimesAPowerOfTen) {
  EXPECT_DOUBLE_EQ(nice_step(800, 8), 100);    // raw 100
  EXPECT_DOUBLE_EQ(nice_step(1600, 8), 200);   // raw 200
  EXPECT_DOUBLE_EQ(nice_step(2400, 8), 200);   // raw 300 rounds down to 2
  EXPECT_DOUBLE_EQ(nice_step(4000, 8), 500);   // raw 500
  EXPECT_DOUBLE_EQ(nice_step(6400, 8), 1000);  // raw 800 rounds up to 10
  EXPECT_DOUBLE_EQ(nice_step(8, 8), 1);
  EXPECT_NEAR(nice_step(0.8, 8), 0.1, 1e-12);
}

TEST(Svg, TickLabelsFollowTheStep) {
  EXPECT_EQ(tick_label(250, 50), "250 ms");
  EXPECT_EQ(tick_label(0.5, 0.5), "0.5 ms");
  EXPECT_EQ(tick_label(0.05, 0.05), "0.05 ms");
  EXPECT_EQ(tick_label(2000, 1000), "2 s");
  EXPECT_EQ(tick_label(1500, 1500), "1.5 s");
  EXPECT_EQ(tick_label(20000, 10000), "20 s");
}

TEST(Svg, NumbersCarryNoTrailingZeros) {
  EXPECT_EQ(px(12.0), "12");
  EXPECT_EQ(px(12.26), "12.3");
  EXPECT_EQ(ms_attr(1.5), "1.5");
  EXPECT_EQ(ms_attr(1.23456), "1.235");
}

TEST(Svg, FmtIsNotLimitedToItsBuffer) {
  EXPECT_EQ(fmt("%d-%s", 7, "x"), "7-x");
  std::string long_arg(2000, 'a');
  EXPECT_EQ(fmt("<%s>", long_arg.c_str()), "<" + long_arg + ">");
}

}  // namespace
}  // namespace aftermath::svg
