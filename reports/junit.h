// JUnit XML for CI dashboards (Jenkins, GitLab). One <testsuite> per
// scenario, one <testcase> per check; a scenario whose job is a pytest suite
// that reported its tests gets a second <testsuite> ("NAME (pytest tests)")
// with one <testcase> per test, named as pytest names it, and what the test
// left behind as its <failure>. It renders a run's result and never
// decides anything itself: an expected failure that reproduced is a
// passing testcase because the verdict says so, not because this file
// re-derives it.
#pragma once

#include <string>

#include "harness/core/result.h"

namespace aftermath {

// junit.xml of a run: this run's, or one read back from its result.json
// (reports/result_read.h: downloaded from CI, a merge of shards), which
// renders the same file byte for byte. Verdicts and check statuses are the
// run's enums, so nothing here can show green for what it cannot read.
std::string render_junit(const RunResult& run);

}  // namespace aftermath
