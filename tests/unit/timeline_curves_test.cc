// Tests for the timeline's curves (reports/timeline_curves.h).
#include "reports/timeline_curves.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace aftermath::svg {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(TimelineCurves, AStepPathHoldsEachValueUntilTheNext) {
  Scale s{1000};
  Series series{{{0, 0}, {500, 2}}, 2};
  // Height 10 at y0 0: value 0 at y 10, value 2 (the max) at y 0; held to the end.
  EXPECT_EQ(step_path(s, series, 0, 10, 1000), "M270,10 H715 V0 H1160");
  EXPECT_EQ(step_path(s, Series{}, 0, 10, 1000), "");
}

TEST(TimelineCurves, NoSamplesSaysSo) {
  Scale s{100};
  double y = 0;
  std::string out = draw_curves(json::object(), s, TimelineParts{}, "clip", y);
  EXPECT_THAT(out, HasSubstr("no samples recorded"));
  EXPECT_DOUBLE_EQ(y, 6 + kLaneH);
}

TEST(TimelineCurves, ProcsShmRssAndOneCurvePerGpu) {
  json sc = {
      {"device",
       {{"samples", json::array({{{"t_ms", 1}, {"index", 1}, {"used_bytes", 2048}},
                                 {{"t_ms", 1}, {"index", 0}, {"used_bytes", 1024}},
                                 {{"t_ms", 2}, {"used_bytes", 1}}})}}}};  // no index: skipped
  json shm_event = {{"kind", "shm_created"}, {"t_ms", 1}, {"name", "torch_1"}, {"bytes", 4096}};
  TimelineParts parts;
  parts.procs_series = {{{0, 1}, {1, 3}}, 3};
  parts.shm_series = {{{0, 0}, {1, 4096}}, 4096};
  parts.rss_series = {{{1, 100}}, 100};
  parts.shm_events = {&shm_event};
  Scale s{10};
  double y = 0;
  std::string out = draw_curves(sc, s, parts, "clip-x", y);
  for (const char* cls : {"curve procs", "curve shm", "curve rss", "curve gpu"})
    EXPECT_THAT(out, HasSubstr(cls)) << cls;
  EXPECT_THAT(out, HasSubstr("GPU 0 memory used"));
  EXPECT_LT(out.find("GPU 0 memory used"), out.find("GPU 1 memory used"));
  EXPECT_THAT(out, HasSubstr("shm_created torch_1 4.0 KiB at 1.0 ms"));
  EXPECT_THAT(out, HasSubstr("data-pts=\"0:1 1:3\""));
  EXPECT_THAT(out, HasSubstr("clip-path=\"url(#clip-x)\""));
  // Five rows of kCurveH, with 4 px between them, below the 6 px gap.
  EXPECT_DOUBLE_EQ(y, 6 + 5 * kCurveH + 4 * 4);
}

}  // namespace
}  // namespace aftermath::svg
