// JUnit XML for CI dashboards (Jenkins, GitLab). One <testsuite> per
// scenario, one <testcase> per check. It renders RunResult and never decides
// anything itself: an expected failure that reproduced is a passing testcase
// because the verdict says so, not because this file re-derives it.
#pragma once

#include <string>
#include <string_view>

#include "harness/core/result.h"

namespace aftermath {

std::string write_junit(const RunResult& run);

// Escapes text for XML character data (& < >) or a quoted attribute value
// (also " and '), and makes arbitrary bytes legal in an XML 1.0 UTF-8
// document: characters XML 1.0 forbids (control characters other than tab,
// newline, carriage return; U+FFFE, U+FFFF; surrogates) are dropped and
// malformed UTF-8 becomes U+FFFD.
// In attribute mode tab/newline/CR become character references, because a
// parser would otherwise normalise them to spaces.
std::string xml_escape(std::string_view text, bool attribute = false);

}  // namespace aftermath
