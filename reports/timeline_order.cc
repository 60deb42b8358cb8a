#include "reports/timeline_order.h"

#include <algorithm>

#include "reports/escape.h"
#include "reports/view.h"

namespace aftermath::svg {

using nlohmann::json;
using report::format_ms;
using report::items;
using report::member;
using report::num;
using report::str;

TimelineParts sort_timeline(const json& sc, const std::map<long long, std::size_t>& lane_of) {
  TimelineParts p;
  for (const json* e : items(sc, "timeline")) {
    std::string kind = str(*e, "kind");
    auto t = num(*e, "t_ms");
    if (!t) continue;
    if (kind == "phase") {
      std::string name = str(*e, "name", "phase");
      p.vlines.push_back({*t, name, name + " at " + format_ms(t), "phase"});
    } else if (kind == "signal" || kind == "fault") {
      auto pid = num(*e, "pid");
      auto it = pid ? lane_of.find(report::process_key(*e)) : lane_of.end();
      if (kind == "signal") {
        (it == lane_of.end() ? p.stray_signals : p.lane_signals[it->second]).push_back(e);
      } else {
        std::string action = str(*e, "action", "fault");
        p.vlines.push_back({*t, "fault " + action,
                            "fault #" + str(*e, "index", "?") + " " + action + " at " +
                                format_ms(t) + ": " + str(*e, "what"),
                            "fault-line"});
        (it == lane_of.end() ? p.stray_faults : p.lane_faults[it->second]).push_back(e);
      }
    } else if (kind == "proc_state") {
      auto pid = num(*e, "pid");
      auto it = pid ? lane_of.find(report::process_key(*e)) : lane_of.end();
      if (it != lane_of.end()) p.lane_states[it->second].push_back(e);
    } else if (kind == "sample") {
      double procs_v = num(*e, "procs").value_or(0);
      double shm_v = num(*e, "shm_bytes").value_or(0);
      p.procs_series.pts.emplace_back(*t, procs_v);
      p.shm_series.pts.emplace_back(*t, shm_v);
      p.procs_series.max = std::max(p.procs_series.max, procs_v);
      p.shm_series.max = std::max(p.shm_series.max, shm_v);
    } else if (kind == "memory") {
      double rss = num(*e, "rss_bytes").value_or(0);
      p.rss_series.pts.emplace_back(*t, rss);
      p.rss_series.max = std::max(p.rss_series.max, rss);
    } else if (kind == "oom_kill") {
      auto pid = num(*e, "pid");
      auto it = pid ? lane_of.find(report::process_key(*e)) : lane_of.end();
      p.kernel_kills.push_back(
          {{"t_ms", *t},
           {"pid", member(*e, "pid")},
           {"signal", "SIGKILL"},
           {"by", "the kernel"},
           {"why", "its OOM killer, in " + str(*e, "cgroup") + " (oom_kill " +
                       str(*e, "kills", "?") + ")" +
                       (str(*e, "kernel").empty() ? "" : ": " + str(*e, "kernel"))}});
      (it == lane_of.end() ? p.stray_signals : p.lane_signals[it->second])
          .push_back(&p.kernel_kills.back());
    } else if (kind.rfind("shm_", 0) == 0) {
      // Entries present before launch are the baseline, not the job's doing.
      const json& baseline = member(*e, "baseline");
      if (!(baseline.is_boolean() && baseline.get<bool>())) p.shm_events.push_back(e);
    }
  }
  return p;
}

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

}  // namespace aftermath::svg
