#include "reports/timeline_order.h"

#include <algorithm>

#include "reports/escape.h"
#include "reports/view.h"

namespace aftermath::svg {

using report::format_ms;

namespace {

// The observation's kind as result.json names it ("shm_add").
std::string word_of(const Observation& o) { return std::string(o.word()); }

}  // namespace

TimelineParts sort_timeline(const ScenarioResult& sc,
                            const std::map<long long, std::size_t>& lane_of) {
  TimelineParts p;
  auto lane = [&](const Observation& o, int pid) {
    return pid ? lane_of.find(aftermath::process_key(o.node, pid)) : lane_of.end();
  };
  auto add_signal = [&](const Observation& o, int pid, SignalMark m) {
    auto it = lane(o, pid);
    (it == lane_of.end() ? p.stray_signals : p.lane_signals[it->second]).push_back(std::move(m));
  };
  for (const Observation& o : sc.timeline.observations) {
    const double t = to_ms(o.t);
    auto shm = [&](const std::string& name, std::optional<double> bytes) {
      p.shm_events.push_back({t, word_of(o), name, bytes});
    };
    std::visit(Overloaded{
                   [&](const obs::Phase& e) {
                     std::string name(to_string(e.name));
                     p.vlines.push_back({t, name, name + " at " + format_ms(t), "phase"});
                   },
                   [&](const obs::Signal& e) {
                     add_signal(o, e.pid, {t, e.pid, signal_name(e.signo), "", e.why});
                   },
                   [&](const obs::Fault& e) {
                     std::string action(to_string(e.action));
                     p.vlines.push_back({t, "fault " + action,
                                         "fault #" + std::to_string(e.index) + " " + action +
                                             " at " + format_ms(t) + ": " + e.what,
                                         "fault-line"});
                     auto it = lane(o, e.pid);
                     (it == lane_of.end() ? p.stray_faults : p.lane_faults[it->second])
                         .push_back({t, action, e.what});
                   },
                   [&](const obs::ProcState& e) {
                     if (auto it = lane(o, e.pid); it != lane_of.end())
                       p.lane_states[it->second].push_back({t, e.state});
                   },
                   [&](const obs::Sample& e) {
                     auto procs_v = static_cast<double>(e.procs);
                     auto shm_v = static_cast<double>(e.shm_bytes);
                     p.procs_series.pts.emplace_back(t, procs_v);
                     p.shm_series.pts.emplace_back(t, shm_v);
                     p.procs_series.max = std::max(p.procs_series.max, procs_v);
                     p.shm_series.max = std::max(p.shm_series.max, shm_v);
                   },
                   [&](const obs::Memory& e) {
                     auto rss = static_cast<double>(e.rss_bytes);
                     p.rss_series.pts.emplace_back(t, rss);
                     p.rss_series.max = std::max(p.rss_series.max, rss);
                   },
                   // The kernel's OOM killer: the SIGKILL it sent, on its victim's lane.
                   [&](const obs::OomKill& e) {
                     add_signal(o, e.pid,
                                {t, e.pid, "SIGKILL", "the kernel",
                                 "its OOM killer, in " + e.cgroup + " (oom_kill " +
                                     std::to_string(e.kills) + ")" +
                                     (e.kernel_line.empty() ? "" : ": " + e.kernel_line)});
                   },
                   // Entries present before launch are the baseline, not the job's doing.
                   [&](const obs::ShmAdd& e) {
                     if (!e.baseline) shm(e.name, static_cast<double>(e.bytes));
                   },
                   [&](const obs::ShmResize& e) { shm(e.name, static_cast<double>(e.bytes)); },
                   [&](const obs::ShmRemove& e) { shm(e.name, std::nullopt); },
                   [&](const obs::ShmReclaim& e) { shm(e.name, static_cast<double>(e.bytes)); },
                   [&](const obs::ShmHeld& e) { shm(e.path, static_cast<double>(e.bytes)); },
                   [](const auto&) {},
               },
               o.what);
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
