// Comparing two runs (two result.json documents, read back into RunResults),
// scenario by scenario:
// verdict changes, check status changes, and every timing with both values
// and the delta. Meant for "did my change alter shutdown behaviour?" and for
// comparing a run against a stored baseline.
//
// Scenarios pair by name and, with --repeat, run number (run 2 with run 2).
// A pair whose fault plans differ (the faults as written: action, target,
// trigger) is a different experiment under the same name: the diff says so
// and does not compare its timings.
#pragma once

#include <string>

#include "harness/core/result.h"

namespace aftermath {

// Plain text, one block per scenario present in either run, in a's order
// then b's new ones. Timing deltas are b - a (timing_delta). With --repeat on
// either side, each scenario's first block also shows its rate over all runs
// on both sides.
std::string render_diff(const RunResult& a, const RunResult& b);

// True when the runs differ in anything render_diff flags as a change: a
// scenario's verdict, a check's status (a check present in only one run
// counts), its fault plan, or a scenario present in only one run. Timings
// never count: they vary from run to run by nature.
bool runs_differ(const RunResult& a, const RunResult& b);

// The change from a_ms to b_ms: "+50.0 ms (+25.0%)", "+1.89 s" from a second
// on. The percentage of a only where it means something: both values
// non-zero, a at least 1 ms, and at most 1000% either way; else the delta
// stands alone.
std::string timing_delta(double a_ms, double b_ms);

}  // namespace aftermath
