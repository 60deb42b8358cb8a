// Statistics over the repeated runs of each scenario (--repeat N): how often a
// bug reproduced, with a confidence interval, and each timing's distribution.
#pragma once

#include <utility>
#include <vector>

#include "harness/core/result.h"

namespace aftermath {

// The 95% Wilson score interval for k successes in n trials; {0, 1} when n <= 0.
std::pair<double, double> wilson_interval(int k, int n);

// One Aggregate per scenario name, in first-seen order: runs, verdict counts,
// the reproduction rate (xfail runs) with its Wilson interval, flakiness (more
// than one verdict), and each timing's min/median/p95/max over the runs that
// have it (nearest-rank percentiles; a run without a timing is left out).
std::vector<Aggregate> aggregate(const std::vector<ScenarioResult>& results);

}  // namespace aftermath
