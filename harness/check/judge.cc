#include "harness/check/judge.h"

#include "harness/check/checks.h"
#include "harness/check/per_test_checks.h"
#include "harness/check/verdict.h"

namespace aftermath {

void decide(ScenarioResult& r, const Scenario& sc) {
  Decision d = fault_verdict(r.timeline.facts.faults).value_or(decide_verdict(sc, r.checks));
  r.verdict = d.verdict;
  r.verdict_reason = std::move(d.reason);
  auto t = compute_timings(r.timeline, r.processes);
  r.timings_ms = std::move(t.ms);
  r.timings_origin = t.origin;
}

void judge(ScenarioResult& r, const Scenario& sc, bool interrupted) {
  r.checks = run_checks(sc, r.timeline, r.processes);
  r.tests = judge_tests(make_check_input(sc, r.timeline, r.processes));
  decide(r, sc);
  if (interrupted) {
    r.verdict = Verdict::Error;
    r.error = "interrupted";
    r.verdict_reason = "the run was interrupted";
  }
  for (const auto& ev : r.timeline.observations) {
    if (const auto* f = harness_failed(ev, HarnessPart::Teardown)) {
      r.verdict = Verdict::Error;
      r.error = "teardown failed: " + f->why;
      r.verdict_reason = r.error;
    }
  }
}

}  // namespace aftermath
