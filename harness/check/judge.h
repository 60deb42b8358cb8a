// Judging one run: what the checks, the verdict and the timings make of a
// finished timeline. The supervisor records; this layer judges, so the same
// judgement holds for a run on one machine and for each node of a multi-node
// run.
#pragma once

#include "harness/core/result.h"
#include "harness/scenario/scenario.h"

namespace aftermath {

// Judges `r` by its timeline and process histories (r.timeline, r.processes):
// every check, every pytest test's leaks, the verdict against the
// expectation, then what overrides it (a fault that never acted, an
// interrupted run, the harness's own failed teardown), and the recovery
// timings. `interrupted`: the user stopped the run.
void judge(ScenarioResult& r, const Scenario& sc, bool interrupted);

// The part of judge() that follows the checks: the verdict from `r.checks`
// against the expectation (a fault that never acted overrides it) and the
// recovery timings. A multi-node run, whose checks are its nodes' merged,
// is decided by this too.
void decide(ScenarioResult& r, const Scenario& sc);

}  // namespace aftermath
