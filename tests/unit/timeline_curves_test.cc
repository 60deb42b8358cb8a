// Tests for the timeline's curves (reports/timeline_curves.h).
#include "reports/timeline_curves.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace aftermath::svg {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

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
  std::string out = draw_curves(ScenarioResult{}, s, TimelineParts{}, "clip", y);
  EXPECT_THAT(out, HasSubstr("no samples recorded"));
  EXPECT_DOUBLE_EQ(y, 6 + kLaneH);
}

TEST(TimelineCurves, ProcsShmRssAndOneCurvePerGpu) {
  ScenarioResult sc;
  auto sample = [](int index, std::int64_t used) {
    GpuSample g;
    g.t = 1'000'000;
    g.index = index;
    g.used = used;
    return g;
  };
  sc.timeline.device.samples = {sample(1, 2048), sample(0, 1024)};
  TimelineParts parts;
  parts.procs_series = {{{0, 1}, {1, 3}}, 3};
  parts.shm_series = {{{0, 0}, {1, 4096}}, 4096};
  parts.rss_series = {{{1, 100}}, 100};
  parts.shm_events = {{1, "shm_add", "torch_1", 4096}};
  Scale s{10};
  double y = 0;
  std::string out = draw_curves(sc, s, parts, "clip-x", y);
  for (const char* cls : {"curve procs", "curve shm", "curve rss", "curve gpu"})
    EXPECT_THAT(out, HasSubstr(cls)) << cls;
  EXPECT_THAT(out, HasSubstr("GPU 0 memory used"));
  EXPECT_LT(out.find("GPU 0 memory used"), out.find("GPU 1 memory used"));
  EXPECT_THAT(out, HasSubstr("shm_add torch_1 4.0 KiB at 1.0 ms"));
  EXPECT_THAT(out, HasSubstr("data-pts=\"0:1 1:3\""));
  EXPECT_THAT(out, HasSubstr("clip-path=\"url(#clip-x)\""));
  // No GPU in the run (its device timeline unavailable): no GPU curve.
  sc.timeline.device.unavailable = "no NVIDIA driver";
  y = 0;
  EXPECT_THAT(draw_curves(sc, s, parts, "clip-x", y), Not(HasSubstr("curve gpu")));
  y = 0;
  sc.timeline.device.unavailable.clear();
  out = draw_curves(sc, s, parts, "clip-x", y);
  // Five rows of kCurveH, with 4 px between them, below the 6 px gap.
  EXPECT_DOUBLE_EQ(y, 6 + 5 * kCurveH + 4 * 4);
}

}  // namespace
}  // namespace aftermath::svg
