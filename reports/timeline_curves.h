// The timeline's curves, on the lanes' time axis: job process count, /dev/shm
// bytes above the baseline (with a tick per shm event), the job's RSS, and
// device memory used per GPU.
#pragma once

#include <string>

#include "harness/core/result.h"
#include "reports/svg.h"
#include "reports/timeline_order.h"

namespace aftermath::svg {

// The SVG path of a step curve in a box of height h at y0: values scale to
// the series' max (1 when it has none), and the last value holds until `end`.
std::string step_path(const Scale& s, const Series& series, double y0, double h, double end);

// One curve row at y0: its label and "max ..." left of the plot, the curve
// (class "curve <cls>", its points also as data-pts for the script's zoom)
// clipped to the plot, then `extra` (marks drawn over the curve).
std::string curve_row(const Scale& s, const Series& series, double y0, const std::string& cls,
                      const std::string& label, const std::string& max_label, double end,
                      const std::string& clip, const std::string& extra);

// Every curve row the scenario has, from y down (a line saying "no samples
// recorded" when it has no sample); advances y past them. GPU curves come from
// the scenario's device samples, one per GPU index, in index order.
std::string draw_curves(const ScenarioResult& scenario, const Scale& s, const TimelineParts& parts,
                        const std::string& clip, double& y);

}  // namespace aftermath::svg
