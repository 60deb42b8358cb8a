// The timeline SVG's geometry and number formatting, shared by the files that
// draw it (timeline_svg.h and the lanes, markers and curves it assembles).
//
// Every time-positioned element carries its time in data attributes (data-t
// for markers and lines, data-t0/data-t1 for bars, data-pts for curves), and
// the positions computed here are the unzoomed layout. The page's script
// (assets/report.js) recomputes x from those attributes when the user zooms;
// nothing else needs to know the layout.
#pragma once

#include <cstddef>
#include <string>

namespace aftermath::svg {

inline constexpr double kWidth = 1200;
inline constexpr double kPlotX0 = 270;  // left of this: lane labels
inline constexpr double kPlotX1 = 1160;
inline constexpr double kLaneH = 18;
inline constexpr double kGroupH = 16;
inline constexpr double kLabelRowH = 13;
inline constexpr double kCurveH = 46;
inline constexpr double kCurvePad = 8;  // above a curve's maximum, so it never sits on the frame
inline constexpr std::size_t kMaxLabelChars = 40;

// The x of a time on the unzoomed plot: [0, end_ms] spans kPlotX0..kPlotX1.
struct Scale {
  double end_ms;
  double x(double t) const { return kPlotX0 + t / end_ms * (kPlotX1 - kPlotX0); }
};

// printf into a std::string (any length); the SVG is mostly numbers.
std::string fmt(const char* format, ...) __attribute__((format(printf, 1, 2)));

// A time in ms as a data attribute (3 decimals at most) and a coordinate in
// px (1 decimal at most), both without trailing zeros.
std::string ms_attr(double t);
std::string px(double v);

// An axis tick's text for time t when ticks are `step` ms apart: "250 ms",
// "1.5 s"; the precision follows the step.
std::string tick_label(double t, double step);

// Round steps (1, 2, 5 x 10^k) giving about `target` ticks over [0, span].
// Mirrored by niceStep() in the page's script, which redraws ticks on zoom.
double nice_step(double span, int target);

}  // namespace aftermath::svg
