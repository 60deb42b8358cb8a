// The timeline's marks on a lane or row: time-placed groups, bars, labels,
// signal triangles and fault diamonds. Each carries its time in data
// attributes (svg.h) so the page's script can move it on zoom.
#pragma once

#include <string>

#include "reports/svg.h"
#include "reports/timeline_order.h"

namespace aftermath::svg {

// Opens a <g> placed at time t (class `cls`); the caller closes it. The
// script moves it by rewriting the transform, so children are positioned
// relative to x = 0.
std::string at_time(const Scale& s, double t, const std::string& cls);

// A bar from t0 to t1 at height y (min 1 px wide, so a 50 us life is still
// visible), with a tooltip when `title` is not empty.
std::string bar(const Scale& s, double t0, double t1, double y, double h, const std::string& cls,
                const std::string& title);

// A label for a marker at t: right of it, or left of it near the right edge so
// it stays inside the picture (the script flips it the same way after a zoom).
std::string marker_label(const Scale& s, double t, double y, const std::string& text);

// A signal the harness (or the kernel) sent: a small triangle at height y, classed by signal
// (sig-term, sig-kill, sig-other), its tooltip saying who sent what to whom and why.
std::string signal_marker(const Scale& s, const SignalMark& e, double y);

// An injected fault at t: a diamond at height y with `title` as its tooltip.
std::string fault_marker(const Scale& s, double t, const std::string& title, double y);

}  // namespace aftermath::svg
