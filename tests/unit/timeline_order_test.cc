// Tests for sorting a scenario's timeline into lanes, rows, lines and curves
// (reports/timeline_order.h), on hand-made result.json scenarios.
#include "reports/timeline_order.h"

#include <gtest/gtest.h>

namespace aftermath::svg {
namespace {

using nlohmann::json;

json scenario(json timeline) { return json{{"timeline", std::move(timeline)}}; }

TEST(TimelineOrder, SignalsAndFaultsGoToTheirTargetsLane) {
  json sc = scenario(json::array({
      {{"kind", "signal"}, {"t_ms", 5}, {"pid", 100}, {"signal", "SIGTERM"}},
      {{"kind", "signal"}, {"t_ms", 6}, {"pid", 999}, {"signal", "SIGKILL"}},
      {{"kind", "fault"},
       {"t_ms", 3},
       {"pid", 101},
       {"action", "kill"},
       {"index", 0},
       {"what", "w"}},
      {{"kind", "fault"}, {"t_ms", 4}, {"action", "hang"}, {"what", "x"}},
  }));
  TimelineParts p = sort_timeline(sc, {{100, 0}, {101, 1}});
  ASSERT_EQ(p.lane_signals.at(0).size(), 1u);
  EXPECT_EQ(p.lane_signals.at(0)[0]->at("signal"), "SIGTERM");
  ASSERT_EQ(p.stray_signals.size(), 1u);
  EXPECT_EQ(p.stray_signals[0]->at("pid"), 999);
  ASSERT_EQ(p.lane_faults.at(1).size(), 1u);
  ASSERT_EQ(p.stray_faults.size(), 1u);
  // Every fault is also a line across the plot.
  ASSERT_EQ(p.vlines.size(), 2u);
  EXPECT_EQ(p.vlines[0].label, "fault kill");
  EXPECT_EQ(p.vlines[0].cls, "fault-line");
  EXPECT_EQ(p.vlines[0].title, "fault #0 kill at 3.0 ms: w");
}

TEST(TimelineOrder, AnOomKillIsDrawnAsTheKernelsSigkill) {
  json sc = scenario(json::array({{{"kind", "oom_kill"},
                                   {"t_ms", 9},
                                   {"pid", 100},
                                   {"cgroup", "/job"},
                                   {"kills", 1},
                                   {"kernel", "Killed process 100"}}}));
  TimelineParts p = sort_timeline(sc, {{100, 0}});
  ASSERT_EQ(p.lane_signals.at(0).size(), 1u);
  const json& k = *p.lane_signals.at(0)[0];
  EXPECT_EQ(k.at("signal"), "SIGKILL");
  EXPECT_EQ(k.at("by"), "the kernel");
  EXPECT_EQ(k.at("why"), "its OOM killer, in /job (oom_kill 1): Killed process 100");
  EXPECT_EQ(&k, &p.kernel_kills.front());
}

TEST(TimelineOrder, SamplesBecomeCurvesAndTheShmBaselineIsLeftOut) {
  json sc = scenario(json::array({
      {{"kind", "phase"}, {"t_ms", 1}, {"name", "launch"}},
      {{"kind", "sample"}, {"t_ms", 2}, {"procs", 3}, {"shm_bytes", 4096}},
      {{"kind", "sample"}, {"t_ms", 4}, {"procs", 1}, {"shm_bytes", 0}},
      {{"kind", "memory"}, {"t_ms", 4}, {"rss_bytes", 1000}},
      {{"kind", "shm_created"}, {"t_ms", 2}, {"name", "torch_1"}},
      {{"kind", "shm_present"}, {"t_ms", 0}, {"name", "old"}, {"baseline", true}},
      {{"kind", "phase"}, {"name", "no time"}},  // no t_ms: skipped
  }));
  TimelineParts p = sort_timeline(sc, {});
  ASSERT_EQ(p.vlines.size(), 1u);
  EXPECT_EQ(p.vlines[0].cls, "phase");
  EXPECT_EQ(p.procs_series.pts.size(), 2u);
  EXPECT_EQ(p.procs_series.max, 3);
  EXPECT_EQ(p.shm_series.max, 4096);
  EXPECT_EQ(p.rss_series.pts.size(), 1u);
  ASSERT_EQ(p.shm_events.size(), 1u);
  EXPECT_EQ(p.shm_events[0]->at("name"), "torch_1");
}

TEST(TimelineOrder, StaggerSpreadsCloseLabelsOverRows) {
  Scale s{1000};
  std::vector<VLine> lines = {{500, "teardown", "", "phase"},
                              {10, "launch", "", "phase"},
                              {11, "job_exited", "", "phase"},
                              {12, "settle", "", "phase"}};
  EXPECT_EQ(stagger(lines, s), 3);
  // Sorted by time; the three close ones take a row each, the far one row 0.
  EXPECT_EQ(lines[0].label, "launch");
  EXPECT_EQ(lines[0].row, 0);
  EXPECT_EQ(lines[1].row, 1);
  EXPECT_EQ(lines[2].row, 2);
  EXPECT_EQ(lines[3].label, "teardown");
  EXPECT_EQ(lines[3].row, 0);

  std::vector<VLine> none;
  EXPECT_EQ(stagger(none, s), 1);
}

}  // namespace
}  // namespace aftermath::svg
