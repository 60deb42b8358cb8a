// JUnit XML for CI dashboards (Jenkins, GitLab). One <testsuite> per
// scenario, one <testcase> per check. It renders RunResult and never decides
// anything itself: an expected failure that reproduced is a passing testcase
// because the verdict says so, not because this file re-derives it.
#pragma once

#include <string>

#include "harness/core/result.h"

namespace aftermath {

std::string write_junit(const RunResult& run);

}  // namespace aftermath
