// Ordering a scenario's timeline for drawing: which instant goes on which
// lane, which on a row of its own, which is a vertical line across the plot,
// and which feeds a curve. Pure: it reads result.json's "timeline" array and
// draws nothing.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "reports/svg.h"

namespace aftermath::svg {

// A vertical labelled line across the plot: a phase or a fault.
struct VLine {
  double t;
  std::string label;
  std::string title;
  std::string cls;  // "phase" or "fault-line"
  int row = 0;
};

// One step curve (job process count, /dev/shm bytes, RSS, GPU memory).
struct Series {
  std::vector<std::pair<double, double>> pts;  // (t_ms, value), in timeline order
  double max = 0;
};

// A scenario's timeline entries, sorted into what is drawn where. Lanes are
// indices into the lane order the caller passed (lane_of: pid -> lane).
struct TimelineParts {
  std::vector<VLine> vlines;  // phases and faults
  std::map<std::size_t, std::vector<const nlohmann::json*>> lane_signals;
  std::vector<const nlohmann::json*> stray_signals;  // to pids not on a lane
  std::map<std::size_t, std::vector<const nlohmann::json*>> lane_faults;
  std::vector<const nlohmann::json*> stray_faults;  // no lane target
  // Each lane's proc_state entries, in timeline order (timeline_states.h).
  std::map<std::size_t, std::vector<const nlohmann::json*>> lane_states;
  std::vector<const nlohmann::json*> shm_events;  // not the pre-launch baseline
  Series procs_series, shm_series, rss_series;
  // oom_kill entries restated as the SIGKILL the kernel sent; the signal
  // lists point into it (a deque: its elements never move).
  std::deque<nlohmann::json> kernel_kills;
};

// Sorts `sc`'s "timeline" entries (entries without t_ms are skipped). The
// result points into `sc` and into itself: `sc` must outlive it, and it must
// not be copied (moving keeps the pointers valid).
TimelineParts sort_timeline(const nlohmann::json& sc,
                            const std::map<long long, std::size_t>& lane_of);

// Spreads labels over a few rows so phases a few ms apart (job_exited,
// settle, teardown) stay readable: sorts `lines` by time, sets each one's
// row (at most 4 rows, labels estimated at 6.2 px a character) and returns
// the number of rows used (at least 1).
int stagger(std::vector<VLine>& lines, const Scale& s);

}  // namespace aftermath::svg
