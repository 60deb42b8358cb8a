// Draws a hand-made scenario's process lanes the way the timeline does (its
// processes by role, the timeline sorted onto their lanes), for the tests of
// the lanes and of the states drawn on them.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>

#include "reports/result_read.h"
#include "reports/timeline_lanes.h"
#include "reports/timeline_order.h"
#include "reports/view.h"

namespace aftermath::testing_reports {

// A hand-made result.json scenario read as `aftermath report` reads one (its
// name and verdict filled in where the test leaves them out); throws, naming
// the field, when it does not read.
inline ScenarioResult typed_scenario(nlohmann::json sc) {
  if (!sc.contains("name")) sc["name"] = "hand-made";
  if (!sc.contains("verdict")) sc["verdict"] = "pass";
  nlohmann::json doc = {{"schema_version", 1}, {"scenarios", nlohmann::json::array({sc})}};
  auto run = read_result(doc);
  if (!run) throw std::runtime_error("not a scenario: " + run.error().what);
  return std::move(run->scenarios.front());
}

struct DrawnLanes {
  std::string svg;
  double height = 0;  // where the next row would start
};

inline DrawnLanes draw_scenario_lanes(const nlohmann::json& doc, double width_ms = 100) {
  const ScenarioResult sc = typed_scenario(doc);
  auto procs = report::processes_by_role(sc);
  std::map<long long, size_t> lane_of;
  for (size_t i = 0; i < procs.size(); ++i) lane_of.emplace(procs[i].pid, i);
  svg::TimelineParts parts = svg::sort_timeline(sc, lane_of);
  svg::Scale s{width_ms};
  DrawnLanes d;
  d.svg = svg::draw_lanes(svg::LaneContext{sc, s, parts, "<g>", ""}, procs, d.height);
  return d;
}

}  // namespace aftermath::testing_reports
