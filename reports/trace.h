// trace.json: a run as Chrome trace events (the JSON Object Format), for
// Perfetto (ui.perfetto.dev, "Open trace file") and chrome://tracing.
//
// Layout: each scenario is one trace process (pid = its 1-based index, named
// after the scenario); each job process is one track (tid = its real pid,
// named "<role> <pid> <comm>", sorted by role). A process's life is a
// complete event ("X"), with its orphaned span nested inside; a zombie span
// follows it. Exits, harness signals and faults are thread-scoped instants,
// phases are process-scoped instants on the scenario's "harness" track
// (kTraceHarnessTid), and the job process count and /dev/shm bytes are counters.
// Timestamps are microseconds since the scenario's launch, so scenarios
// overlay at 0 and compare at a glance. Rendered from the typed run (a
// result.json read back renders the same).
#pragma once

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace aftermath {

// The harness's own track in each scenario: phases, counters, shm events,
// and signals or faults aimed at a pid that is not a job process. Above any
// Linux pid (pid_max is at most 2^22), and not 0, which trace viewers treat as
// the idle "swapper" thread.
constexpr long long kTraceHarnessTid = 1LL << 30;

// {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}.
nlohmann::json render_trace(const RunResult& run);

}  // namespace aftermath
