// From check results and fault records to the scenario's verdict, and the
// recovery timings a report shows beside it. Pure functions of their inputs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/result.h"
#include "harness/core/timeline.h"
#include "harness/scenario/scenario.h"

namespace aftermath {

// The verdict against the expectation:
//   any check error                    -> error
//   expect pass: no failure            -> pass, else fail
//   expect fail L, failed set F:  F == L -> xfail;  F a strict subset of L -> xpass;
//                                  anything failed outside L -> fail
// A verdict and the one line that says why.
struct Decision {
  Verdict verdict = Verdict::Error;
  std::string reason;
};
Decision decide_verdict(const Scenario& sc, const std::vector<CheckResult>& checks);

// What the scenario's faults make of the verdict. A scenario whose fault
// never acted did not stage what it says, so its checks prove nothing:
//   a fault that failed or never fired (no matching process, a point never
//   reached, a trigger that never came)          -> error
//   a fault whose mechanism is unavailable here  -> skipped
// Faults marked `optional: true` are left out. nullopt: every fault acted.
std::optional<Decision> fault_verdict(const std::vector<FaultRecord>& faults);

// Recovery timings in ms (nullopt where not reached), and what they count from.
struct Timings {
  std::map<std::string, std::optional<double>> ms;
  TimingsOrigin origin = TimingsOrigin::None;
};
Timings compute_timings(const Timeline& tl, const std::vector<ProcessHistory>& procs);

}  // namespace aftermath
