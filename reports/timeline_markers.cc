#include "reports/timeline_markers.h"

#include <algorithm>

#include "reports/escape.h"
#include "reports/view.h"

namespace aftermath::svg {

namespace {

using report::format_ms;

std::string esc(std::string_view s) { return html_escape(s); }

std::string signal_class(const std::string& sig) {
  if (sig == "SIGTERM") return "sig sig-term";
  if (sig == "SIGKILL") return "sig sig-kill";
  return "sig sig-other";
}

}  // namespace

// A marker or line group placed at time t. The script moves it by rewriting
// the transform, so children are positioned relative to x = 0.
std::string at_time(const Scale& s, double t, const std::string& cls) {
  return fmt("<g class=\"%s\" data-t=\"%s\" transform=\"translate(%s,0)\">", cls.c_str(),
             ms_attr(t).c_str(), px(s.x(t)).c_str());
}

// A bar from t0 to t1 (min 1 px so a 50 us life is still visible).
std::string bar(const Scale& s, double t0, double t1, double y, double h, const std::string& cls,
                const std::string& title) {
  double x0 = s.x(t0), x1 = s.x(t1);
  std::string out =
      fmt("<rect class=\"%s\" data-t0=\"%s\" data-t1=\"%s\" x=\"%s\" y=\"%s\" width=\"%s\" "
          "height=\"%s\">",
          cls.c_str(), ms_attr(t0).c_str(), ms_attr(t1).c_str(), px(x0).c_str(), px(y).c_str(),
          px(std::max(1.0, x1 - x0)).c_str(), px(h).c_str());
  if (!title.empty()) out += "<title>" + esc(title) + "</title>";
  return out + "</rect>";
}

// Labels right of the marker, or left of it near the right edge so they stay
// inside the picture (the script flips them the same way after a zoom).
std::string marker_label(const Scale& s, double t, double y, const std::string& text) {
  bool flip = s.x(t) > kPlotX1 - 110;
  return fmt("<text class=\"mlabel\" x=\"%s\" y=\"%s\" text-anchor=\"%s\">", flip ? "-4" : "4",
             px(y).c_str(), flip ? "end" : "start") +
         esc(text) + "</text>";
}

// A signal the harness sent: a small triangle above the life bar.
std::string signal_marker(const Scale& s, const SignalMark& e, double y) {
  const double t = e.t;
  const std::string& sig = e.signal;
  std::string title = sig + (e.by.empty() ? " sent" : " from " + e.by) + " to " +
                      std::to_string(e.pid) + " at " + format_ms(t);
  if (!e.why.empty()) title += " (" + e.why + ")";
  return at_time(s, t, signal_class(sig)) +
         fmt("<path d=\"M-4,%s L4,%s L0,%s Z\"/>", px(y).c_str(), px(y).c_str(),
             px(y + 6).c_str()) +
         "<title>" + esc(title) + "</title></g>";
}

// An injected fault on its target's lane: a diamond.
std::string fault_marker(const Scale& s, double t, const std::string& title, double y) {
  return at_time(s, t, "fault") +
         fmt("<path d=\"M0,%s L5,%s L0,%s L-5,%s Z\"/>", px(y).c_str(), px(y + 5).c_str(),
             px(y + 10).c_str(), px(y + 5).c_str()) +
         "<title>" + esc(title) + "</title></g>";
}

}  // namespace aftermath::svg
