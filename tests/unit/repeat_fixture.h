// Shared by the tests of what --repeat shows (summary, HTML, JUnit, JSON,
// diff): a run of two scenarios, five runs each, built by hand.
//
//   hang  (expects "fail: no_hang"): runs 1, 2, 4 xfail on no_hang; runs 3, 5
//         xpass with no failed check: reproduced 3/5, flaky.
//   leaky (expects pass): runs 1, 3 fail on shm_clean, run 2 fails on
//         no_orphans, runs 4, 5 pass: failed 3/5, flaky although runs 1-3
//         share a verdict.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "harness/core/repeat_stats.h"
#include "harness/core/result.h"

namespace aftermath::testing_repeats {

inline CheckResult check(const std::string& name, CheckStatus status) {
  CheckResult c;
  c.name = name;
  c.status = status;
  c.reason = name + (status == CheckStatus::Pass ? " passed" : " failed");
  return c;
}

// A scenario's expectation by its text ("pass", "fail: no_hang").
inline ExpectedChecks expect_of(const std::string& text) { return *parse_expected_checks(text); }

// Run `index` (0-based) of 5 of a scenario; `failing` names its failed checks.
inline ScenarioResult repeat_run(const std::string& name, const std::string& expect, int index,
                                 Verdict verdict, const std::vector<std::string>& checks,
                                 const std::vector<std::string>& failing, double gone_ms) {
  ScenarioResult r;
  r.name = name;
  r.file = "scenarios/" + name + ".yaml";
  r.expect = expect_of(expect);
  r.verdict = verdict;
  r.verdict_reason = std::string(to_string(verdict));
  r.run_index = index;
  r.runs = 5;
  r.out_dir = "/out/" + name + "/run-" + std::to_string(index + 1);
  for (const auto& c : checks) {
    bool fails = std::find(failing.begin(), failing.end(), c) != failing.end();
    r.checks.push_back(check(c, fails ? CheckStatus::Fail : CheckStatus::Pass));
    if (fails && expect != "pass") r.checks.back().expected_to_fail = true;
  }
  r.timings_ms["to_all_gone_ms"] = gone_ms;
  r.timings_ms["total_ms"] = 1000.0 + index;
  return r;
}

inline RunResult repeated_run() {
  RunResult run;
  run.tool_version = "0.1.0";
  run.command_line = "aftermath run --repeat 5 scenarios/hang.yaml scenarios/leaky.yaml";
  const std::vector<std::string> hang_checks = {"all_exited", "no_hang"};
  const std::string hang_expect = "fail: no_hang";
  const std::vector<std::string> leaky_checks = {"shm_clean", "no_orphans"};
  run.scenarios = {
      repeat_run("hang", hang_expect, 0, Verdict::XFail, hang_checks, {"no_hang"}, 10),
      repeat_run("hang", hang_expect, 1, Verdict::XFail, hang_checks, {"no_hang"}, 20),
      repeat_run("hang", hang_expect, 2, Verdict::XPass, hang_checks, {}, 30),
      repeat_run("hang", hang_expect, 3, Verdict::XFail, hang_checks, {"no_hang"}, 40),
      repeat_run("hang", hang_expect, 4, Verdict::XPass, hang_checks, {}, 1500),
      repeat_run("leaky", "pass", 0, Verdict::Fail, leaky_checks, {"shm_clean"}, 5),
      repeat_run("leaky", "pass", 1, Verdict::Fail, leaky_checks, {"no_orphans"}, 6),
      repeat_run("leaky", "pass", 2, Verdict::Fail, leaky_checks, {"shm_clean"}, 7),
      repeat_run("leaky", "pass", 3, Verdict::Pass, leaky_checks, {}, 8),
      repeat_run("leaky", "pass", 4, Verdict::Pass, leaky_checks, {}, 9),
  };
  run.aggregates = aggregate(run.scenarios);
  return run;
}

// What each renderer must show for them.
inline constexpr const char* kHangRate = "reproduced 3/5 (60%, 95% interval 23\u201388%)";
inline constexpr const char* kHangOutcomes =
    "3/5 xfail on no_hang (runs 1, 2, 4); 2/5 xpass with no failed check (runs 3, 5)";
inline constexpr const char* kLeakyRate = "failed 3/5 (60%, 95% interval 23\u201388%)";
inline constexpr const char* kLeakyOutcomes =
    "2/5 fail on shm_clean (runs 1, 3); 2/5 pass with no failed check (runs 4, 5); 1/5 fail on "
    "no_orphans (run 2)";

}  // namespace aftermath::testing_repeats
