// The timeline's lanes: one per job process, grouped by role, with its life,
// orphan and zombie spans, its exit, and the signals and faults aimed at it;
// plus a row for faults with no job-process target and one for signals to
// other pids.
#pragma once

#include <string>
#include <vector>

#include "reports/svg.h"
#include "reports/timeline_order.h"
#include "reports/view.h"

namespace aftermath::svg {

// A lane's tooltip: role, pid, comm, rank/worker, command line, its life's
// instants, outcome, orphan and zombie spans, one per line.
std::string process_title(const report::ProcessView& p);

// A lane's label: "role pid rN wN comm" (a star for the top process), cut to
// the label column (shorter when the lane links its logs).
std::string lane_label(const report::ProcessView& p);

// Where the lanes are drawn and what with.
struct LaneContext {
  const ScenarioResult& scenario;
  const Scale& scale;
  const TimelineParts& parts;
  std::string clipped;     // opens the group clipped to the plot (closed by "</g>")
  std::string report_dir;  // for the log links (report::log_href)
};

// The lanes of `procs` (in lane order: lane i is procs[i]), from y down,
// after the stray-faults row and before the stray-signals row (each only when
// it has something); advances y past them. With no process, a line saying so.
std::string draw_lanes(const LaneContext& c, const std::vector<report::ProcessView>& procs,
                       double& y);

}  // namespace aftermath::svg
