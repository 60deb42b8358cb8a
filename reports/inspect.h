// What `aftermath inspect` and `aftermath reap` print: the inspection's table
// for people and its JSON for CI, and reap's plan (or what it did) likewise.
// Renders harness/hygiene's types and decides nothing.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "harness/hygiene/hygiene.h"
#include "harness/hygiene/reap.h"

namespace aftermath {

// The human table: GPUs, processes holding GPUs or /dev/shm, /dev/shm and
// temp-dir entries, fault cgroups, notes, and the verdict ("CLEAN: ..." or
// "NOT CLEAN: N problem(s)" with one line each).
std::string inspect_table(const InspectReport& report);

// The JSON document for CI (schema: {"clean", "problems", "notes", "gpus",
// "processes", "shm", "tmp", "cgroups", "uninspected", "roots", ...}).
nlohmann::json inspect_json(const InspectReport& report);

// The plan, or what was done, as text.
std::string format_reap_plan(const ReapPlan& plan, bool executed);
// The plan as JSON: {"steps": [...], "untouched": [...]}.
nlohmann::json reap_plan_json(const ReapPlan& plan);

}  // namespace aftermath
