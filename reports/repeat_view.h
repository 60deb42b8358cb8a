// The repeat statistics (the run's aggregates, written with --repeat N) as the
// human-facing renderers show them: each scenario's runs, verdicts, rate with
// its interval and, for a flaky one, the outcomes that occurred.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "harness/core/result.h"

namespace aftermath::report {

// A run's name as listed: "hang run 2/5" for one of several runs, else the
// name.
std::string run_label(const ScenarioResult& scenario);

// How many scenarios ran, in words: "6 scenarios"; with repeats "2
// scenarios, 3 runs each" ("..., 3-5 runs each" when the counts differ, as
// after an interruption).
std::string scenarios_text(const RunResult& run);

// The order every report lists verdicts in.
inline constexpr Verdict kVerdictOrder[] = {Verdict::Pass,  Verdict::XFail, Verdict::Fail,
                                            Verdict::XPass, Verdict::Error, Verdict::Skipped};

// How many of the run's scenarios had each verdict (those that occurred).
std::map<Verdict, int> verdict_counts(const RunResult& run);

// The counts above 0 in that order: "3 xfail, 2 xpass"; "" when none.
std::string counts_text(const std::map<Verdict, int>& counts);

// An aggregate's verdict counts so: "3 xfail, 2 xpass"; "-" when none.
std::string verdicts_text(const Aggregate& a);

// The all-gone time's distribution, "10.0 ms / 20.0 ms / 30.0 ms / 1.50 s"
// (min / median / p95 / max), or "-" when no run reached it.
std::string all_gone_text(const Aggregate& a);

}  // namespace aftermath::report
