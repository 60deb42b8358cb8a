// JUnit XML for CI dashboards (Jenkins, GitLab). One <testsuite> per
// scenario, one <testcase> per check; a scenario whose job is a pytest suite
// that reported its tests gets a second <testsuite> ("NAME (pytest tests)")
// with one <testcase> per test, named as pytest names it, and what the test
// left behind as its <failure>. It renders a result.json document and
// never decides anything itself: an expected failure that reproduced is a
// passing testcase because the verdict says so, not because this file
// re-derives it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "harness/core/result.h"

namespace aftermath {

// junit.xml from a result.json document: this run's, one downloaded from CI,
// or a merge of shards. Tolerant like reports/view.h: an absent or odd field
// degrades (no seed reads "0", no verdict reads "error"), nothing throws, and
// a verdict or check status this version does not know is red, never green.
std::string render_junit(const nlohmann::json& result);

// render_junit(to_json(run)): the one JUnit path, so a junit.xml rendered
// again from result.json is the one the run wrote.
std::string write_junit(const RunResult& run);

}  // namespace aftermath
