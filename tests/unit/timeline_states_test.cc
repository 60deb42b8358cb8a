// Tests for the stopped and uninterruptible spans of the timeline
// (reports/timeline_states.h): spans from proc_state marks, their bars on
// a lane, and colours that stay apart from every other bar also for readers
// with a colour vision deficiency.
#include "reports/timeline_states.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "reports/timeline_lanes.h"
#include "tests/unit/lanes_fixture.h"

namespace aftermath::svg {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<StateMark> entries(std::initializer_list<std::pair<double, char>> states) {
  std::vector<StateMark> out;
  for (const auto& [t, s] : states) out.push_back({t, s});
  return out;
}

TEST(TimelineStates, ClassesOnlyForStoppedAndUninterruptible) {
  EXPECT_STREQ(state_class('T'), "stopped");
  EXPECT_STREQ(state_class('t'), "stopped");
  EXPECT_STREQ(state_class('D'), "uninterruptible");
  for (char c : {'R', 'S', 'Z', 'X', 'I', '?'}) EXPECT_EQ(state_class(c), nullptr) << c;
}

TEST(TimelineStates, SpansRunUntilAnotherStateOrTheEnd) {
  // Sleeping, stopped (T then t: one span), running, in D until the end.
  auto e = entries({{10, 'S'}, {20, 'T'}, {25, 't'}, {40, 'R'}, {50, 'D'}});
  auto spans = state_spans(e, 90);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].state, 'T');
  EXPECT_DOUBLE_EQ(spans[0].t0, 20);
  EXPECT_DOUBLE_EQ(spans[0].t1, 40);
  EXPECT_EQ(spans[1].state, 'D');
  EXPECT_DOUBLE_EQ(spans[1].t0, 50);
  EXPECT_DOUBLE_EQ(spans[1].t1, 90);
  // Straight from stopped to uninterruptible: two spans that meet.
  auto td = entries({{20, 'T'}, {30, 'D'}, {35, 'S'}});
  spans = state_spans(td, 90);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_DOUBLE_EQ(spans[0].t1, 30);
  EXPECT_DOUBLE_EQ(spans[1].t0, 30);
  EXPECT_DOUBLE_EQ(spans[1].t1, 35);
}

TEST(TimelineStates, OutOfOrderUnknownAndLateEntries) {
  auto e = entries({{40, 'S'}, {20, 'T'}, {30, 'T'}, {60, 'T'}});
  e.push_back({22, 0});             // no state letter: skipped
  auto spans = state_spans(e, 50);  // the process died at 50
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_DOUBLE_EQ(spans[0].t0, 20);
  EXPECT_DOUBLE_EQ(spans[0].t1, 40);
  // A stop seen right at the end of the life never ends before it starts.
  auto late = entries({{50, 'T'}});
  spans = state_spans(late, 50);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_DOUBLE_EQ(spans[0].t1, 50);
}

TEST(TimelineStates, LaneDrawsStoppedAndUninterruptibleApartFromRunning) {
  json sc = {{"processes",
              json::array({{{"pid", 11}, {"role", "rank"}, {"started_ms", 0}, {"exited_ms", 80}},
                           {{"pid", 12}, {"role", "rank"}, {"started_ms", 0}}})},
             {"timeline",
              json::array({{{"kind", "proc_state"}, {"t_ms", 5}, {"pid", 11}, {"state", "S"}},
                           {{"kind", "proc_state"}, {"t_ms", 20}, {"pid", 11}, {"state", "T"}},
                           {{"kind", "proc_state"}, {"t_ms", 60}, {"pid", 11}, {"state", "S"}},
                           {{"kind", "proc_state"}, {"t_ms", 30}, {"pid", 12}, {"state", "D"}},
                           {{"kind", "proc_state"}, {"t_ms", 30}, {"pid", 99}, {"state", "T"}}})}};
  auto [out, y] = testing_reports::draw_scenario_lanes(sc);
  size_t lane11 = out.find("data-pid=\"11\""), lane12 = out.find("data-pid=\"12\"");
  ASSERT_NE(lane11, std::string::npos);
  ASSERT_NE(lane12, std::string::npos);
  std::string first = out.substr(lane11, lane12 - lane11), second = out.substr(lane12);
  EXPECT_THAT(first, HasSubstr("<rect class=\"stopped\" data-t0=\"20\" data-t1=\"60\""));
  EXPECT_THAT(first, HasSubstr("<title>stopped (T) from 20.0 ms to 60.0 ms</title>"));
  EXPECT_THAT(first, Not(HasSubstr("class=\"uninterruptible\"")));
  // Alive at the end: the D span runs to the end of the record.
  EXPECT_THAT(second, HasSubstr("<rect class=\"uninterruptible\" data-t0=\"30\" data-t1=\"100\""));
  EXPECT_THAT(second, HasSubstr("from 30.0 ms to the end"));
  EXPECT_THAT(second, Not(HasSubstr("class=\"stopped\"")));
  // The state bar is drawn after (over) the life bar.
  EXPECT_LT(first.find("class=\"life\""), first.find("class=\"stopped\""));
}

TEST(TimelineStates, TracedStopsDuringTheDiagnosisAreTheHarnesss) {
  json doc = {
      {"processes",
       json::array({{{"pid", 11}, {"role", "rank"}, {"started_ms", 0}, {"exited_ms", 95}}})},
      {"timeline", json::array({{{"kind", "proc_state"}, {"t_ms", 10}, {"pid", 11}, {"state", "t"}},
                                {{"kind", "proc_state"}, {"t_ms", 20}, {"pid", 11}, {"state", "S"}},
                                {{"kind", "phase"}, {"t_ms", 50}, {"name", "diagnose"}},
                                {{"kind", "proc_state"}, {"t_ms", 55}, {"pid", 11}, {"state", "t"}},
                                {{"kind", "proc_state"}, {"t_ms", 60}, {"pid", 11}, {"state", "S"}},
                                {{"kind", "phase"}, {"t_ms", 70}, {"name", "teardown"}},
                                {{"kind", "phase"}, {"t_ms", 99}, {"name", "done"}}})}};
  const ScenarioResult sc = testing_reports::typed_scenario(doc);
  auto procs = report::processes_by_role(sc);
  TimelineParts parts = sort_timeline(sc, {{11, 0}});
  auto window = diagnose_window(parts.vlines, 100);
  ASSERT_TRUE(window);
  EXPECT_DOUBLE_EQ(window->first, 50);
  EXPECT_DOUBLE_EQ(window->second, 70);
  EXPECT_FALSE(diagnose_window({}, 100));
  Scale s{100};
  double y = 0;
  std::string out = draw_lanes(LaneContext{sc, s, parts, "<g>", ""}, procs, y);
  EXPECT_THAT(out, HasSubstr("<title>stopped (t, traced) from 10.0 ms to 20.0 ms</title>"));
  EXPECT_THAT(out,
              HasSubstr("<title>stopped (t) by the harness&#39;s debugger taking its stacks from "
                        "55.0 ms to 60.0 ms</title>"));
}

// ---------------------------------------------------------------------------
// Colours: each bar's fill from the report's stylesheet, compared in CIELAB
// as seen with normal vision and as simulated for protanopia, deuteranopia
// and tritanopia (Machado, Oliveira & Fernandes 2009, severity 1).

using Rgb = std::array<double, 3>;
using Mat = std::array<std::array<double, 3>, 3>;

std::string stylesheet() {
  std::ifstream f(std::string(AFTERMATH_TEST_DATA) + "/../../reports/assets/report.css");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The fill of the first rule for `selector` ("\.stopped" etc.), as #rrggbb.
std::string fill_of(const std::string& css, const std::string& selector) {
  std::smatch m;
  std::regex re("(^|[}\\s])" + selector + "\\s*\\{[^}]*fill:\\s*(#[0-9a-fA-F]{6})");
  return std::regex_search(css, m, re) ? m[2].str() : "";
}

Rgb linear(const std::string& hex) {
  Rgb out;
  for (int i = 0; i < 3; ++i) {
    double c = std::stoi(hex.substr(1 + 2 * i, 2), nullptr, 16) / 255.0;
    out[i] = c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
  }
  return out;
}

Rgb lab(const Rgb& l) {
  double x = 0.4124 * l[0] + 0.3576 * l[1] + 0.1805 * l[2];
  double y = 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
  double z = 0.0193 * l[0] + 0.1192 * l[1] + 0.9505 * l[2];
  auto f = [](double t) { return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116; };
  double fx = f(x / 0.95047), fy = f(y), fz = f(z / 1.08883);
  return {116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)};
}

Rgb seen(const std::string& hex, const Mat& m) {
  Rgb l = linear(hex), o;
  for (int i = 0; i < 3; ++i)
    o[i] = std::clamp(m[i][0] * l[0] + m[i][1] * l[1] + m[i][2] * l[2], 0.0, 1.0);
  return lab(o);
}

TEST(TimelineStates, ColoursStayApartForCommonColourBlindness) {
  const std::map<std::string, Mat> vision = {{"normal", {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}},
                                             {"protanopia",
                                              {{{0.152286, 1.052583, -0.204868},
                                                {0.114503, 0.786281, 0.099216},
                                                {-0.003882, -0.048116, 1.051998}}}},
                                             {"deuteranopia",
                                              {{{0.367322, 0.860646, -0.227968},
                                                {0.280085, 0.672501, 0.047413},
                                                {-0.011820, 0.042940, 0.968881}}}},
                                             {"tritanopia",
                                              {{{1.255528, -0.076749, -0.178779},
                                                {-0.078411, 0.930809, 0.147602},
                                                {0.004733, 0.691367, 0.303900}}}}};
  std::string css = stylesheet();
  ASSERT_FALSE(css.empty());
  std::map<std::string, std::string> fills;
  for (const char* sel : {"life", "life.alive", "orphan", "zombie", "stopped", "uninterruptible"}) {
    std::string selector = "\\." + std::regex_replace(std::string(sel), std::regex("\\."), "\\.");
    fills[sel] = fill_of(css, selector);
    ASSERT_FALSE(fills[sel].empty()) << "no fill for ." << sel << " in report.css";
  }
  fills["lane background"] = "#ffffff";
  // A ΔE (CIE76) of 25 reads as another colour at a glance, even on a thin bar.
  constexpr double kMinDelta = 25;
  for (const char* state : {"stopped", "uninterruptible"}) {
    for (const auto& [other, hex] : fills) {
      if (other == state) continue;
      for (const auto& [who, m] : vision) {
        Rgb a = seen(fills[state], m), b = seen(hex, m);
        double d = std::hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
        EXPECT_GE(d, kMinDelta) << state << " " << fills[state] << " vs " << other << " " << hex
                                << " with " << who;
      }
    }
  }
}

}  // namespace
}  // namespace aftermath::svg
