// result.json read back into the RunResult it was written from: the inverse
// of to_json(RunResult) (reports/json.cc), so `aftermath report`, `diff` and
// `merge` work on the typed result, and a document that is not one (a field
// of the wrong type, a verdict or check status no version wrote, a newer
// schema) is refused with the field's path instead of rendering as
// "unknown".
//
// What result.json leaves out comes back as its default: the captured stdout,
// the stall window, the reaper's pid, a process's last state; the GPU
// samples' process lists but each GPU's last (which result.json keeps). So
// to_json(read_result(doc)) is `doc` again for a document this version
// wrote (tests/unit/result_read_test.cc), and a document an earlier release
// wrote reads with its missing fields as their defaults: a field is
// required only where every release wrote it.
#pragma once

#include <nlohmann/json.hpp>

#include "harness/core/result.h"
#include "harness/os/expected.h"

namespace aftermath {

// The error names the field: "scenarios[1].checks[0].status has an unknown
// value \"maybe\"", "schema_version 2 is newer than this build reads (1)".
Expected<RunResult> read_result(const nlohmann::json& doc);

}  // namespace aftermath
