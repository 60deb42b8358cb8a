#include "reports/timeline_curves.h"

#include <algorithm>
#include <map>

#include "reports/escape.h"
#include "reports/timeline_markers.h"
#include "reports/view.h"

namespace aftermath::svg {

namespace {

using report::format_bytes;
using report::format_ms;

std::string esc(std::string_view s) { return html_escape(s); }

// A tick at the bottom of the /dev/shm curve per entry the job made or removed.
std::string shm_marks(const Scale& s, const TimelineParts& parts) {
  std::string out;
  for (const ShmMark& e : parts.shm_events) {
    std::string title = e.kind + " " + e.name;
    if (e.bytes) title += " " + format_bytes(*e.bytes);
    title += " at " + format_ms(e.t);
    out += at_time(s, e.t, "shm-mark " + e.kind) +
           fmt("<line x1=\"0\" x2=\"0\" y1=\"%s\" y2=\"%s\"/>", px(kCurveH - 8).c_str(),
               px(kCurveH).c_str()) +
           "<title>" + esc(title) + "</title></g>";
  }
  return out;
}

// Device memory in use per GPU index, from the device timeline's samples
// (none where there is no GPU).
std::map<long long, Series> gpu_series(const ScenarioResult& sc) {
  std::map<long long, Series> out;
  const DeviceTimeline& device = sc.timeline.device;
  if (!device.unavailable.empty()) return out;
  for (const GpuSample& g : device.samples) {
    auto used = static_cast<double>(g.used);
    Series& gs = out[g.index];
    gs.pts.emplace_back(to_ms(g.t), used);
    gs.max = std::max(gs.max, used);
  }
  return out;
}

}  // namespace

std::string step_path(const Scale& s, const Series& series, double y0, double h, double end) {
  std::string d;
  double vmax = series.max > 0 ? series.max : 1;
  auto y = [&](double v) { return y0 + h - v / vmax * h; };
  for (size_t i = 0; i < series.pts.size(); ++i) {
    const auto& [t, v] = series.pts[i];
    if (i == 0) {
      d += "M" + px(s.x(t)) + "," + px(y(v));
    } else {
      d += " H" + px(s.x(t)) + " V" + px(y(v));
    }
  }
  if (!series.pts.empty()) d += " H" + px(s.x(end));
  return d;
}

std::string curve_row(const Scale& s, const Series& series, double y0, const std::string& cls,
                      const std::string& label, const std::string& max_label, double end,
                      const std::string& clip, const std::string& extra) {
  std::string out = fmt("<g class=\"chart\" transform=\"translate(0,%s)\">", px(y0).c_str());
  out += fmt("<rect class=\"chart-bg\" x=\"%s\" y=\"0\" width=\"%s\" height=\"%s\"/>",
             px(kPlotX0).c_str(), px(kPlotX1 - kPlotX0).c_str(), px(kCurveH).c_str());
  out += "<text class=\"chart-label\" x=\"8\" y=\"14\">" + esc(label) + "</text>";
  out += "<text class=\"chart-max\" x=\"8\" y=\"28\">max " + esc(max_label) + "</text>";
  std::string pts;
  for (const auto& [t, v] : series.pts) {
    if (!pts.empty()) pts += ' ';
    pts += ms_attr(t) + ":" + report::format_number(v, 0);
  }
  out += "<g clip-path=\"url(#" + clip + ")\">";
  out +=
      fmt("<path class=\"curve %s\" data-pts=\"%s\" data-y0=\"%s\" data-h=\"%s\" "
          "data-vmax=\"%s\" d=\"%s\"/>",
          cls.c_str(), pts.c_str(), px(kCurvePad).c_str(), px(kCurveH - kCurvePad - 2).c_str(),
          report::format_number(series.max > 0 ? series.max : 1, 0).c_str(),
          step_path(s, series, kCurvePad, kCurveH - kCurvePad - 2, end).c_str());
  out += extra;
  out += "</g></g>";
  return out;
}

std::string draw_curves(const ScenarioResult& sc, const Scale& s, const TimelineParts& parts,
                        const std::string& clip, double& y) {
  const double end = s.end_ms;
  std::string body;
  y += 6;
  if (parts.procs_series.pts.empty()) {
    body += fmt("<text class=\"empty\" x=\"%s\" y=\"%s\">no samples recorded</text>",
                px(kPlotX0 + 8).c_str(), px(y + 13).c_str());
    y += kLaneH;
    return body;
  }
  body += curve_row(s, parts.procs_series, y, "procs", "job processes",
                    report::format_number(parts.procs_series.max, 0), end, clip, "");
  y += kCurveH + 4;
  body += curve_row(s, parts.shm_series, y, "shm", "/dev/shm above baseline",
                    format_bytes(parts.shm_series.max), end, clip, shm_marks(s, parts));
  y += kCurveH;
  // Host memory: the resident bytes of the job's processes.
  if (!parts.rss_series.pts.empty()) {
    y += 4;
    body += curve_row(s, parts.rss_series, y, "rss", "job memory (RSS)",
                      format_bytes(parts.rss_series.max), end, clip, "");
    y += kCurveH;
  }
  for (const auto& [index, gs] : gpu_series(sc)) {
    y += 4;
    body += curve_row(s, gs, y, "gpu", "GPU " + std::to_string(index) + " memory used",
                      format_bytes(gs.max), end, clip, "");
    y += kCurveH;
  }
  return body;
}

}  // namespace aftermath::svg
