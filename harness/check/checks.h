// The check catalogue: pure functions of a timeline. No check touches the OS,
// so each is unit-tested on a hand-made Timeline.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/check/check_params.h"
#include "harness/check/registry.h"
#include "harness/check/scenario_load.h"
#include "harness/check/verdict.h"
#include "harness/core/result.h"
#include "harness/core/timeline.h"
#include "harness/scenario/scenario.h"

namespace aftermath {

// What every check sees.
struct CheckInput {
  const Scenario& scenario;
  const Timeline& timeline;
  const std::vector<ProcessHistory>& processes;
  // Where the job's own behaviour ends and the harness's teardown begins
  // (the "teardown" phase; the end of the timeline if there is none).
  Nanos teardown_at = 0;
  Nanos end_at = 0;  // the last observation
  Nanos grace(const std::string& check) const;
  // For a process of this role: the check's grace for the role, else the
  // scenario's for the role, else the check's, else the scenario's.
  Nanos grace(const std::string& check, Role role) const;
};

CheckInput make_check_input(const Scenario& sc, const Timeline& tl,
                            const std::vector<ProcessHistory>& procs);

// Runs one known check. An unknown name or an exception inside the check
// yields status Error with the reason, never a throw.
CheckResult run_check(const std::string& name, const CheckInput& in);

// Runs every enabled check of the scenario, in known_checks() order, and
// marks the ones the scenario expects to fail.
std::vector<CheckResult> run_checks(const Scenario& sc, const Timeline& tl,
                                    const std::vector<ProcessHistory>& procs);

}  // namespace aftermath
