// What became of a run's faults, settled after the run from the timeline:
// when each took effect, and why each that never acted did not. Pure, so
// both are tested on hand-made records.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "harness/core/timeline.h"
#include "harness/scenario/fault.h"

namespace aftermath {

// For each injected fault that ends or stops its targets (the signals that
// do, host_oom): `effect` is the first exit (SIGSTOP: stop) of one of its
// targets at or after it was sent. `events` sorted by time.
void settle_fault_effects(std::vector<FaultRecord>& faults, const std::vector<Observation>& events);

// How the run ended for the faults still waiting.
struct UnfiredContext {
  size_t next_fault = 0;      // the first fault that never fired (faults fire in order)
  bool job_ended = false;     // the top process exited
  bool deadline_hit = false;  // else: the deadline passed (or the run was cut short)
  std::map<std::string, long long> point_hits;  // point name -> times reached
};

// Sets the reason of every fault still NotTriggered: not reached (an
// earlier one never fired), its target never appeared, its point never
// reached or never matched, or its trigger never came.
void explain_unfired_faults(std::vector<FaultRecord>& faults, const std::vector<FaultSpec>& specs,
                            const UnfiredContext& ctx);

}  // namespace aftermath
