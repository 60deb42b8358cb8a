#include "reports/html.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reports/view.h"

namespace aftermath {

namespace {

using nlohmann::json;
using report::format_bytes;
using report::format_ms;
using report::items;
using report::member;
using report::num;
using report::ProcessView;
using report::str;

// printf into a std::string; the SVG is mostly numbers.
std::string fmt(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* format, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, format);
  int n = std::vsnprintf(buf, sizeof buf, format, ap);
  va_end(ap);
  if (n < 0) return {};
  if (static_cast<size_t>(n) < sizeof buf) return std::string(buf, static_cast<size_t>(n));
  std::string out(static_cast<size_t>(n) + 1, '\0');
  va_start(ap, format);
  std::vsnprintf(out.data(), out.size(), format, ap);
  va_end(ap);
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string esc(std::string_view s) { return html_escape(s); }

// Decodes one UTF-8 character at s[i]; returns its length, or 0 if malformed
// (overlong forms, surrogates and code points past U+10FFFF included).
size_t utf8_char(std::string_view s, size_t i, char32_t& cp) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  size_t len;
  char32_t min;
  if (c < 0x80) {
    cp = c;
    return 1;
  } else if ((c & 0xE0) == 0xC0) {
    len = 2, cp = c & 0x1F, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, cp = c & 0x0F, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// At most max_chars characters of s, with "…" when cut; never splits a
// character. Lane labels must fit the label column.
std::string truncate_chars(std::string_view s, size_t max_chars) {
  size_t chars = 0, i = 0;
  while (i < s.size()) {
    if (chars == max_chars) return std::string(s.substr(0, i)) + "\u2026";
    char32_t cp;
    size_t len = utf8_char(s, i, cp);
    i += len ? len : 1;
    ++chars;
  }
  return std::string(s);
}

size_t char_count(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// Percent-encodes a filesystem path for an href: everything but unreserved
// characters and '/' is encoded, so '#', '?', '%' and spaces in a folder name
// cannot change what the link points at.
std::string url_path(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// The href for a log file: relative when inside the report's folder.
std::string log_href(const std::string& path, const std::string& report_dir) {
  namespace fs = std::filesystem;
  fs::path p(path);
  if (!report_dir.empty() && p.is_absolute()) {
    fs::path base = fs::path(report_dir).lexically_normal();
    fs::path rel = p.lexically_normal().lexically_relative(base);
    if (!rel.empty() && *rel.begin() != "..") return url_path(rel.string());
  }
  if (p.is_absolute()) return "file://" + url_path(p.lexically_normal().string());
  return url_path(path);
}

// HTML ids from scenario names: names are [a-z0-9._-] by the scenario
// grammar, but an ad-hoc command's name is derived from a path, so anything
// else is replaced; the index keeps two sanitised names apart.
std::string section_id(size_t index, const std::string& name) {
  std::string id = "s" + std::to_string(index) + "-";
  for (unsigned char c : name) {
    id += (std::isalnum(c) || c == '-' || c == '_' || c == '.') ? static_cast<char>(c) : '_';
  }
  return id;
}

const char* verdict_class(const std::string& verdict) {
  return report::verdict_ok(verdict) ? "ok" : "bad";
}

const char* status_class(const std::string& status, bool expected_to_fail) {
  if (status == "pass") return "st-pass";
  if (status == "fail") return expected_to_fail ? "st-xfail" : "st-fail";
  if (status == "skipped") return "st-skip";
  return "st-fail";
}

std::string pretty_json(const json& j) {
  return j.dump(2, ' ', false, json::error_handler_t::replace);
}

// ---------------------------------------------------------------------------
// The timeline SVG.
//
// Every time-positioned element carries its time in data attributes (data-t
// for markers and lines, data-t0/data-t1 for bars, data-pts for curves), and
// the positions computed here are the unzoomed layout. The page's script
// recomputes x from those attributes when the user zooms; nothing else needs
// to know the layout.

constexpr double kWidth = 1200;
constexpr double kPlotX0 = 270;  // left of this: lane labels
constexpr double kPlotX1 = 1160;
constexpr double kLaneH = 18;
constexpr double kGroupH = 16;
constexpr double kLabelRowH = 13;
constexpr double kCurveH = 46;
constexpr double kCurvePad = 8;  // above a curve's maximum, so it never sits on the frame
constexpr size_t kMaxLabelChars = 40;

struct Scale {
  double end_ms;
  double x(double t) const { return kPlotX0 + t / end_ms * (kPlotX1 - kPlotX0); }
};

std::string ms_attr(double t) { return report::format_number(t, 3); }
std::string px(double v) { return report::format_number(v, 1); }

std::string tick_label(double t, double step) {
  if (step >= 1000) {
    int decimals = step >= 10000 ? 0 : (std::fmod(step, 1000) == 0 ? 0 : 1);
    return fmt("%.*f s", decimals, t / 1000);
  }
  int decimals = step >= 1 ? 0 : (step >= 0.1 ? 1 : 2);
  return fmt("%.*f ms", decimals, t);
}

// Round steps (1, 2, 5 x 10^k) giving about `target` ticks over [0, end].
// Mirrored by niceStep() in the page's script, which redraws ticks on zoom.
double nice_step(double span, int target) {
  double raw = span / target;
  double mag = std::pow(10, std::floor(std::log10(raw)));
  double norm = raw / mag;
  double step = norm < 1.5 ? 1 : norm < 3.5 ? 2 : norm < 7.5 ? 5 : 10;
  return step * mag;
}

// Vertical labelled lines: phases and faults.
struct VLine {
  double t;
  std::string label;
  std::string title;
  std::string cls;  // "phase" or "fault-line"
  int row = 0;
};

// Spreads labels over a few rows so phases a few ms apart (job_exited,
// settle, teardown) stay readable; returns the number of rows used.
int stagger(std::vector<VLine>& lines, const Scale& s) {
  constexpr int kMaxRows = 4;
  std::vector<double> row_end(kMaxRows, -1e9);
  int used = 1;
  std::stable_sort(lines.begin(), lines.end(),
                   [](const VLine& a, const VLine& b) { return a.t < b.t; });
  for (auto& l : lines) {
    double x = s.x(l.t);
    double w = 6.2 * static_cast<double>(char_count(l.label)) + 10;
    int row = -1;
    for (int r = 0; r < kMaxRows; ++r) {
      if (row_end[r] < x) {
        row = r;
        break;
      }
    }
    if (row < 0)
      row = static_cast<int>(std::min_element(row_end.begin(), row_end.end()) - row_end.begin());
    l.row = row;
    row_end[row] = x + w;
    used = std::max(used, row + 1);
  }
  return used;
}

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

std::string signal_class(const std::string& sig) {
  if (sig == "SIGTERM") return "sig sig-term";
  if (sig == "SIGKILL") return "sig sig-kill";
  return "sig sig-other";
}

// A signal the harness sent: a small triangle above the life bar.
std::string signal_marker(const Scale& s, const json& e, double y) {
  double t = num(e, "t_ms").value_or(0);
  std::string sig = str(e, "signal", "signal " + str(e, "signo", "?"));
  std::string title = sig + (str(e, "by").empty() ? " sent" : " from " + str(e, "by")) + " to " +
                      str(e, "pid", "?") + " at " + format_ms(t);
  std::string why = str(e, "why");
  if (!why.empty()) title += " (" + why + ")";
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

std::string process_title(const ProcessView& p) {
  std::string t = p.role + " " + std::to_string(p.pid) + " " + p.comm;
  if (p.rank) t += " rank " + std::to_string(*p.rank);
  if (p.worker) t += " worker " + std::to_string(*p.worker);
  if (p.top) t += " (top process)";
  if (!p.cmdline.empty()) t += "\n" + p.cmdline;
  t += "\nstarted " + format_ms(p.start_ms);
  if (p.exited_ms) t += ", exited " + format_ms(p.exited_ms);
  if (p.gone_ms) t += ", gone " + format_ms(p.gone_ms);
  if (!p.life_end_ms) t += ", alive at the end of the record";
  if (!p.outcome.empty()) t += "\noutcome " + p.outcome;
  if (p.orphaned_ms) {
    t += "\norphaned at " + format_ms(p.orphaned_ms) + " (parent " + str(*p.src, "ppid", "?") +
         ", later " + str(*p.src, "last_ppid", "?") + ")";
  }
  if (p.zombie_since_ms) {
    t += "\nzombie from " + format_ms(p.zombie_since_ms);
    if (p.gone_ms) t += " until reaped at " + format_ms(p.gone_ms);
  }
  return t;
}

std::string lane_label(const ProcessView& p) {
  std::string l = p.role + " " + std::to_string(p.pid);
  if (p.rank) l += " r" + std::to_string(*p.rank);
  if (p.worker) l += " w" + std::to_string(*p.worker);
  l += " " + p.comm;
  if (p.top) l += " \u2605";  // a star marks the top process
  // Room for the "out" / "err" links at the label's end.
  bool logs = !p.log_stdout.empty() || !p.log_stderr.empty();
  return truncate_chars(l, logs ? kMaxLabelChars - 9 : kMaxLabelChars);
}

// The process's own log files as links at the end of its lane's label
// (left of the plot, where a drag does not zoom).
std::string lane_log_links(const json& sc, const ProcessView& p, const std::string& report_dir) {
  std::string out;
  const std::pair<const std::string*, const char*> logs[] = {{&p.log_stdout, "out"},
                                                             {&p.log_stderr, "err"}};
  double x = kPlotX0 - 44;
  for (const auto& [path, label] : logs) {
    if (!path->empty()) {
      std::string file = report::scenario_file(sc, *path);
      out += fmt("<a class=\"lane-log\" data-stream=\"%s\" href=\"", label) +
             esc(log_href(file, report_dir)) + "\"><title>" + esc(std::string(label) + ": " + file) +
             "</title>" + fmt("<text x=\"%s\" y=\"13\">%s</text></a>", px(x).c_str(), label);
    }
    x += 21;
  }
  return out;
}

// One step curve (job process count or /dev/shm bytes) as a chart row.
struct Series {
  std::vector<std::pair<double, double>> pts;  // (t_ms, value)
  double max = 0;
};

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

std::string timeline_svg(const json& sc, const std::string& id, const std::string& report_dir) {
  const double end = report::scenario_end_ms(sc);
  const Scale s{end};
  const std::string clip = "clip-" + id;
  const std::string clipped = "<g clip-path=\"url(#" + clip + ")\">";
  std::vector<ProcessView> procs = report::processes_by_role(sc);
  std::map<long long, size_t> lane_of;
  for (size_t i = 0; i < procs.size(); ++i) lane_of.emplace(procs[i].pid, i);

  // Sort the timeline's instants into what goes where.
  std::vector<VLine> vlines;
  std::map<size_t, std::vector<const json*>> lane_signals;
  std::vector<const json*> stray_signals;  // to pids not in processes[]
  std::deque<json> kernel_kills;           // oom_kill, drawn as the SIGKILL it was
  std::map<size_t, std::vector<const json*>> lane_faults;
  std::vector<const json*> stray_faults;
  std::vector<const json*> shm_events;
  Series procs_series, shm_series, rss_series;
  for (const json* e : items(sc, "timeline")) {
    std::string kind = str(*e, "kind");
    auto t = num(*e, "t_ms");
    if (!t) continue;
    if (kind == "phase") {
      std::string name = str(*e, "name", "phase");
      vlines.push_back({*t, name, name + " at " + format_ms(t), "phase"});
    } else if (kind == "signal" || kind == "fault") {
      auto pid = num(*e, "pid");
      auto it = pid ? lane_of.find(static_cast<long long>(*pid)) : lane_of.end();
      if (kind == "signal") {
        (it == lane_of.end() ? stray_signals : lane_signals[it->second]).push_back(e);
      } else {
        std::string action = str(*e, "action", "fault");
        vlines.push_back({*t, "fault " + action,
                          "fault #" + str(*e, "index", "?") + " " + action + " at " + format_ms(t) +
                              ": " + str(*e, "what"),
                          "fault-line"});
        (it == lane_of.end() ? stray_faults : lane_faults[it->second]).push_back(e);
      }
    } else if (kind == "sample") {
      double procs_v = num(*e, "procs").value_or(0);
      double shm_v = num(*e, "shm_bytes").value_or(0);
      procs_series.pts.emplace_back(*t, procs_v);
      shm_series.pts.emplace_back(*t, shm_v);
      procs_series.max = std::max(procs_series.max, procs_v);
      shm_series.max = std::max(shm_series.max, shm_v);
    } else if (kind == "memory") {
      double rss = num(*e, "rss_bytes").value_or(0);
      rss_series.pts.emplace_back(*t, rss);
      rss_series.max = std::max(rss_series.max, rss);
    } else if (kind == "oom_kill") {
      auto pid = num(*e, "pid");
      auto it = pid ? lane_of.find(static_cast<long long>(*pid)) : lane_of.end();
      kernel_kills.push_back({{"t_ms", *t},
                              {"pid", member(*e, "pid")},
                              {"signal", "SIGKILL"},
                              {"by", "the kernel"},
                              {"why", "its OOM killer, in " + str(*e, "cgroup") +
                                          " (oom_kill " + str(*e, "kills", "?") + ")" +
                                          (str(*e, "kernel").empty() ? "" : ": " + str(*e, "kernel"))}});
      (it == lane_of.end() ? stray_signals : lane_signals[it->second]).push_back(&kernel_kills.back());
    } else if (kind.rfind("shm_", 0) == 0) {
      // Entries present before launch are the baseline, not the job's doing.
      const json& baseline = member(*e, "baseline");
      if (!(baseline.is_boolean() && baseline.get<bool>())) shm_events.push_back(e);
    }
  }
  int label_rows = stagger(vlines, s);

  // Vertical layout, top to bottom.
  double y = 4;
  const double labels_y = y;
  y += label_rows * kLabelRowH;
  const double axis_label_y = y + 10;
  y += 16;
  const double plot_top = y;
  std::string body;

  if (!stray_faults.empty()) {
    body += fmt("<g class=\"row\" transform=\"translate(0,%s)\">", px(y).c_str());
    body += "<text class=\"row-label\" x=\"8\" y=\"13\">faults (no job process target)</text>";
    body += clipped;
    for (const json* f : stray_faults) {
      double t = num(*f, "t_ms").value_or(0);
      body += fault_marker(s, t, "fault " + str(*f, "action") + ": " + str(*f, "what"), 4);
    }
    body += "</g></g>";
    y += kLaneH;
  }

  std::string current_role;
  for (size_t i = 0; i < procs.size(); ++i) {
    const ProcessView& p = procs[i];
    if (i == 0 || p.role != current_role) {
      current_role = p.role;
      size_t n = 0;
      for (const auto& q : procs) n += q.role == p.role;
      body += fmt("<text class=\"group\" x=\"4\" y=\"%s\">", px(y + 12).c_str()) + esc(p.role) +
              fmt(" \u00b7 %zu process%s</text>", n, n == 1 ? "" : "es");
      body += fmt("<line class=\"group-rule\" x1=\"0\" x2=\"%s\" y1=\"%s\" y2=\"%s\"/>",
                  px(kWidth).c_str(), px(y + 0.5).c_str(), px(y + 0.5).c_str());
      y += kGroupH;
    }
    const double life_end = p.life_end_ms.value_or(end);
    body +=
        fmt("<g class=\"lane\" data-pid=\"%lld\" data-role=\"%s\" transform=\"translate(0,%s)\">",
            p.pid, esc(p.role).c_str(), px(y).c_str());
    body += "<title>" + esc(process_title(p)) + "</title>";
    body += fmt("<rect class=\"lane-bg\" x=\"0\" y=\"0\" width=\"%s\" height=\"%s\"/>",
                px(kWidth).c_str(), px(kLaneH).c_str());
    body += "<text class=\"lane-label\" x=\"14\" y=\"13\">" + esc(lane_label(p)) + "</text>";
    body += lane_log_links(sc, p, report_dir);
    body += clipped;
    body += bar(s, p.start_ms, life_end, 5, 9, p.life_end_ms ? "life" : "life alive", "");
    if (p.orphaned_ms) {
      double from = std::max(*p.orphaned_ms, p.start_ms);
      body += bar(s, from, std::max(from, life_end), 5, 9, "orphan",
                  "orphaned from " + format_ms(from) + " to " +
                      (p.life_end_ms ? format_ms(life_end) : std::string("the end")));
    }
    if (p.zombie_since_ms) {
      double from = *p.zombie_since_ms;
      double to = p.gone_ms.value_or(end);
      if (to >= from) {
        body += bar(s, from, to, 7, 5, "zombie",
                    "zombie (exited, not reaped) from " + format_ms(from) + " to " +
                        (p.gone_ms ? format_ms(to) : std::string("the end")));
      }
    }
    if (p.life_end_ms) {
      // The exit marker sits at the exit, or where the process vanished
      // when the exit itself was never observed.
      double t = *p.life_end_ms;
      std::string label = !p.outcome.empty() ? p.outcome : p.exited_ms ? "exited" : "gone";
      body += at_time(s, t, "exit") + "<line x1=\"0\" x2=\"0\" y1=\"2\" y2=\"16\"/>" +
              marker_label(s, t, 13, label) + "<title>" + esc(label + " at " + format_ms(t)) +
              "</title></g>";
    } else {
      body += at_time(s, end, "alive-end") + marker_label(s, end, 13, "alive at end") + "</g>";
    }
    for (const json* e : lane_signals[i]) body += signal_marker(s, *e, 0);
    for (const json* f : lane_faults[i]) {
      double t = num(*f, "t_ms").value_or(0);
      body += fault_marker(s, t, "fault " + str(*f, "action") + ": " + str(*f, "what"), 4);
    }
    body += "</g></g>";
    y += kLaneH;
  }
  if (procs.empty()) {
    body += fmt("<text class=\"empty\" x=\"%s\" y=\"%s\">no job process was observed</text>",
                px(kPlotX0 + 8).c_str(), px(y + 13).c_str());
    y += kLaneH;
  }
  if (!stray_signals.empty()) {
    body += fmt("<g class=\"row\" transform=\"translate(0,%s)\">", px(y).c_str());
    body += "<text class=\"row-label\" x=\"8\" y=\"13\">signals to other pids</text>";
    body += clipped;
    for (const json* e : stray_signals) body += signal_marker(s, *e, 4);
    body += "</g></g>";
    y += kLaneH;
  }

  // Curves on the same time axis.
  y += 6;
  if (!procs_series.pts.empty()) {
    body += curve_row(s, procs_series, y, "procs", "job processes",
                      report::format_number(procs_series.max, 0), end, clip, "");
    y += kCurveH + 4;
    std::string shm_marks;
    for (const json* e : shm_events) {
      double t = num(*e, "t_ms").value_or(0);
      std::string kind = str(*e, "kind");
      std::string title = kind + " " + str(*e, "name");
      if (auto b = num(*e, "bytes")) title += " " + format_bytes(*b);
      title += " at " + format_ms(t);
      shm_marks += at_time(s, t, "shm-mark " + kind) +
                   fmt("<line x1=\"0\" x2=\"0\" y1=\"%s\" y2=\"%s\"/>", px(kCurveH - 8).c_str(),
                       px(kCurveH).c_str()) +
                   "<title>" + esc(title) + "</title></g>";
    }
    body += curve_row(s, shm_series, y, "shm", "/dev/shm above baseline",
                      format_bytes(shm_series.max), end, clip, shm_marks);
    y += kCurveH;
    // Host memory: the resident bytes of the job's processes.
    if (!rss_series.pts.empty()) {
      y += 4;
      body += curve_row(s, rss_series, y, "rss", "job memory (RSS)", format_bytes(rss_series.max),
                        end, clip, "");
      y += kCurveH;
    }
    // Device memory in use, one curve per GPU, from the device timeline's
    // samples (absent where there is no GPU).
    std::map<long long, Series> gpu_series;
    const json& device = member(sc, "device");
    for (const json* g : items(device, "samples")) {
      auto t = num(*g, "t_ms");
      auto used = num(*g, "used_bytes");
      auto index = num(*g, "index");
      if (!t || !used || !index) continue;
      Series& gs = gpu_series[static_cast<long long>(*index)];
      gs.pts.emplace_back(*t, *used);
      gs.max = std::max(gs.max, *used);
    }
    for (const auto& [index, gs] : gpu_series) {
      y += 4;
      body += curve_row(s, gs, y, "gpu", "GPU " + std::to_string(index) + " memory used",
                        format_bytes(gs.max), end, clip, "");
      y += kCurveH;
    }
  } else {
    body += fmt("<text class=\"empty\" x=\"%s\" y=\"%s\">no samples recorded</text>",
                px(kPlotX0 + 8).c_str(), px(y + 13).c_str());
    y += kLaneH;
  }
  const double plot_bottom = y + 2;
  const double height = plot_bottom + 6;

  std::string axis;
  double step = nice_step(end, 8);
  for (double t = 0; t <= end + step * 1e-9; t += step) {
    axis +=
        fmt("<line class=\"grid\" x1=\"%s\" x2=\"%s\" y1=\"%s\" y2=\"%s\"/>", px(s.x(t)).c_str(),
            px(s.x(t)).c_str(), px(plot_top).c_str(), px(plot_bottom).c_str());
    axis += fmt("<text class=\"tick\" x=\"%s\" y=\"%s\" text-anchor=\"middle\">%s</text>",
                px(s.x(t)).c_str(), px(axis_label_y).c_str(), tick_label(t, step).c_str());
  }

  std::string lines;
  for (const auto& l : vlines) {
    double ly = labels_y + l.row * kLabelRowH;
    lines += at_time(s, l.t, l.cls) +
             fmt("<line x1=\"0\" x2=\"0\" y1=\"%s\" y2=\"%s\"/>", px(ly + 3).c_str(),
                 px(plot_bottom).c_str()) +
             marker_label(s, l.t, ly + 10, l.label) + "<title>" + esc(l.title) + "</title></g>";
  }

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
  out += "<g class=\"axis\">" + axis + "</g>";
  out += body;
  out += clipped + lines + "</g>";
  out +=
      fmt("<rect class=\"zoom-sel\" x=\"0\" y=\"%s\" width=\"0\" height=\"%s\" "
          "style=\"display:none\"/>",
          px(plot_top).c_str(), px(plot_bottom - plot_top).c_str());
  out += fmt("<text class=\"readout\" x=\"%s\" y=\"%s\" text-anchor=\"end\"></text>",
             px(kPlotX0 - 10).c_str(), px(axis_label_y).c_str());
  out += "</svg>";
  return out;
}

// ---------------------------------------------------------------------------
// The rest of a scenario's section.

std::string row(const std::string& key, const std::string& value_html) {
  return "<tr><th>" + esc(key) + "</th><td>" + value_html + "</td></tr>";
}

// What the job reported about itself ("job_environment"): "k=v, k=v", or "".
std::string job_environment_text(const json& sc) {
  const json& env = member(sc, "job_environment");
  std::string out;
  if (!env.is_object()) return out;
  for (const auto& [k, v] : env.items())
    out += (out.empty() ? "" : "; ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  return out;
}

std::string facts_table(const json& sc) {
  std::string out = "<table class=\"facts\">";
  std::string desc = str(sc, "description");
  if (!desc.empty()) out += row("description", esc(desc));
  out += row("file", "<code>" + esc(str(sc, "file")) + "</code>");
  std::string tags;
  for (const json* t : items(sc, "tags")) {
    tags += "<span class=\"tag\">" + esc(t->is_string() ? t->get<std::string>() : t->dump()) +
            "</span> ";
  }
  if (!tags.empty()) out += row("tags", tags);
  out += row("expect", esc(str(sc, "expect", "pass")));
  out += row("seed", esc(str(sc, "seed", "-")));
  out += row("started", esc(str(sc, "started_at", "-")));
  const json& c = member(sc, "containment");
  std::string cont = str(c, "mode", "-");
  if (!str(c, "shm").empty()) cont += ", /dev/shm " + str(c, "shm");
  if (!str(c, "note").empty()) cont += " (" + str(c, "note") + ")";
  out += row("containment", esc(cont));
  const json& top = member(sc, "top");
  std::string top_text =
      "pid " + str(top, "pid", "?") + ", " + str(member(top, "outcome"), "text", "outcome unknown");
  if (member(top, "deadline_hit").is_boolean() && member(top, "deadline_hit").get<bool>()) {
    top_text += ", the job deadline passed with it alive";
  }
  out += row("top process", esc(top_text));
  std::string job_env = job_environment_text(sc);
  if (!job_env.empty()) out += row("job environment", "<code>" + esc(job_env) + "</code>");
  return out + "</table>";
}

std::string checks_table(const json& sc) {
  auto checks = items(sc, "checks");
  if (checks.empty()) return "<p class=\"muted\">No checks were recorded.</p>";
  std::string out =
      "<table class=\"checks\"><thead><tr><th>check</th><th>status</th><th>reason</th>"
      "<th>measured</th></tr></thead><tbody>";
  for (const json* c : checks) {
    std::string status = str(*c, "status", "?");
    bool expected =
        member(*c, "expected_to_fail").is_boolean() && member(*c, "expected_to_fail").get<bool>();
    out += fmt("<tr class=\"check %s\">", status_class(status, expected));
    out += "<td><code>" + esc(str(*c, "name", "?")) + "</code></td>";
    out += "<td><span class=\"status\">" + esc(status) + "</span>" +
           (expected ? "<br><span class=\"muted\">expected to fail</span>" : "") + "</td>";
    out += "<td class=\"reason\">" + esc(str(*c, "reason")) + "</td>";
    const json& m = member(*c, "measured");
    if (m.is_null() || (m.is_object() && m.empty())) {
      out += "<td class=\"muted\">-</td>";
    } else {
      out += std::string("<td><details") + (report::check_failed(status) ? " open" : "") +
             "><summary>measured</summary><pre>" + esc(pretty_json(m)) + "</pre></details></td>";
    }
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

std::string timings_table(const json& sc) {
  const json& timings = member(sc, "timings_ms");
  auto keys = report::timing_keys(timings);
  if (keys.empty()) return "<p class=\"muted\">No timings were recorded.</p>";
  std::string out = "<table class=\"timings\"><tbody>";
  for (const auto& k : keys) {
    auto v = num(timings, k);
    out += "<tr><th><code>" + esc(k) + "</code></th><td class=\"num\">" +
           (v ? esc(format_ms(v)) : std::string("<span class=\"muted\">not reached</span>")) +
           "</td></tr>";
  }
  out += "</tbody></table>";
  std::string origin = str(sc, "timings_origin");
  if (!origin.empty()) {
    out += "<p class=\"muted\">Recovery timings are measured from the " + esc(origin) + ".</p>";
  }
  return out;
}

std::string faults_table(const json& sc) {
  auto faults = items(sc, "faults");
  if (faults.empty()) return "";
  std::string out =
      "<h3>Faults</h3><table class=\"faults\"><thead><tr><th>#</th><th>action</th><th>target</th>"
      "<th>trigger</th><th>status</th><th>sent</th><th>effect</th><th>reason</th></tr></thead>"
      "<tbody>";
  for (const json* f : faults) {
    // How it acted, and what the kernel's OOM killer did in its cgroup.
    std::string status = str(*f, "status");
    if (!str(*f, "mechanism").empty()) status += " (" + str(*f, "mechanism") + ")";
    if (auto k = num(*f, "oom_kills")) status += fmt(", oom_kill %.0f", *k);
    std::string reason = str(*f, "reason");
    for (const json* line : items(*f, "kernel_log"))
      if (line->is_string()) reason += "\nkernel: " + line->get<std::string>();
    out += "<tr><td>" + esc(str(*f, "index")) + "</td><td>" + esc(str(*f, "action")) + "</td><td>" +
           esc(str(*f, "target")) + "</td><td>" + esc(str(*f, "trigger")) + "</td><td>" +
           esc(status) + "</td><td class=\"num\">" + esc(format_ms(num(*f, "sent_ms"))) +
           "</td><td class=\"num\">" + esc(format_ms(num(*f, "effect_ms"))) + "</td><td>" +
           esc(reason) + "</td></tr>";
  }
  return out + "</tbody></table>";
}

std::string processes_table(const json& sc) {
  auto procs = report::processes_by_role(sc);
  std::string out =
      fmt("<details class=\"procs\"><summary>Processes (%zu)</summary>", procs.size());
  out +=
      "<table><thead><tr><th>pid</th><th>role</th><th>ppid</th><th>comm</th><th>started</th>"
      "<th>exited</th><th>gone</th><th>orphaned</th><th>zombie since</th><th>outcome</th>"
      "<th>command line</th></tr></thead><tbody>";
  for (const auto& p : procs) {
    std::string ppid = str(*p.src, "ppid", "?");
    std::string last = str(*p.src, "last_ppid");
    if (!last.empty() && last != ppid) ppid += " \u2192 " + last;
    out += "<tr><td>" + std::to_string(p.pid) + (p.top ? " \u2605" : "") + "</td><td>" +
           esc(p.role) + "</td><td>" + esc(ppid) + "</td><td>" + esc(p.comm) +
           "</td><td class=\"num\">" + esc(format_ms(p.start_ms)) + "</td><td class=\"num\">" +
           esc(format_ms(p.exited_ms)) + "</td><td class=\"num\">" + esc(format_ms(p.gone_ms)) +
           "</td><td class=\"num\">" + esc(format_ms(p.orphaned_ms)) + "</td><td class=\"num\">" +
           esc(format_ms(p.zombie_since_ms)) + "</td><td>" +
           esc(p.outcome.empty() ? "-" : p.outcome) + "</td><td><code>" + esc(p.cmdline) +
           "</code></td></tr>";
  }
  return out + "</tbody></table></details>";
}

std::string logs_block(const json& sc, const std::string& report_dir) {
  std::string out = "<ul class=\"logs\">";
  for (const char* key : {"stdout_path", "stderr_path"}) {
    std::string path = str(sc, key);
    std::string name = std::string(key).substr(0, 6);
    if (path.empty()) {
      out += "<li>" + name + ": <span class=\"muted\">not captured</span></li>";
    } else {
      out += "<li>" + name + ": <a href=\"" + esc(log_href(path, report_dir)) + "\">" + esc(path) +
             "</a></li>";
    }
  }
  out += "</ul>";
  // Each announced process's own stdout and stderr (AFTERMATH_LOG_DIR).
  std::string rows;
  size_t with_logs = 0;
  for (const auto& p : report::processes_by_role(sc)) {
    if (p.log_stdout.empty() && p.log_stderr.empty()) continue;
    ++with_logs;
    std::string who;
    if (p.rank) who += "r" + std::to_string(*p.rank);
    if (p.worker) who += (who.empty() ? "w" : " w") + std::to_string(*p.worker);
    rows += fmt("<tr data-pid=\"%lld\"><td>", p.pid) + esc(p.role) + "</td><td class=\"num\">" +
            std::to_string(p.pid) + "</td><td>" + esc(who.empty() ? "-" : who) + "</td><td>" +
            esc(p.comm) + "</td>";
    for (const std::string* path : {&p.log_stdout, &p.log_stderr}) {
      if (path->empty()) {
        rows += "<td class=\"muted\">-</td>";
      } else {
        std::string file = report::scenario_file(sc, *path);
        rows += "<td><a href=\"" + esc(log_href(file, report_dir)) + "\">" + esc(*path) + "</a></td>";
      }
    }
    rows += "</tr>";
  }
  if (with_logs > 0) {
    out += fmt("<table class=\"proc-logs\"><caption>Per-process logs (%zu process%s)</caption>",
               with_logs, with_logs == 1 ? "" : "es") +
           "<thead><tr><th>role</th><th>pid</th><th>rank/worker</th><th>comm</th><th>stdout</th>"
           "<th>stderr</th></tr></thead><tbody>" +
           rows + "</tbody></table>";
  }
  std::string tail = str(member(sc, "top"), "stderr_tail");
  if (!tail.empty()) {
    out += "<details open><summary>stderr (tail)</summary><pre class=\"stderr\">" + esc(tail) +
           "</pre></details>";
  }
  return out;
}

std::string legend() {
  auto swatch = [](const char* cls, const char* label) {
    return std::string(
               "<span class=\"key\"><svg width=\"22\" height=\"12\" aria-hidden=\"true\">"
               "<rect class=\"") +
           cls + "\" x=\"1\" y=\"2\" width=\"20\" height=\"8\"/></svg>" + label + "</span>";
  };
  auto tri = [](const char* cls, const char* label) {
    return std::string(
               "<span class=\"key\"><svg width=\"14\" height=\"12\" aria-hidden=\"true\">"
               "<g class=\"") +
           cls + "\"><path d=\"M3,2 L11,2 L7,9 Z\"/></g></svg>" + label + "</span>";
  };
  return "<div class=\"legend\">" + swatch("life", "running") + swatch("orphan", "orphaned") +
         swatch("zombie", "zombie (not reaped)") + swatch("life alive", "alive at the end") +
         tri("sig sig-term", "SIGTERM") + tri("sig sig-kill", "SIGKILL") +
         tri("sig sig-other", "other signal") +
         "<span class=\"key\"><span class=\"phase-key\"></span>phase</span>"
         "<span class=\"key\"><span class=\"fault-key\"></span>fault</span>"
         "<span class=\"hint\">Drag across the timeline to zoom, double-click to reset; hover "
         "for details.</span></div>";
}

std::string scenario_section(const json& sc, size_t index, const std::string& report_dir) {
  std::string name = str(sc, "name", "scenario " + std::to_string(index + 1));
  std::string verdict = str(sc, "verdict", "unknown");
  std::string id = section_id(index, name);
  std::string out = "<section class=\"scenario\" id=\"" + esc(id) + "\">";
  out += std::string("<div class=\"banner ") + verdict_class(verdict) +
         "\"><span class=\"verdict\">" + esc(verdict) + "</span><h2>" + esc(name) +
         "</h2><span class=\"why\">" + esc(str(sc, "verdict_reason")) + "</span></div>";
  std::string error = str(sc, "error");
  if (!error.empty()) out += "<p class=\"error\">The run itself failed: " + esc(error) + "</p>";
  out += facts_table(sc);
  std::string repro = str(sc, "repro");
  if (!repro.empty()) {
    out += "<h3>Reproduce</h3><div class=\"repro\"><pre class=\"cmd\">" + esc(repro) +
           "</pre><button type=\"button\" class=\"copy\">copy</button></div>";
  }
  out += "<h3>Timeline</h3><div class=\"tl-wrap\">" + timeline_svg(sc, id, report_dir) + "</div>";
  out += legend();
  out += "<button type=\"button\" class=\"reset-zoom\" data-for=\"tl-" + esc(id) +
         "\">reset zoom</button>";
  out += "<h3>Checks</h3>" + checks_table(sc);
  out += "<h3>Recovery timings</h3>" + timings_table(sc);
  out += faults_table(sc);
  out += "<h3>Logs</h3>" + logs_block(sc, report_dir);
  out += processes_table(sc);
  const json& text = member(member(sc, "scenario"), "text");
  if (text.is_string() && !text.get<std::string>().empty()) {
    out += "<details><summary>Scenario file (" + esc(str(member(sc, "scenario"), "hash")) +
           ")</summary><pre>" + esc(text.get<std::string>()) + "</pre></details>";
  }
  out += "<p class=\"top-link\"><a href=\"#top\">back to top</a></p>";
  return out + "</section>";
}

std::string overview(const json& result) {
  std::string out =
      "<section id=\"overview\"><h2>Overview</h2><table class=\"overview\"><thead><tr>"
      "<th>scenario</th><th>verdict</th><th>failed checks</th><th>job</th><th>all gone</th>"
      "<th>shm baseline</th><th>processes</th></tr></thead><tbody>";
  size_t i = 0;
  for (const json* sc : items(result, "scenarios")) {
    std::string name = str(*sc, "name", "scenario " + std::to_string(i + 1));
    std::string verdict = str(*sc, "verdict", "unknown");
    std::string failed;
    for (const auto& c : report::failed_checks(*sc)) failed += (failed.empty() ? "" : ", ") + c;
    const json& t = member(*sc, "timings_ms");
    out += std::string("<tr class=\"") + verdict_class(verdict) + "\"><td><a href=\"#" +
           esc(section_id(i, name)) + "\">" + esc(name) + "</a></td><td><span class=\"pill\">" +
           esc(verdict) + "</span></td><td>" + esc(failed.empty() ? "-" : failed) +
           "</td><td class=\"num\">" + esc(format_ms(num(t, "job_ms"))) +
           "</td><td class=\"num\">" + esc(format_ms(num(t, "to_all_gone_ms"))) +
           "</td><td class=\"num\">" + esc(format_ms(num(t, "to_shm_baseline_ms"))) +
           "</td><td class=\"num\">" + std::to_string(items(*sc, "processes").size()) +
           "</td></tr>";
    ++i;
  }
  return out + "</tbody></table></section>";
}

std::string environment_table(const json& result) {
  std::string out = "<details class=\"env\"><summary>Environment</summary><table><tbody>";
  out += row("tool version", esc(str(result, "tool_version", "-")));
  out += row("schema", esc(str(result, "schema", "-") + " v" + str(result, "schema_version", "?")));
  out += row("command line", "<code>" + esc(str(result, "command_line", "-")) + "</code>");
  const json& env = member(result, "environment");
  if (env.is_object()) {
    for (const auto& [k, v] : env.items()) {
      out += row(k, esc(v.is_string() ? v.get<std::string>() : v.dump()));
    }
  }
  // What each job reported about itself (sharing strategy, start method, ...).
  auto scenarios = items(result, "scenarios");
  for (const json* sc : scenarios) {
    const json& job = member(*sc, "job_environment");
    if (!job.is_object()) continue;
    std::string prefix = scenarios.size() == 1 ? "job " : "job (" + str(*sc, "name", "?") + ") ";
    for (const auto& [k, v] : job.items()) {
      out += "<tr class=\"job-env\">" + std::string("<th>") + esc(prefix + k) + "</th><td>" +
             esc(v.is_string() ? v.get<std::string>() : v.dump()) + "</td></tr>";
    }
  }
  return out + "</tbody></table></details>";
}

constexpr const char* kCss = R"CSS(
:root { --ok:#1a7f37; --ok-bg:#dafbe1; --bad:#cf222e; --bad-bg:#ffebe9; --muted:#656d76;
  --line:#d0d7de; --amber:#9a6700; --amber-bg:#fff8c5; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1f2328;
  background: #f6f8fa; }
main { max-width: 1280px; margin: 0 auto; padding: 16px 24px 48px; }
h1 { font-size: 22px; margin: 8px 0; } h2 { font-size: 18px; margin: 0; } h3 { font-size: 15px;
  margin: 20px 0 6px; }
code, pre { font: 12px/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
pre { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 8px;
  overflow: auto; max-height: 420px; white-space: pre-wrap; word-break: break-all; margin: 4px 0; }
table { border-collapse: collapse; background: #fff; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
thead th { background: #eaeef2; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.muted { color: var(--muted); }
.summary span { margin-right: 12px; }
.scenario { background: #fff; border: 1px solid var(--line); border-radius: 8px;
  padding: 0 16px 12px; margin: 20px 0; }
.banner { display: flex; gap: 12px; align-items: baseline; margin: 0 -16px 12px;
  padding: 10px 16px;
  border-radius: 8px 8px 0 0; }
.banner.ok { background: var(--ok-bg); border-bottom: 3px solid var(--ok); }
.banner.bad { background: var(--bad-bg); border-bottom: 3px solid var(--bad); }
.banner .verdict { font-weight: 700; text-transform: uppercase; color: #fff; padding: 1px 8px;
  border-radius: 4px; }
.banner.ok .verdict { background: var(--ok); } .banner.bad .verdict { background: var(--bad); }
.pill { font-weight: 600; } tr.ok .pill { color: var(--ok); } tr.bad .pill { color: var(--bad); }
.error { color: var(--bad); font-weight: 600; }
.facts th { width: 130px; background: #f6f8fa; }
.tag { background: #ddf4ff; border-radius: 10px; padding: 0 8px; font-size: 12px; }
.checks .status { font-weight: 700; }
tr.st-pass .status { color: var(--ok); } tr.st-fail .status { color: var(--bad); }
tr.st-xfail .status { color: var(--amber); } tr.st-skip .status { color: var(--muted); }
tr.st-fail { background: var(--bad-bg); } tr.st-xfail { background: var(--amber-bg); }
.checks td.reason { max-width: 520px; }
.checks pre { max-height: 300px; max-width: 560px; }
.repro { display: flex; gap: 8px; align-items: flex-start; } .repro pre { flex: 1; margin: 0; }
button { font: inherit; font-size: 12px; padding: 2px 10px; border: 1px solid var(--line);
  border-radius: 6px; background: #f6f8fa; cursor: pointer; }
.tl-wrap { overflow-x: auto; border: 1px solid var(--line); border-radius: 6px; }
svg.timeline { display: block; width: 100%; min-width: 960px; height: auto; cursor: crosshair;
  user-select: none; font: 11px system-ui, sans-serif; }
svg.timeline text { fill: #1f2328; }
.grid { stroke: #eef1f4; } .tick { fill: var(--muted) !important; }
.group { font-weight: 700; fill: #57606a !important; text-transform: uppercase; font-size: 10px; }
.group-rule { stroke: var(--line); }
.lane-bg { fill: transparent; } .lane:hover .lane-bg { fill: #f3f6fa; }
.lane-label { font: 11px ui-monospace, Menlo, Consolas, monospace; }
.row-label, .chart-label { fill: #57606a !important; } .chart-max { fill: var(--muted) !important; }
.life { fill: #54aeff; } .life.alive { fill: #0969da; }
.orphan { fill: #fb8f44; opacity: .9; } .zombie { fill: #8250df; }
.exit line { stroke: #1f2328; stroke-width: 1.5; }
.mlabel { font-size: 10px; paint-order: stroke; stroke: #fff; stroke-width: 3px;
  stroke-linejoin: round; }
.alive-end .mlabel { fill: #0969da !important; font-weight: 600; }
.sig path { stroke: #fff; stroke-width: .5; } .sig-term path { fill: #bf8700; }
.sig-kill path { fill: #a40e26; } .sig-other path { fill: #6639ba; }
.fault path { fill: #cf222e; stroke: #fff; stroke-width: .5; }
.phase line { stroke: #8c959f; stroke-dasharray: 3 3; } .phase .mlabel { fill: #57606a !important; }
.fault-line line { stroke: #cf222e; stroke-dasharray: 2 2; }
.fault-line .mlabel { fill: #cf222e !important; font-weight: 600; }
.chart-bg { fill: #fafbfc; stroke: #eef1f4; }
.curve { fill: none; stroke-width: 1.5; } .curve.procs { stroke: #0969da; }
.curve.shm { stroke: #bf3989; } .curve.gpu { stroke: #1a7f37; }
.curve.rss { stroke: #9a6700; }
.shm-mark line { stroke: #bf3989; stroke-width: 2; }
.zoom-sel { fill: rgba(9,105,218,.12); stroke: #0969da; }
.readout { fill: #0969da !important; font-weight: 600; }
.empty { fill: var(--muted) !important; font-style: italic; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; align-items: center; font-size: 12px;
  margin: 6px 0; color: #57606a; }
.legend .key { display: inline-flex; align-items: center; gap: 4px; }
.legend .hint { color: var(--muted); font-style: italic; }
.phase-key, .fault-key { display: inline-block; width: 0; height: 12px;
  border-left: 2px dashed #8c959f; } .fault-key { border-left-color: #cf222e; }
.logs { margin: 4px 0; } .stderr { max-height: 260px; }
.proc-logs { margin: 6px 0; } .proc-logs caption { text-align: left; font-weight: 600; }
.lane-log text { fill: #0969da !important; font-size: 10px; text-decoration: underline; }
details summary { cursor: pointer; color: #0969da; }
.procs, .env { margin: 10px 0; }
.top-link { text-align: right; font-size: 12px; margin: 4px 0 0; }
footer { color: var(--muted); font-size: 12px; margin-top: 24px; }
)CSS";

// Runs first, in <head>, so an error anywhere later (including a syntax or
// runtime error in the main script) is counted in #js-errors, which the
// browser test reads from the dumped DOM.
constexpr const char* kErrorHookJs = R"JS(
window.__amErrors = 0;
window.__amNoteError = function () {
  window.__amErrors++;
  var e = document.getElementById('js-errors');
  if (e) e.textContent = String(window.__amErrors);
};
window.addEventListener('error', window.__amNoteError);
window.addEventListener('unhandledrejection', window.__amNoteError);
)JS";

// Zoom (drag to select a time range, double-click or "reset zoom" to undo), a
// time readout under the cursor, and copying the repro command. Positions
// are recomputed from the data-t* attributes the C++ side wrote.
constexpr const char* kMainJs = R"JS(
(function () {
  'use strict';
  function niceStep(span, target) {
    var raw = span / target, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var n = raw / mag;
    return (n < 1.5 ? 1 : n < 3.5 ? 2 : n < 7.5 ? 5 : 10) * mag;
  }
  function fmtTime(t, step) {
    if (step >= 1000) {
      var d = step >= 10000 ? 0 : (step % 1000 === 0 ? 0 : 1);
      return (t / 1000).toFixed(d) + ' s';
    }
    return t.toFixed(step >= 1 ? 0 : step >= 0.1 ? 1 : 2) + ' ms';
  }
  function fmtMs(t) { return t >= 1000 ? (t / 1000).toFixed(3) + ' s' : t.toFixed(2) + ' ms'; }

  function Timeline(svg) {
    this.svg = svg;
    this.x0 = +svg.getAttribute('data-x0');
    this.x1 = +svg.getAttribute('data-x1');
    this.end = +svg.getAttribute('data-end');
    this.top = +svg.getAttribute('data-top');
    this.bottom = +svg.getAttribute('data-bottom');
    this.axisY = +svg.getAttribute('data-axis-y');
    this.t0 = 0;
    this.t1 = this.end;
  }
  Timeline.prototype.x = function (t) {
    return this.x0 + (t - this.t0) / (this.t1 - this.t0) * (this.x1 - this.x0);
  };
  Timeline.prototype.t = function (x) {
    return this.t0 + (x - this.x0) / (this.x1 - this.x0) * (this.t1 - this.t0);
  };
  Timeline.prototype.layout = function () {
    var self = this, svg = this.svg, ns = svg.namespaceURI;
    svg.querySelectorAll('[data-t0]').forEach(function (r) {
      var a = self.x(+r.getAttribute('data-t0')), b = self.x(+r.getAttribute('data-t1'));
      r.setAttribute('x', a.toFixed(1));
      r.setAttribute('width', Math.max(1, b - a).toFixed(1));
    });
    svg.querySelectorAll('g[data-t]').forEach(function (g) {
      var x = self.x(+g.getAttribute('data-t'));
      g.setAttribute('transform', 'translate(' + x.toFixed(1) + ',0)');
      var label = g.querySelector('.mlabel');
      if (label) {
        var flip = x > self.x1 - 110;
        label.setAttribute('x', flip ? '-4' : '4');
        label.setAttribute('text-anchor', flip ? 'end' : 'start');
      }
    });
    svg.querySelectorAll('path[data-pts]').forEach(function (p) {
      var h = +p.getAttribute('data-h'), vmax = +p.getAttribute('data-vmax') || 1;
      var y0 = +p.getAttribute('data-y0');
      var pts = p.getAttribute('data-pts').split(' ').filter(Boolean);
      var d = '';
      pts.forEach(function (pt, i) {
        var tv = pt.split(':'), x = self.x(+tv[0]).toFixed(1);
        var y = (y0 + h - (+tv[1]) / vmax * h).toFixed(1);
        d += i === 0 ? 'M' + x + ',' + y : ' H' + x + ' V' + y;
      });
      if (pts.length) d += ' H' + self.x(self.end).toFixed(1);
      p.setAttribute('d', d);
    });
    var axis = svg.querySelector('g.axis');
    while (axis.firstChild) axis.removeChild(axis.firstChild);
    var span = this.t1 - this.t0, step = niceStep(span, 8);
    for (var t = Math.ceil(this.t0 / step) * step; t <= this.t1 + step * 1e-9; t += step) {
      var x = this.x(t);
      var line = document.createElementNS(ns, 'line');
      line.setAttribute('class', 'grid');
      line.setAttribute('x1', x); line.setAttribute('x2', x);
      line.setAttribute('y1', this.top); line.setAttribute('y2', this.bottom);
      axis.appendChild(line);
      var text = document.createElementNS(ns, 'text');
      text.setAttribute('class', 'tick');
      text.setAttribute('x', x); text.setAttribute('y', this.axisY);
      text.setAttribute('text-anchor', 'middle');
      text.textContent = fmtTime(t, step);
      axis.appendChild(text);
    }
  };
  Timeline.prototype.zoom = function (t0, t1) {
    this.t0 = Math.max(0, t0);
    this.t1 = Math.min(this.end, t1);
    if (!(this.t1 - this.t0 >= 1e-3)) { this.t0 = 0; this.t1 = this.end; }
    this.layout();
    var whole = this.t0 === 0 && this.t1 === this.end;
    try {
      history.replaceState(null, '', whole ? window.location.pathname :
          '#zoom=' + this.svg.id + ':' + this.t0.toFixed(3) + ':' + this.t1.toFixed(3));
    } catch (e) {
      // Some file:// contexts refuse history changes; zoom works without.
    }
  };
  Timeline.prototype.attach = function () {
    var self = this, svg = this.svg;
    var sel = svg.querySelector('.zoom-sel'), readout = svg.querySelector('.readout');
    var drag = null;
    function local(e) {
      var m = svg.getScreenCTM();
      if (!m) return null;
      var p = svg.createSVGPoint();
      p.x = e.clientX; p.y = e.clientY;
      return p.matrixTransform(m.inverse());
    }
    svg.addEventListener('mousedown', function (e) {
      var p = local(e);
      if (!p || p.x < self.x0 || p.x > self.x1 || e.button !== 0) return;
      drag = p.x;
      sel.setAttribute('x', p.x); sel.setAttribute('width', 0);
      sel.style.display = '';
      e.preventDefault();
    });
    svg.addEventListener('mousemove', function (e) {
      var p = local(e);
      if (!p) return;
      readout.textContent = p.x >= self.x0 && p.x <= self.x1 ? 't = ' + fmtMs(self.t(p.x)) : '';
      if (drag === null) return;
      var a = Math.max(self.x0, Math.min(drag, p.x)), b = Math.min(self.x1, Math.max(drag, p.x));
      sel.setAttribute('x', a); sel.setAttribute('width', Math.max(0, b - a));
    });
    svg.addEventListener('mouseleave', function () { readout.textContent = ''; });
    window.addEventListener('mouseup', function (e) {
      if (drag === null) return;
      var p = local(e), start = drag;
      drag = null;
      sel.style.display = 'none';
      if (!p || Math.abs(p.x - start) < 4) return;
      var a = Math.max(self.x0, Math.min(start, p.x)), b = Math.min(self.x1, Math.max(start, p.x));
      self.zoom(self.t(a), self.t(b));
    });
    svg.addEventListener('dblclick', function () { self.zoom(0, self.end); });
  };

  var timelines = {};
  document.querySelectorAll('svg.timeline').forEach(function (svg) {
    var tl = new Timeline(svg);
    tl.layout();
    tl.attach();
    timelines[svg.id] = tl;
  });
  document.querySelectorAll('button.reset-zoom').forEach(function (b) {
    b.addEventListener('click', function () {
      var tl = timelines[b.getAttribute('data-for')];
      if (tl) tl.zoom(0, tl.end);
    });
  });
  document.querySelectorAll('.repro button.copy').forEach(function (b) {
    b.addEventListener('click', function () {
      var pre = b.parentNode.querySelector('pre');
      function selectIt() {
        var r = document.createRange();
        r.selectNodeContents(pre);
        var s = window.getSelection();
        s.removeAllRanges(); s.addRange(r);
      }
      // The clipboard API is unavailable on some file:// pages: fall back to
      // selecting the text so Ctrl+C works.
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(pre.textContent).then(function () {
          b.textContent = 'copied';
        }, selectIt);
      } else {
        selectIt();
      }
    });
  });
  // report.html#zoom=<timeline id>:<t0 ms>:<t1 ms> opens zoomed, so a
  // region of interest can be linked to (and the zoom path is testable).
  var m = /^#zoom=([^:]+):([0-9.]+):([0-9.]+)$/.exec(window.location.hash);
  if (m && timelines[m[1]]) {
    timelines[m[1]].zoom(+m[2], +m[3]);
    // Headless Chromium screenshots a scrolled page as blank, so a zoomed
    // screenshot (docs/reports.md) needs the page left at its top.
    if (!/HeadlessChrome/.test(navigator.userAgent)) timelines[m[1]].svg.scrollIntoView();
  }
  document.getElementById('js-errors').textContent = String(window.__amErrors);
  document.body.setAttribute('data-js', 'ready');
})();
)JS";

}  // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (size_t i = 0; i < text.size();) {
    char32_t cp;
    size_t len = utf8_char(text, i, cp);
    if (len == 0) {
      out += "\uFFFD";
      ++i;
      continue;
    }
    i += len;
    switch (cp) {
      case '&':
        out += "&amp;";
        continue;
      case '<':
        out += "&lt;";
        continue;
      case '>':
        out += "&gt;";
        continue;
      case '"':
        out += "&quot;";
        continue;
      case '\'':
        out += "&#39;";
        continue;
      case '\t':
      case '\n':
      case '\r':
        out += static_cast<char>(cp);
        continue;
      default:
        break;
    }
    if (cp < 0x20) {
      append_utf8(out, 0x2400 + cp);
    } else if (cp == 0x7F) {
      append_utf8(out, 0x2421);
    } else if ((cp >= 0x80 && cp <= 0x9F) || cp == 0xFFFE || cp == 0xFFFF) {
      out += "\uFFFD";
    } else {
      append_utf8(out, cp);
    }
  }
  return out;
}

std::string render_html(const json& result, const std::string& report_dir) {
  auto scenarios = items(result, "scenarios");
  const json& summary = member(result, "summary");
  std::string title = "aftermath report";
  if (scenarios.size() == 1) title += ": " + str(*scenarios[0], "name");

  std::string out;
  out.reserve(64 * 1024);
  out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  out += "<title>" + esc(title) + "</title><style>";
  out += kCss;
  out += "</style><script>";
  out += kErrorHookJs;
  out += "</script></head><body><main id=\"top\">";
  out += "<h1>" + esc(title) + "</h1>";

  out += "<p class=\"summary\">";
  out +=
      fmt("<span><b>%zu</b> scenario%s</span>", scenarios.size(), scenarios.size() == 1 ? "" : "s");
  for (const char* v : {"pass", "xfail", "fail", "xpass", "error", "skipped"}) {
    // The run's own tally when it has one; counting is only the fallback
    // for a document without "summary".
    auto n = num(summary, v);
    if (!n) {
      n = 0;
      for (const json* sc : scenarios) *n += str(*sc, "verdict") == v;
    }
    if (*n > 0) out += "<span>" + report::format_number(*n, 0) + " " + v + "</span>";
  }
  out += "</p>";
  out += environment_table(result);
  if (scenarios.size() > 1) out += overview(result);
  if (scenarios.empty()) out += "<p class=\"muted\">This run has no scenarios.</p>";
  for (size_t i = 0; i < scenarios.size(); ++i) {
    out += scenario_section(*scenarios[i], i, report_dir);
  }
  out += "<footer>Rendered from result.json (" + esc(str(result, "schema", "aftermath/result")) +
         " v" + esc(str(result, "schema_version", "?")) + ") by aftermath " +
         esc(str(result, "tool_version", "")) +
         ". JavaScript errors: <span id=\"js-errors\">not run</span></footer>";
  out += "</main><script>";
  out += kMainJs;
  out += "</script></body></html>\n";
  return out;
}

}  // namespace aftermath
