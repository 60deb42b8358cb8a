// What `aftermath run` prints on the terminal while and after it runs: the
// live status line, the verdict table, the repeat statistics.
#pragma once

#include <string>
#include <vector>

#include "harness/core/result.h"
#include "harness/scenario/scenario.h"
#include "harness/supervise/supervisor.h"

namespace aftermath {

// One status line for scenario `sc`. On a terminal (`tty`) the line is
// rewritten in place; otherwise one line is printed per phase change. The
// caller serialises calls (parallel runs report from their own threads).
void print_status(const Scenario& sc, const LiveStatus& status, bool tty);

// One line per scenario when it ends: "[name run i/N] verdict: reason", and
// its containment note after its first run. `live_line`: clear a status line.
void print_scenario_done(const ScenarioResult& r, bool live_line);

// One line per pytest test of `r` that left something behind (at most three
// of its leaks named): "test tests/t.py::test_x [gw1] left orphan: worker 81
// (python3) outlived its parent by 4.9s; zombie: ...". Empty without tests.
std::vector<std::string> leaking_test_lines(const ScenarioResult& r);

// The verdict table (colours on a terminal), a line under a scenario for each
// of its leaking pytest tests, and the count of each verdict.
void print_table(const RunResult& run, bool tty);

// Per scenario over its repeated runs: verdict counts, FLAKY, the rate
// (rate_text: reproduced or failed k/n with its 95% interval), the all-gone
// time's distribution; under a flaky scenario, a line naming each outcome
// (verdict and failed checks) with its runs (outcomes_text).
void print_aggregates(const RunResult& run);

}  // namespace aftermath
