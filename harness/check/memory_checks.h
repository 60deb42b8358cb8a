// memory_growth: does a process's memory grow with every step it takes?
// A pure function of the timeline, like every check, over the "memory"
// events a job sends (the Python fixtures send one per batch from each
// DataLoader worker with --memory-events; any job can, through the points
// client):
//
//   memory {rss_kb, pss_kb, step, ...}     from the process it describes
//
// For each process that sent enough of them, the slope of the chosen field
// (pss_kb by default) against step, in KB per step, is the Theil-Sen
// estimate: the median of the slopes between every pair of points, so a
// one-off jump (a worker forked beside it, a gc pass, a batch in flight)
// does not make a trend (up to ~29% of outlying pairs: a step that splits
// the series near its middle still reads as growth). The least-squares
// slope is measured beside it.
// Fails when any judged process grows faster than max_kb_per_step.
//
// PSS, not RSS, is the default on purpose: pages a forked worker inherits
// count in its RSS from the start; copy-on-read (pytorch#13246: reading
// Python objects bumps their refcounts, so the pages are copied) turns
// them private without adding to RSS at all, and only PSS shows it.
#pragma once

#include <optional>
#include <string>

#include "harness/check/check_params.h"
#include "harness/check/checks.h"

namespace aftermath {

// Its parameters (MemoryGrowthParams, check_params.h) come from a scenario's
//   checks: {memory_growth: {max_kb_per_step: 256, field: pss_kb, skip_steps: 0,
//                            min_points: 4, role: worker}}
// every key optional, read by the registry (registry.cc).

// Judged with the given params. Skipped (with the reason) when the job sent
// no "memory" events, or no process sent min_points of them.
// Measured: threshold, field, judged, steepest, and per process: pid, role,
// rank, worker, points, first/last step, first/last value (KB), growth_kb,
// slope_kb_per_step (Theil-Sen), ls_slope_kb_per_step, over.
CheckResult memory_growth(const CheckInput& in, const MemoryGrowthParams& params);

// With the default params.
CheckResult memory_growth(const CheckInput& in);

}  // namespace aftermath
