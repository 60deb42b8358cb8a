// What a process was doing while alive, as /proc showed it: the spans in
// which it was stopped (T, t: SIGSTOP, a debugger) or in uninterruptible
// sleep (D: in the kernel, on a disk or a driver), from the timeline's
// proc_state observations. Running and sleeping are the plain life bar; a
// zombie has its own span (processes[].zombie_since_ms).
//
// The harness records a proc_state entry when a process's state letter
// changes between two /proc samples, so a span starts at the first sample
// that saw the state and ends at the first one that saw another (or at the
// end of the process's life).
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "reports/timeline_order.h"

namespace aftermath::svg {

struct StateSpan {
  double t0 = 0, t1 = 0;
  char state = '?';  // the letter that opened the span (T and t share one)
};

// The CSS class of the bar for a state letter: "stopped" for T and t,
// "uninterruptible" for D; nullptr for every other state (not drawn apart).
const char* state_class(char state);

// The stopped and uninterruptible spans of one process from its proc_state
// marks (any order; a mark without a state letter is skipped), each ending at the next entry of
// another class, else at `until` (the end of its life, or of the record). Spans never end before
// they start.
std::vector<StateSpan> state_spans(const std::vector<StateMark>& states, double until);

// When the harness's own debugger stops the job's processes one by one to
// take their stacks: from the "diagnose" phase to the next phase (teardown),
// or to the end of the record; nullopt for a run that took no diagnosis. A
// traced stop (t) in it is the harness's doing, and the bar says so.
std::optional<std::pair<double, double>> diagnose_window(const std::vector<VLine>& vlines,
                                                         double end);

}  // namespace aftermath::svg
