// Ordering a scenario's timeline for drawing: which instant goes on which
// lane, which on a row of its own, which is a vertical line across the plot,
// and which feeds a curve. Pure: it reads the typed scenario's observations
// and draws nothing.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/result.h"
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

// A signal as a lane shows it: one the harness sent (obs::Signal), or the
// SIGKILL the kernel's OOM killer sent (obs::OomKill), restated.
struct SignalMark {
  double t = 0;
  long long pid = 0;
  std::string signal;  // "SIGTERM"
  std::string by;      // "" (the harness) or "the kernel"
  std::string why;
};

// An injected fault (obs::Fault) on its target's lane.
struct FaultMark {
  double t = 0;
  std::string action;
  std::string what;
};

// A /proc state letter a process was seen in from t on (obs::ProcState).
struct StateMark {
  double t = 0;
  char state = 0;
};

// A /dev/shm entry the job made, resized, removed or held, or the harness
// reclaimed: a tick under the /dev/shm curve.
struct ShmMark {
  double t = 0;
  std::string kind;  // the observation's word: "shm_add", ...
  std::string name;  // the entry (a held one: its path)
  std::optional<double> bytes;
};

// A scenario's timeline, sorted into what is drawn where. Lanes are indices
// into the lane order the caller passed (lane_of: process_key -> lane).
struct TimelineParts {
  std::vector<VLine> vlines;  // phases and faults
  std::map<std::size_t, std::vector<SignalMark>> lane_signals;
  std::vector<SignalMark> stray_signals;  // to pids not on a lane
  std::map<std::size_t, std::vector<FaultMark>> lane_faults;
  std::vector<FaultMark> stray_faults;  // no lane target
  // Each lane's proc_state entries, in timeline order (timeline_states.h).
  std::map<std::size_t, std::vector<StateMark>> lane_states;
  std::vector<ShmMark> shm_events;  // not the pre-launch baseline
  Series procs_series, shm_series, rss_series;
};

// Sorts the scenario's observations.
TimelineParts sort_timeline(const ScenarioResult& sc,
                            const std::map<long long, std::size_t>& lane_of);

// Spreads labels over a few rows so phases a few ms apart (job_exited,
// settle, teardown) stay readable: sorts `lines` by time, sets each one's
// row (at most 4 rows, labels estimated at 6.2 px a character) and returns
// the number of rows used (at least 1).
int stagger(std::vector<VLine>& lines, const Scale& s);

}  // namespace aftermath::svg
