#include "reports/junit.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "harness/core/repeat_stats.h"
#include "reports/escape.h"
#include "reports/json.h"
#include "reports/repeat_view.h"
#include "reports/view.h"

namespace aftermath {

namespace {

using nlohmann::json;

std::string attr(std::string_view text) { return xml_escape(text, true); }

// Times in JUnit (and our timing properties) are fixed at 3 decimals.
std::string fixed3(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

struct Counts {
  int tests = 0;
  int failures = 0;
  int errors = 0;
  int skipped = 0;
  void add(const Counts& o) {
    tests += o.tests;
    failures += o.failures;
    errors += o.errors;
    skipped += o.skipped;
  }
};

void property(std::string& out, const char* indent, std::string_view name, std::string_view value) {
  out += indent;
  out += "<property name=\"" + attr(name) + "\" value=\"" + attr(value) + "\"/>\n";
}

// With --repeat, each run is its own suite: "name [run 2/5]".
std::string suite_name(const ScenarioResult& s) {
  if (s.runs <= 1) return s.name;
  return s.name + " [run " + std::to_string(s.run_index + 1) + "/" + std::to_string(s.runs) + "]";
}

// The start of a testcase element of scenario `s`: `open` + name + `close_open`.
struct Testcase {
  std::string open;
  std::string close_open = "\" time=\"0.000\"";
  explicit Testcase(const ScenarioResult& s)
      : open("    <testcase classname=\"" + attr("aftermath." + suite_name(s)) + "\" name=\"") {}
};

// One testcase per check.
void check_testcases(const ScenarioResult& s, const Testcase& t, Counts& n, std::string& body) {
  const std::string& open = t.open;
  const std::string& close_open = t.close_open;
  for (const CheckResult& c : s.checks) {
    ++n.tests;
    const std::string& reason = c.reason;
    std::string tc = open + attr(c.name) + close_open;
    switch (c.status) {
      case CheckStatus::Pass:
        if (c.expected_to_fail) {
          ++n.failures;
          tc += ">\n      <failure message=\"expected failure did not reproduce\" type=\"xpass\">" +
                xml_escape(reason) + "</failure>\n    </testcase>\n";
        } else {
          tc += "/>\n";
        }
        break;
      case CheckStatus::Fail:
        if (c.may_fail && !c.expected_to_fail) {
          // A failure the scenario says a known race makes in some runs: the
          // verdict is not red for it, and neither is CI.
          tc += ">\n      <properties>\n";
          property(tc, "        ", "may_fail", "failed");
          tc += "      </properties>\n      <system-out>failed, as the scenario says it may: " +
                xml_escape(reason) + "</system-out>\n    </testcase>\n";
        } else if (c.expected_to_fail) {
          // A reproduced expected failure is a pass for CI; the property lets
          // Jenkins show it, the system-out makes it visible in GitLab.
          tc += ">\n      <properties>\n";
          property(tc, "        ", "expected_failure", "reproduced");
          tc += "      </properties>\n      <system-out>expected failure reproduced: " +
                xml_escape(reason) + "</system-out>\n    </testcase>\n";
        } else {
          ++n.failures;
          tc += ">\n      <failure message=\"" + attr(reason) + "\" type=\"fail\">" +
                xml_escape(c.measured.dump(2, ' ', false, json::error_handler_t::replace)) +
                "</failure>\n    </testcase>\n";
        }
        break;
      case CheckStatus::Skipped:
        ++n.skipped;
        tc += ">\n      <skipped message=\"" + attr(reason) + "\"/>\n    </testcase>\n";
        break;
      case CheckStatus::Error:
        ++n.errors;
        tc +=
            ">\n      <error message=\"" + attr(reason) + "\" type=\"error\"/>\n    </testcase>\n";
        break;
    }
    body += tc;
  }
}

void fault_testcases(const ScenarioResult& s, const Testcase& t, Counts& n, std::string& body) {
  const std::string& open = t.open;
  const std::string& close_open = t.close_open;
  // A fault that did not act makes the verdict: CI shows it as its own
  // testcase (an error, or skipped where its mechanism is unavailable here).
  for (const FaultRecord& f : s.timeline.facts.faults) {
    if (f.optional || f.status == FaultStatus::Injected) continue;
    ++n.tests;
    std::string name = "fault " + std::to_string(f.index + 1) + " (" +
                       std::string(to_string(f.action)) + " " + f.target + ")";
    if (f.status == FaultStatus::Skipped) {
      ++n.skipped;
      body += open + attr(name) + close_open + ">\n      <skipped message=\"" + attr(f.reason) +
              "\"/>\n    </testcase>\n";
    } else {
      ++n.errors;
      body += open + attr(name) + close_open + ">\n      <error message=\"" + attr(f.reason) +
              "\" type=\"fault_" + attr(to_string(f.status)) + "\"/>\n    </testcase>\n";
    }
  }
}

// The testcases of the run itself: a harness error, requirements not met, and
// a red verdict no testcase above carries.
void run_testcases(const ScenarioResult& s, const Testcase& t, Counts& n, std::string& body) {
  const std::string& open = t.open;
  const std::string& close_open = t.close_open;
  if (!s.error.empty()) {
    // The run itself broke: its checks (if any) saw a partial timeline, so CI
    // needs a red testcase of its own, with the job's last words attached.
    const std::string stderr_tail = utf8_tail(s.timeline.facts.stderr_text);
    ++n.tests;
    ++n.errors;
    body += open + "run" + close_open + ">\n      <error message=\"" + attr(s.error) +
            "\" type=\"error\"/>\n";
    if (!stderr_tail.empty())
      body += "      <system-err>" + xml_escape(stderr_tail) + "</system-err>\n";
    body += "    </testcase>\n";
  }

  if (s.verdict == Verdict::Skipped && s.checks.empty()) {
    // Not launched: a requirement is not met on this machine.
    ++n.tests;
    ++n.skipped;
    body += open + "requirements" + close_open + ">\n      <skipped message=\"" +
            attr(s.verdict_reason) + "\"/>\n    </testcase>\n";
  }

  // Safety net: CI must never show green for a red verdict. If no child above
  // carries the verdict (e.g. an expected check that never ran), say it here.
  const bool red =
      s.verdict != Verdict::Pass && s.verdict != Verdict::XFail && s.verdict != Verdict::Skipped;
  if (red && n.failures == 0 && n.errors == 0) {
    ++n.tests;
    const bool is_error = s.verdict != Verdict::Fail && s.verdict != Verdict::XPass;
    (is_error ? n.errors : n.failures)++;
    const std::string tag = is_error ? "error" : "failure";
    body += open + "verdict" + close_open + ">\n      <" + tag + " message=\"" +
            attr(s.verdict_reason) + "\" type=\"" + attr(to_string(s.verdict)) +
            "\"/>\n    </testcase>\n";
  }
}

// With --repeat, every run's suite carries the statistics over all runs of
// its scenario, so a CI dashboard shows the rate beside any one run:
// aftermath.repeat.run ("2/5"), .runs, .failed, .reproduced (a scenario that
// expects failure), .rate and .interval95 (fractions, "0.600" and
// "0.231-0.882"; see Aggregate for what the rate counts), .summary (the
// sentence: "reproduced 3/5 (60%, 95% interval 23–88%)"), .flaky and, when
// flaky, .outcomes (each verdict and failed-check set with its runs).
void repeat_properties(const std::vector<Aggregate>& aggregates, const ScenarioResult& s,
                       std::string& props) {
  auto a = std::find_if(aggregates.begin(), aggregates.end(),
                        [&](const Aggregate& a) { return a.name == s.name; });
  if (a == aggregates.end()) return;
  const char* in = "      ";
  property(props, in, "aftermath.repeat.run",
           std::to_string(s.run_index + 1) + "/" + std::to_string(s.runs));
  property(props, in, "aftermath.repeat.runs", std::to_string(a->runs));
  property(props, in, "aftermath.repeat.failed", std::to_string(a->failed));
  if (a->expects_failure)
    property(props, in, "aftermath.repeat.reproduced", std::to_string(a->reproduced));
  if (a->skipped > 0) property(props, in, "aftermath.repeat.skipped", std::to_string(a->skipped));
  if (a->judged > 0) {
    property(props, in, "aftermath.repeat.rate", fixed3(a->rate));
    property(props, in, "aftermath.repeat.interval95",
             fixed3(a->rate_low) + "-" + fixed3(a->rate_high));
  }
  property(props, in, "aftermath.repeat.summary", rate_text(*a));
  property(props, in, "aftermath.repeat.flaky", a->flaky ? "true" : "false");
  if (a->flaky) property(props, in, "aftermath.repeat.outcomes", outcomes_text(*a));
}

Counts render_testcases(const ScenarioResult& s, std::string& body) {
  Counts n;
  const Testcase t(s);
  check_testcases(s, t, n, body);
  fault_testcases(s, t, n, body);
  run_testcases(s, t, n, body);
  return n;
}

// "tests/a/test_x.py::TestK::test_y[1]" -> classname "tests.a.test_x.TestK",
// name "test_y[1]", as pytest's own JUnit names it.
std::pair<std::string, std::string> junit_names(const std::string& nodeid) {
  size_t bracket = nodeid.find('[');  // parameters may hold "::" themselves
  size_t last = nodeid.rfind("::", bracket);
  if (last == std::string::npos) return {"", nodeid};
  std::string cls = nodeid.substr(0, last), name = nodeid.substr(last + 2);
  size_t file_end = cls.find("::");
  std::string file = cls.substr(0, file_end),
              rest = file_end == std::string::npos ? "" : cls.substr(file_end);
  if (file.size() > 3 && file.compare(file.size() - 3, 3, ".py") == 0) file.resize(file.size() - 3);
  std::replace(file.begin(), file.end(), '/', '.');
  for (size_t at; (at = rest.find("::")) != std::string::npos;) rest.replace(at, 2, ".");
  return {file + rest, name};
}

// A pytest suite run as the job: one testcase per test, what it left behind
// as its failure, so CI names the test. Empty when the result has no tests.
std::string pytest_suite(const ScenarioResult& s, Counts& total) {
  std::string body;
  Counts n;
  double secs = 0;
  for (const TestResult& t : s.tests) {
    ++n.tests;
    auto [cls, name] = junit_names(t.nodeid);
    double took = t.ended ? std::max(0.0, to_ms(*t.ended) - to_ms(t.started)) / 1000.0 : 0.0;
    secs += took;
    body += "    <testcase classname=\"" + attr(cls) + "\" name=\"" + attr(name) + "\" time=\"" +
            fixed3(took) + "\"";
    std::string inner;
    std::vector<std::string> whats;
    for (const TestLeak& l : t.leaks)
      whats.push_back(std::string(to_string(l.kind)) + ": " + l.what);
    if (!t.ended) {
      ++n.errors;
      inner += "      <error message=\"the run ended during this test\" type=\"unfinished\"/>\n";
    } else if (!whats.empty()) {
      ++n.failures;
      std::string all;
      for (const auto& w : whats) all += (all.empty() ? "" : "\n") + w;
      inner +=
          "      <failure message=\"" +
          attr("left behind: " + whats[0] +
               (whats.size() > 1 ? " (and " + std::to_string(whats.size() - 1) + " more)" : "")) +
          "\" type=\"leak\">" + xml_escape(all) + "</failure>\n";
    } else if (t.outcome == TestOutcome::Failed || t.outcome == TestOutcome::Error) {
      ++n.failures;
      inner += "      <failure message=\"the test " +
               std::string(t.outcome == TestOutcome::Error ? "errored" : "failed") +
               " in pytest\" type=\"pytest\"/>\n";
    } else if (t.outcome == TestOutcome::Skipped) {
      ++n.skipped;
      inner += "      <skipped message=\"skipped in pytest\"/>\n";
    }
    if (!t.worker.empty())
      inner += "      <system-out>pytest-xdist worker " + xml_escape(t.worker) + "</system-out>\n";
    body += inner.empty() ? "/>\n" : ">\n" + inner + "    </testcase>\n";
  }
  if (n.tests == 0) return "";
  total.add(n);
  return "  <testsuite name=\"" + attr(suite_name(s) + " (pytest tests)") + "\" tests=\"" +
         std::to_string(n.tests) + "\" failures=\"" + std::to_string(n.failures) + "\" errors=\"" +
         std::to_string(n.errors) + "\" skipped=\"" + std::to_string(n.skipped) + "\" time=\"" +
         fixed3(secs) + "\">\n" + body + "  </testsuite>\n";
}

}  // namespace

std::string render_junit(const RunResult& run) {
  Counts total;
  double total_seconds = 0;
  std::string suites;
  for (const ScenarioResult& s : run.scenarios) {
    auto total_ms = s.timings_ms.find("total_ms");
    double secs =
        total_ms != s.timings_ms.end() && total_ms->second ? *total_ms->second / 1000.0 : 0.0;
    total_seconds += secs;

    std::string props;
    property(props, "      ", "verdict", to_string(s.verdict));
    property(props, "      ", "verdict_reason", s.verdict_reason);
    property(props, "      ", "expect", to_string(s.expect));
    property(props, "      ", "seed", std::to_string(s.seed));
    property(props, "      ", "repro", s.repro);
    property(props, "      ", "file", s.file);
    property(props, "      ", "out_dir", s.out_dir);
    for (const auto& [key, value] : s.timings_ms) {
      // Omitted rather than "null": CI plots property values as numbers.
      if (value) property(props, "      ", "timing." + key, fixed3(*value));
    }
    repeat_properties(run.aggregates, s, props);

    std::string body;
    const Counts n = render_testcases(s, body);
    total.add(n);

    suites += "  <testsuite name=\"" + attr(suite_name(s)) + "\" tests=\"" +
              std::to_string(n.tests) + "\" failures=\"" + std::to_string(n.failures) +
              "\" errors=\"" + std::to_string(n.errors) + "\" skipped=\"" +
              std::to_string(n.skipped) + "\" time=\"" + fixed3(secs) + "\"";
    if (!s.started_at.empty()) suites += " timestamp=\"" + attr(s.started_at) + "\"";
    suites += ">\n    <properties>\n" + props + "    </properties>\n" + body + "  </testsuite>\n";
    suites += pytest_suite(s, total);
  }

  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"aftermath\" tests=\"" + std::to_string(total.tests) +
         "\" failures=\"" + std::to_string(total.failures) + "\" errors=\"" +
         std::to_string(total.errors) + "\" skipped=\"" + std::to_string(total.skipped) +
         "\" time=\"" + fixed3(total_seconds) + "\">\n";
  out += suites;
  out += "</testsuites>\n";
  return out;
}

}  // namespace aftermath
