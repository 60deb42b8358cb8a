// result.json: the machine-readable record of a run and the source of truth
// every other report (JUnit, HTML, the console summary) agrees with. Its shape
// is versioned by "schema_version"; consumers must key on names, never on
// field order.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "harness/core/fields_json.h"  // to_json(Outcome)
#include "harness/core/result.h"
#include "harness/core/timeline.h"
#include "harness/core/types.h"

namespace aftermath {

// How much of the top process's stderr goes into reports: enough to show a
// crash message and a backtrace head without bloating result.json.
constexpr std::size_t kStderrTailBytes = 2000;

// The whole result document.
nlohmann::json to_json(const RunResult& run);

// result.json's "summary": the number of scenarios and of each verdict
// ({scenarios, pass, fail, xfail, xpass, error, skipped}).
nlohmann::json summary_json(const RunResult& run);
// to_json(run).dump(2) + "\n". Invalid UTF-8 (raw bytes from crashing
// programs) is replaced by U+FFFD rather than throwing.
std::string write_json(const RunResult& run);

// One timeline entry: "t_ms", "kind", and only the fields meaningful for the kind.
nlohmann::json to_json(const Observation& o);
nlohmann::json to_json(const ProcessHistory& p);
nlohmann::json to_json(const FaultRecord& f);
nlohmann::json to_json(const ProcessDiagnosis& d);
// One node of a multi-node run: {index, host, address, agent, lost_ms,
// clock: {offset_ms, uncertainty_ms, round_trip_ms, samples}, started_ms,
// verdict, verdict_reason, processes, out_dir, checks}.
nlohmann::json to_json(const NodeResult& n);
// One pytest test: {nodeid, worker, pid, start_ms, end_ms (null: never
// ended), outcome, processes: [pid...], leaks: [{kind, what, pid (not for
// shm), name and bytes (shm: the entry; device: "GPU N")}]}.
nlohmann::json to_json(const TestResult& t);
// One scenario's statistics over its repeated runs: {name, runs, verdicts,
// flaky, expects_failure, reproduced, failed, skipped, judged, rate_counts,
// reproduction_rate, rate_ci95, outcomes, timings_ms}.
nlohmann::json to_json(const Aggregate& a);

// result.json's "merge": {inputs: [{path, scenarios, shard ("I/N" or null),
// command_line, tool_version}], and for shards of one run: shards {count,
// total}, complete, missing_shards, missing_positions, repeated_positions,
// incomplete}.
nlohmann::json to_json(const MergeRecord& m);

// The last max_bytes bytes of text, moved forward past any UTF-8 continuation
// bytes so the cut never splits a character.
std::string utf8_tail(std::string_view text, std::size_t max_bytes = kStderrTailBytes);

}  // namespace aftermath
