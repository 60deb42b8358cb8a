// Comparing two runs (two result.json documents), scenario by scenario,
// matched by name: verdict changes, check status changes, and every timing
// with both values and the delta. Meant for "did my change alter shutdown
// behaviour?" and for comparing a run against a stored baseline.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace aftermath {

// Plain text, one block per scenario present in either run, in a's order
// then b's new ones. Timing deltas are b - a, in ms and in percent of a.
std::string render_diff(const nlohmann::json& a, const nlohmann::json& b);

// True when the runs differ in anything render_diff flags as a change: a
// scenario's verdict, a check's status (a check present in only one run
// counts), or a scenario present in only one run. Timings never count: they
// vary from run to run by nature.
bool runs_differ(const nlohmann::json& a, const nlohmann::json& b);

}  // namespace aftermath
