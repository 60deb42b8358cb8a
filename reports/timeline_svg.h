// A scenario's timeline as inline SVG: an axis, phase and fault lines across
// the plot, one lane per job process (timeline_lanes.h) and the curves below
// them (timeline_curves.h). Drawn here so the report reads without
// JavaScript; the page's script only zooms it, from the data-* attributes
// every element carries (svg.h).
#pragma once

#include <string>

#include "harness/core/result.h"

namespace aftermath::svg {

// The <svg id="tl-<id>"> for one scenario of a run. `id` must be unique
// in the page (it also names the clip path); `report_dir` is where the page
// is written, for the lanes' log links.
std::string timeline_svg(const ScenarioResult& scenario, const std::string& id,
                         const std::string& report_dir);

}  // namespace aftermath::svg
