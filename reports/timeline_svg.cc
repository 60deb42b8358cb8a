#include "reports/timeline_svg.h"

#include <map>
#include <vector>

#include "harness/core/result.h"
#include "reports/escape.h"
#include "reports/svg.h"
#include "reports/timeline_curves.h"
#include "reports/timeline_lanes.h"
#include "reports/timeline_markers.h"
#include "reports/timeline_order.h"
#include "reports/view.h"

namespace aftermath::svg {

namespace {

std::string esc(std::string_view s) { return html_escape(s); }

// The vertical extent of the plot, top to bottom.
struct Frame {
  double labels_y;      // the first row of phase/fault labels
  double axis_label_y;  // the tick labels
  double plot_top;
  double plot_bottom;
};

// Grid lines and tick labels every nice_step over [0, end].
std::string axis(const Scale& s, const Frame& f) {
  const double end = s.end_ms;
  const double plot_top = f.plot_top, plot_bottom = f.plot_bottom, axis_label_y = f.axis_label_y;
  std::string out;
  double step = nice_step(end, 8);
  for (double t = 0; t <= end + step * 1e-9; t += step) {
    out += fmt("<line class=\"grid\" x1=\"%s\" x2=\"%s\" y1=\"%s\" y2=\"%s\"/>", px(s.x(t)).c_str(),
               px(s.x(t)).c_str(), px(plot_top).c_str(), px(plot_bottom).c_str());
    out += fmt("<text class=\"tick\" x=\"%s\" y=\"%s\" text-anchor=\"middle\">%s</text>",
               px(s.x(t)).c_str(), px(axis_label_y).c_str(), tick_label(t, step).c_str());
  }
  return out;
}

// Phases and faults: a line from their label row down to the plot's bottom.
std::string vertical_lines(const Scale& s, const std::vector<VLine>& vlines, const Frame& f) {
  const double labels_y = f.labels_y, plot_bottom = f.plot_bottom;
  std::string lines;
  for (const auto& l : vlines) {
    double ly = labels_y + l.row * kLabelRowH;
    lines += at_time(s, l.t, l.cls) +
             fmt("<line x1=\"0\" x2=\"0\" y1=\"%s\" y2=\"%s\"/>", px(ly + 3).c_str(),
                 px(plot_bottom).c_str()) +
             marker_label(s, l.t, ly + 10, l.label) + "<title>" + esc(l.title) + "</title></g>";
  }
  return lines;
}

}  // namespace

std::string timeline_svg(const ScenarioResult& sc, const std::string& id,
                         const std::string& report_dir) {
  const double end = report::scenario_end_ms(sc);
  const Scale s{end};
  const std::string clip = "clip-" + id;
  const std::string clipped = "<g clip-path=\"url(#" + clip + ")\">";
  std::vector<report::ProcessView> procs = report::processes_by_role(sc);
  std::map<long long, std::size_t> lane_of;
  for (std::size_t i = 0; i < procs.size(); ++i)
    lane_of.emplace(aftermath::process_key(procs[i].node.value_or(-1), procs[i].pid), i);
  TimelineParts parts = sort_timeline(sc, lane_of);
  int label_rows = stagger(parts.vlines, s);

  // Vertical layout, top to bottom.
  Frame f;
  double y = 4;
  f.labels_y = y;
  y += label_rows * kLabelRowH;
  f.axis_label_y = y + 10;
  y += 16;
  f.plot_top = y;
  std::string body = draw_lanes(LaneContext{sc, s, parts, clipped, report_dir}, procs, y);
  body += draw_curves(sc, s, parts, clip, y);
  f.plot_bottom = y + 2;
  const double height = f.plot_bottom + 6;
  const double plot_top = f.plot_top, plot_bottom = f.plot_bottom, axis_label_y = f.axis_label_y;

  std::string out = fmt(
      "<svg class=\"timeline\" id=\"tl-%s\" viewBox=\"0 0 %s %s\" data-x0=\"%s\" data-x1=\"%s\" "
      "data-end=\"%s\" data-top=\"%s\" data-bottom=\"%s\" data-axis-y=\"%s\" role=\"img\" "
      "aria-label=\"timeline\">",
      id.c_str(), px(kWidth).c_str(), px(height).c_str(), px(kPlotX0).c_str(), px(kPlotX1).c_str(),
      ms_attr(end).c_str(), px(plot_top).c_str(), px(plot_bottom).c_str(),
      px(axis_label_y).c_str());
  // The clip keeps zoomed-out-of-range shapes from spilling over the labels;
  // tall enough for any lane since lanes clip in their own translated space.
  out +=
      fmt("<defs><clipPath id=\"%s\"><rect x=\"%s\" y=\"-100000\" width=\"%s\" height=\"200000\"/>"
          "</clipPath></defs>",
          clip.c_str(), px(kPlotX0 - 6).c_str(), px(kPlotX1 - kPlotX0 + 8).c_str());
  out += "<g class=\"axis\">" + axis(s, f) + "</g>";
  out += body;
  out += clipped + vertical_lines(s, parts.vlines, f) + "</g>";
  out +=
      fmt("<rect class=\"zoom-sel\" x=\"0\" y=\"%s\" width=\"0\" height=\"%s\" "
          "style=\"display:none\"/>",
          px(plot_top).c_str(), px(plot_bottom - plot_top).c_str());
  out += fmt("<text class=\"readout\" x=\"%s\" y=\"%s\" text-anchor=\"end\"></text>",
             px(kPlotX0 - 10).c_str(), px(axis_label_y).c_str());
  out += "</svg>";
  return out;
}

}  // namespace aftermath::svg
