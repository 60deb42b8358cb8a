// Statistics over the repeated runs of each scenario (--repeat N): how often a
// bug reproduced (or a scenario failed), with a confidence interval, whether
// the runs agree, and each timing's distribution.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "harness/core/result.h"

namespace aftermath {

// The 95% Wilson score interval for k successes in n trials; {0, 1} when n <= 0.
std::pair<double, double> wilson_interval(int k, int n);

// One Aggregate per scenario name, in first-seen order: runs, verdict counts,
// the rate (see Aggregate: reproduced runs of a scenario that expects failure,
// else failed runs, over the runs not skipped) with its Wilson interval, each
// distinct outcome (verdict + failed checks) with its run numbers, flakiness
// (more than one outcome), and each timing's min/median/p95/max over the runs
// that have it (nearest-rank percentiles; a run without a timing is left
// out). A run's number is its run_index + 1 when it is one of several, else
// its position among the scenario's results.
std::vector<Aggregate> aggregate(const std::vector<ScenarioResult>& results);

// What the rate counts: "reproduced" when the scenario expects failure, else "failed".
std::string rate_counts(const Aggregate& a);

// The rate as a person reads it: "reproduced 3/5 (60%, 95% interval 23–88%)",
// "failed 0/4 (0%, 95% interval 0–49%)"; with skipped runs "..., 1 skipped";
// "not judged: 5/5 skipped" when no run was judged.
std::string rate_text(const Aggregate& a);

// Each outcome and how often it occurred, most frequent first (first seen on
// a tie), every run number listed: "3/5 xfail on no_hang (runs 1, 2, 4);
// 2/5 xpass with no failed check (runs 3, 5)".
std::string outcomes_text(const Aggregate& a);

}  // namespace aftermath
