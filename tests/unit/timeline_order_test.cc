// Tests for sorting a scenario's timeline into lanes, rows, lines and curves
// (reports/timeline_order.h), on hand-made typed scenarios.
#include "reports/timeline_order.h"

#include <gtest/gtest.h>

namespace aftermath::svg {
namespace {

constexpr Nanos kMs = 1'000'000;

ScenarioResult scenario(std::vector<Observation> timeline) {
  ScenarioResult sc;
  sc.timeline.observations = std::move(timeline);
  return sc;
}

TEST(TimelineOrder, SignalsAndFaultsGoToTheirTargetsLane) {
  ScenarioResult sc = scenario({
      obs::signal(5 * kMs, 100, 15, "stop it"),
      obs::signal(6 * kMs, 999, 9, ""),
      obs::fault(3 * kMs, 0, 101, FaultAction::Sigkill, "w"),
      obs::fault(4 * kMs, 1, 0, FaultAction::Hang, "x"),
  });
  TimelineParts p = sort_timeline(sc, {{100, 0}, {101, 1}});
  ASSERT_EQ(p.lane_signals.at(0).size(), 1u);
  EXPECT_EQ(p.lane_signals.at(0)[0].signal, "SIGTERM");
  EXPECT_EQ(p.lane_signals.at(0)[0].why, "stop it");
  ASSERT_EQ(p.stray_signals.size(), 1u);
  EXPECT_EQ(p.stray_signals[0].pid, 999);
  ASSERT_EQ(p.lane_faults.at(1).size(), 1u);
  EXPECT_EQ(p.lane_faults.at(1)[0].what, "w");
  ASSERT_EQ(p.stray_faults.size(), 1u);
  // Every fault is also a line across the plot.
  ASSERT_EQ(p.vlines.size(), 2u);
  EXPECT_EQ(p.vlines[0].label, "fault SIGKILL");
  EXPECT_EQ(p.vlines[0].cls, "fault-line");
  EXPECT_EQ(p.vlines[0].title, "fault #0 SIGKILL at 3.0 ms: w");
}

TEST(TimelineOrder, ANodesProcessesHaveLanesOfTheirOwn) {
  // Two nodes each with a pid 100: a signal on node 1 goes to node 1's lane.
  Observation on1 = obs::signal(5 * kMs, 100, 9, "");
  on1.node = 1;
  ScenarioResult sc = scenario({on1});
  TimelineParts p = sort_timeline(sc, {{process_key(0, 100), 0}, {process_key(1, 100), 1}});
  EXPECT_EQ(p.lane_signals.count(0), 0u);
  ASSERT_EQ(p.lane_signals.at(1).size(), 1u);
}

TEST(TimelineOrder, AnOomKillIsDrawnAsTheKernelsSigkill) {
  ScenarioResult sc = scenario({obs::oom_kill(9 * kMs, 0, 100, 1, "/job", "Killed process 100")});
  TimelineParts p = sort_timeline(sc, {{100, 0}});
  ASSERT_EQ(p.lane_signals.at(0).size(), 1u);
  const SignalMark& k = p.lane_signals.at(0)[0];
  EXPECT_EQ(k.signal, "SIGKILL");
  EXPECT_EQ(k.by, "the kernel");
  EXPECT_EQ(k.why, "its OOM killer, in /job (oom_kill 1): Killed process 100");
  EXPECT_EQ(k.t, 9);
}

TEST(TimelineOrder, SamplesBecomeCurvesAndTheShmBaselineIsLeftOut) {
  ScenarioResult sc = scenario({
      obs::phase(1 * kMs, RunPhase::Launch),
      obs::sample(2 * kMs, 3, 4096),
      obs::sample(4 * kMs, 1, 0),
      obs::memory(4 * kMs, 1000, 2),
      obs::shm_add(2 * kMs, "torch_1", 4096),
      obs::shm_add(0, "old", 10, /*baseline=*/true),
      obs::shm_held(3 * kMs, 7, "/dev/shm/torch_1", 4096, "mapped", false),
      obs::shm_remove(5 * kMs, "torch_1"),
  });
  TimelineParts p = sort_timeline(sc, {});
  ASSERT_EQ(p.vlines.size(), 1u);
  EXPECT_EQ(p.vlines[0].cls, "phase");
  EXPECT_EQ(p.procs_series.pts.size(), 2u);
  EXPECT_EQ(p.procs_series.max, 3);
  EXPECT_EQ(p.shm_series.max, 4096);
  EXPECT_EQ(p.rss_series.pts.size(), 1u);
  ASSERT_EQ(p.shm_events.size(), 3u);
  EXPECT_EQ(p.shm_events[0].kind, "shm_add");
  EXPECT_EQ(p.shm_events[0].name, "torch_1");
  EXPECT_EQ(p.shm_events[0].bytes, 4096);
  // A held entry is named by its path; a removal has no size.
  EXPECT_EQ(p.shm_events[1].name, "/dev/shm/torch_1");
  EXPECT_EQ(p.shm_events[2].kind, "shm_remove");
  EXPECT_FALSE(p.shm_events[2].bytes);
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
