#include "reports/timeline_lanes.h"

#include <algorithm>
#include <utility>

#include "reports/escape.h"
#include "reports/timeline_markers.h"
#include "reports/timeline_states.h"

namespace aftermath::svg {

namespace {

using report::format_ms;
using report::ProcessView;

std::string esc(std::string_view s) { return html_escape(s); }

template <typename T>
const std::vector<T>& lane_items(const std::map<std::size_t, std::vector<T>>& by_lane,
                                 std::size_t lane) {
  static const std::vector<T> kNone;
  auto it = by_lane.find(lane);
  return it == by_lane.end() ? kNone : it->second;
}

std::string fault_title(const FaultMark& f) { return "fault " + f.action + ": " + f.what; }

// The process's own log files as links at the end of its lane's label
// (left of the plot, where a drag does not zoom).
std::string lane_log_links(const ScenarioResult& sc, const ProcessView& p,
                           const std::string& report_dir) {
  std::string out;
  const std::pair<const std::string*, const char*> logs[] = {{&p.log_stdout, "out"},
                                                             {&p.log_stderr, "err"}};
  double x = kPlotX0 - 44;
  for (const auto& [path, label] : logs) {
    if (!path->empty()) {
      std::string file = report::scenario_file(sc, *path);
      out += fmt("<a class=\"lane-log\" data-stream=\"%s\" href=\"", label) +
             esc(report::log_href(file, report_dir)) + "\"><title>" +
             esc(std::string(label) + ": " + file) + "</title>" +
             fmt("<text x=\"%s\" y=\"13\">%s</text></a>", px(x).c_str(), label);
    }
    x += 21;
  }
  return out;
}

// A row of its own (stray faults or signals): its label, then the clipped
// plot group the caller fills and closes with "</g></g>".
std::string open_row(const LaneContext& c, double y, const char* label) {
  return fmt("<g class=\"row\" transform=\"translate(0,%s)\">", px(y).c_str()) +
         "<text class=\"row-label\" x=\"8\" y=\"13\">" + label + "</text>" + c.clipped;
}

// The header above a role's lanes: "role · N processes" ("node1 · role · N
// processes" in a multi-node run) and a rule.
std::string group_header(const std::vector<ProcessView>& procs, const ProcessView& first,
                         double y) {
  std::size_t n = 0;
  for (const auto& q : procs) n += q.role == first.role && q.node == first.node;
  std::string name =
      first.node ? "node" + std::to_string(*first.node) + " \u00b7 " + first.role : first.role;
  return fmt("<text class=\"group\" x=\"4\" y=\"%s\">", px(y + 12).c_str()) + esc(name) +
         fmt(" \u00b7 %zu process%s</text>", n, n == 1 ? "" : "es") +
         fmt("<line class=\"group-rule\" x1=\"0\" x2=\"%s\" y1=\"%s\" y2=\"%s\"/>",
             px(kWidth).c_str(), px(y + 0.5).c_str(), px(y + 0.5).c_str());
}

// The spans of a process's life: alive, orphaned, zombie.
std::string life_bars(const Scale& s, const ProcessView& p, double end) {
  const double life_end = p.life_end_ms.value_or(end);
  std::string out = bar(s, p.start_ms, life_end, 5, 9, p.life_end_ms ? "life" : "life alive", "");
  if (p.orphaned_ms) {
    double from = std::max(*p.orphaned_ms, p.start_ms);
    out += bar(s, from, std::max(from, life_end), 5, 9, "orphan",
               "orphaned from " + format_ms(from) + " to " +
                   (p.life_end_ms ? format_ms(life_end) : std::string("the end")));
  }
  if (p.zombie_since_ms) {
    double from = *p.zombie_since_ms;
    double to = p.gone_ms.value_or(end);
    if (to >= from) {
      out += bar(s, from, to, 7, 5, "zombie",
                 "zombie (exited, not reaped) from " + format_ms(from) + " to " +
                     (p.gone_ms ? format_ms(to) : std::string("the end")));
    }
  }
  return out;
}

// The spans in which /proc saw the process stopped (T, t) or in
// uninterruptible sleep (D), over its life bar and any orphan span: a process
// frozen by SIGSTOP is not running, and the lane must not say it is. The
// lane's title still says when it was orphaned.
std::string state_bars(const LaneContext& c, const ProcessView& p,
                       const std::vector<StateMark>& states) {
  const Scale& s = c.scale;
  const double end = s.end_ms;
  auto diagnosis = diagnose_window(c.parts.vlines, end);
  std::string out;
  for (const StateSpan& span : state_spans(states, p.life_end_ms.value_or(end))) {
    bool by_harness = span.state == 't' && diagnosis && span.t0 >= diagnosis->first &&
                      span.t0 <= diagnosis->second;
    std::string what = span.state == 'D' ? "uninterruptible sleep (D, in the kernel)"
                       : by_harness      ? "stopped (t) by the harness's debugger taking its stacks"
                       : span.state == 't' ? "stopped (t, traced)"
                                           : "stopped (T)";
    out +=
        bar(s, span.t0, span.t1, 5, 9, state_class(span.state),
            what + " from " + format_ms(span.t0) + " to " +
                (span.t1 >= end && !p.life_end_ms ? std::string("the end") : format_ms(span.t1)));
  }
  return out;
}

// The end of the life bar: the exit marker sits at the exit, or where the
// process vanished when the exit itself was never observed.
std::string life_end_marker(const Scale& s, const ProcessView& p, double end) {
  if (!p.life_end_ms) {
    return at_time(s, end, "alive-end") + marker_label(s, end, 13, "alive at end") + "</g>";
  }
  double t = *p.life_end_ms;
  std::string label = !p.outcome.empty() ? p.outcome : p.exited_ms ? "exited" : "gone";
  return at_time(s, t, "exit") + "<line x1=\"0\" x2=\"0\" y1=\"2\" y2=\"16\"/>" +
         marker_label(s, t, 13, label) + "<title>" + esc(label + " at " + format_ms(t)) +
         "</title></g>";
}

// The pytest tests this process ran: a thin band under
// the life bar from each test's start to its end, a tick at each boundary,
// red for a test that left something behind.
std::string test_spans(const LaneContext& c, const ProcessView& p) {
  const Scale& s = c.scale;
  std::string out;
  for (const TestResult& t : c.scenario.tests) {
    if (t.pid != p.pid) continue;
    const double t0 = to_ms(t.started);
    std::optional<double> t1;
    if (t.ended) t1 = to_ms(*t.ended);
    std::string outcome(to_string(t.outcome));
    std::string title = t.nodeid + " " + format_ms(t0) + " \u2192 " +
                        (t1 ? format_ms(*t1) : std::string("(never ended)")) +
                        (outcome.empty() ? "" : ", " + outcome);
    for (const TestLeak& l : t.leaks)
      title += "\nleft " + std::string(to_string(l.kind)) + ": " + l.what;
    std::string cls = t.leaks.empty() ? "test-span" : "test-span test-leak";
    out += bar(s, t0, t1.value_or(s.end_ms), 15, 3, cls, title);
    out += at_time(s, t0, "test-mark") + "<line x1=\"0\" x2=\"0\" y1=\"13\" y2=\"18\"/></g>";
    if (t1)
      out += at_time(s, *t1, "test-mark") + "<line x1=\"0\" x2=\"0\" y1=\"13\" y2=\"18\"/></g>";
  }
  return out;
}

std::string lane(const LaneContext& c, const ProcessView& p, std::size_t i, double y) {
  const Scale& s = c.scale;
  std::string out =
      fmt("<g class=\"lane\" data-pid=\"%lld\" data-role=\"%s\" transform=\"translate(0,%s)\">",
          p.pid, esc(p.role).c_str(), px(y).c_str());
  out += "<title>" + esc(process_title(p)) + "</title>";
  out += fmt("<rect class=\"lane-bg\" x=\"0\" y=\"0\" width=\"%s\" height=\"%s\"/>",
             px(kWidth).c_str(), px(kLaneH).c_str());
  out += "<text class=\"lane-label\" x=\"14\" y=\"13\">" + esc(lane_label(p)) + "</text>";
  out += lane_log_links(c.scenario, p, c.report_dir);
  out += c.clipped;
  out += life_bars(s, p, s.end_ms);
  out += state_bars(c, p, lane_items(c.parts.lane_states, i));
  out += life_end_marker(s, p, s.end_ms);
  out += test_spans(c, p);
  for (const SignalMark& e : lane_items(c.parts.lane_signals, i)) out += signal_marker(s, e, 0);
  for (const FaultMark& f : lane_items(c.parts.lane_faults, i))
    out += fault_marker(s, f.t, fault_title(f), 4);
  return out + "</g></g>";
}

}  // namespace

std::string process_title(const ProcessView& p) {
  std::string t = p.role + " " + report::pid_text(p) + " " + p.comm;
  if (p.node) t += " on node" + std::to_string(*p.node);
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
    t += "\norphaned at " + format_ms(p.orphaned_ms) + " (parent " + std::to_string(p.ppid) +
         ", later " + std::to_string(p.last_ppid) + ")";
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

std::string draw_lanes(const LaneContext& c, const std::vector<ProcessView>& procs, double& y) {
  const Scale& s = c.scale;
  std::string body;
  if (!c.parts.stray_faults.empty()) {
    body += open_row(c, y, "faults (no job process target)");
    for (const FaultMark& f : c.parts.stray_faults) body += fault_marker(s, f.t, fault_title(f), 4);
    body += "</g></g>";
    y += kLaneH;
  }
  for (std::size_t i = 0; i < procs.size(); ++i) {
    if (i == 0 || procs[i].role != procs[i - 1].role || procs[i].node != procs[i - 1].node) {
      body += group_header(procs, procs[i], y);
      y += kGroupH;
    }
    body += lane(c, procs[i], i, y);
    y += kLaneH;
  }
  if (procs.empty()) {
    body += fmt("<text class=\"empty\" x=\"%s\" y=\"%s\">no job process was observed</text>",
                px(kPlotX0 + 8).c_str(), px(y + 13).c_str());
    y += kLaneH;
  }
  if (!c.parts.stray_signals.empty()) {
    body += open_row(c, y, "signals to other pids");
    for (const SignalMark& e : c.parts.stray_signals) body += signal_marker(s, e, 4);
    body += "</g></g>";
    y += kLaneH;
  }
  return body;
}

}  // namespace aftermath::svg
