// Tests for the timeline's lanes (reports/timeline_lanes.h), on hand-made
// scenarios.
#include "reports/timeline_lanes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/files.h"
#include "tests/unit/lanes_fixture.h"

namespace aftermath::svg {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

using testing::count;

TEST(TimelineLanes, LabelsNameRoleRankAndTopAndFitTheColumn) {
  report::ProcessView p;
  p.role = "rank";
  p.pid = 42;
  p.rank = 1;
  p.comm = "python3";
  p.top = true;
  EXPECT_EQ(lane_label(p), "rank 42 r1 python3 \u2605");
  p.comm = std::string(60, 'c');
  std::string cut = lane_label(p);
  EXPECT_EQ(lane_label(p), "rank 42 r1 " + std::string(29, 'c') + "\u2026");  // 40 characters
  p.log_stdout = "out.log";  // room for the "out" / "err" links
  EXPECT_EQ(lane_label(p), "rank 42 r1 " + std::string(20, 'c') + "\u2026");
}

TEST(TimelineLanes, TitleTellsTheLife) {
  report::ProcessView p;
  p.ppid = 7;
  p.last_ppid = 1;
  p.role = "worker";
  p.pid = 9;
  p.comm = "w";
  p.start_ms = 1;
  p.orphaned_ms = 5;
  std::string t = process_title(p);
  EXPECT_THAT(t, HasSubstr("worker 9 w\nstarted 1.0 ms, alive at the end of the record"));
  EXPECT_THAT(t, HasSubstr("orphaned at 5.0 ms (parent 7, later 1)"));
}

TEST(TimelineLanes, OneLanePerProcessGroupedByRoleWithStrayRows) {
  json sc = {
      {"processes", json::array({{{"pid", 10}, {"role", "launcher"}, {"started_ms", 0}},
                                 {{"pid", 11}, {"role", "rank"}, {"started_ms", 1}},
                                 {{"pid", 12}, {"role", "rank"}, {"started_ms", 1}}})},
      {"timeline", json::array({{{"kind", "signal"}, {"t_ms", 5}, {"pid", 11}, {"signo", 15}},
                                {{"kind", "signal"}, {"t_ms", 5}, {"pid", 77}, {"signo", 9}},
                                {{"kind", "fault"}, {"t_ms", 2}, {"action", "hang"}}})}};
  auto [out, y] = testing_reports::draw_scenario_lanes(sc);
  EXPECT_EQ(count(out, "class=\"lane\""), 3u);
  EXPECT_THAT(out, HasSubstr("launcher \u00b7 1 process</text>"));
  EXPECT_THAT(out, HasSubstr("rank \u00b7 2 processes</text>"));
  EXPECT_THAT(out, HasSubstr("faults (no job process target)"));
  EXPECT_THAT(out, HasSubstr("signals to other pids"));
  EXPECT_EQ(count(out, "class=\"sig "), 2u);
  // Two group headers, three lanes, two stray rows.
  EXPECT_DOUBLE_EQ(y, 2 * kGroupH + 5 * kLaneH);
}

TEST(TimelineLanes, NoProcessSaysSo) {
  ScenarioResult sc;
  TimelineParts parts;
  Scale s{100};
  double y = 10;
  std::string out = draw_lanes(LaneContext{sc, s, parts, "<g>", ""}, {}, y);
  EXPECT_THAT(out, HasSubstr("no job process was observed"));
  EXPECT_THAT(out, Not(HasSubstr("row-label")));
  EXPECT_DOUBLE_EQ(y, 10 + kLaneH);
}

}  // namespace
}  // namespace aftermath::svg
