#include "reports/junit.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "harness/core/repeat_stats.h"
#include "reports/escape.h"
#include "reports/json.h"

namespace aftermath {

namespace {

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

// Renders one scenario's testcases into body and counts exactly what it
// emitted, so the suite's attributes cannot drift from its children.
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
  for (const auto& c : s.checks) {
    ++n.tests;
    std::string tc = open + attr(c.name) + close_open;
    switch (c.status) {
      case CheckStatus::Pass:
        if (c.expected_to_fail) {
          ++n.failures;
          tc += ">\n      <failure message=\"expected failure did not reproduce\" type=\"xpass\">" +
                xml_escape(c.reason) + "</failure>\n    </testcase>\n";
        } else {
          tc += "/>\n";
        }
        break;
      case CheckStatus::Fail:
        if (c.expected_to_fail) {
          // A reproduced expected failure is a pass for CI; the property lets
          // Jenkins show it, the system-out makes it visible in GitLab.
          tc += ">\n      <properties>\n";
          property(tc, "        ", "expected_failure", "reproduced");
          tc += "      </properties>\n      <system-out>expected failure reproduced: " +
                xml_escape(c.reason) + "</system-out>\n    </testcase>\n";
        } else {
          ++n.failures;
          tc +=
              ">\n      <failure message=\"" + attr(c.reason) + "\" type=\"fail\">" +
              xml_escape(c.measured.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)) +
              "</failure>\n    </testcase>\n";
        }
        break;
      case CheckStatus::Skipped:
        ++n.skipped;
        tc += ">\n      <skipped message=\"" + attr(c.reason) + "\"/>\n    </testcase>\n";
        break;
      case CheckStatus::Error:
        ++n.errors;
        tc += ">\n      <error message=\"" + attr(c.reason) +
              "\" type=\"error\"/>\n    </testcase>\n";
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
  for (const auto& f : s.timeline.facts.faults) {
    if (f.optional || f.status == FaultStatus::Injected) continue;
    ++n.tests;
    std::string name = "fault " + std::to_string(f.index + 1) + " (" + std::string(to_string(f.action)) + " " + f.target + ")";
    if (f.status == FaultStatus::Skipped) {
      ++n.skipped;
      body += open + attr(name) + close_open + ">\n      <skipped message=\"" + attr(f.reason) +
              "\"/>\n    </testcase>\n";
    } else {
      ++n.errors;
      body += open + attr(name) + close_open + ">\n      <error message=\"" + attr(f.reason) +
              "\" type=\"fault_" + attr(std::string(to_string(f.status))) + "\"/>\n    </testcase>\n";
    }
  }
}

// The testcases of the run itself: a harness error, requirements not met, and
// a red verdict no testcase above carries.
void run_testcases(const ScenarioResult& s, const Testcase& t, Counts& n, std::string& body) {
  const std::string& open = t.open;
  const std::string& close_open = t.close_open;
  const std::string stderr_tail = utf8_tail(s.timeline.facts.stderr_text);
  if (!s.error.empty()) {
    // The run itself broke: its checks (if any) saw a partial timeline, so CI
    // needs a red testcase of its own, with the job's last words attached.
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
      s.verdict == Verdict::Fail || s.verdict == Verdict::XPass || s.verdict == Verdict::Error;
  if (red && n.failures == 0 && n.errors == 0) {
    ++n.tests;
    const bool is_error = s.verdict == Verdict::Error;
    (is_error ? n.errors : n.failures)++;
    const std::string tag = is_error ? "error" : "failure";
    body += open + "verdict" + close_open + ">\n      <" + tag + " message=\"" +
            attr(s.verdict_reason) + "\" type=\"" + std::string(to_string(s.verdict)) +
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
void repeat_properties(const RunResult& run, const ScenarioResult& s, std::string& props) {
  auto a = std::find_if(run.aggregates.begin(), run.aggregates.end(),
                        [&](const Aggregate& a) { return a.name == s.name; });
  if (a == run.aggregates.end()) return;
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

}  // namespace

std::string write_junit(const RunResult& run) {
  Counts total;
  double total_seconds = 0;
  std::string suites;
  for (const auto& s : run.scenarios) {
    double secs = 0;
    if (auto it = s.timings_ms.find("total_ms"); it != s.timings_ms.end() && it->second) {
      secs = *it->second / 1000.0;
    }
    total_seconds += secs;

    std::string props;
    property(props, "      ", "verdict", to_string(s.verdict));
    property(props, "      ", "verdict_reason", s.verdict_reason);
    property(props, "      ", "expect", s.expect);
    property(props, "      ", "seed", std::to_string(s.seed));
    property(props, "      ", "repro", s.repro);
    property(props, "      ", "file", s.file);
    property(props, "      ", "out_dir", s.out_dir);
    for (const auto& [key, value] : s.timings_ms) {
      // Omitted rather than "null": CI plots property values as numbers.
      if (value) property(props, "      ", "timing." + key, fixed3(*value));
    }
    repeat_properties(run, s, props);

    std::string body;
    const Counts n = render_testcases(s, body);
    total.add(n);

    suites += "  <testsuite name=\"" + attr(suite_name(s)) + "\" tests=\"" + std::to_string(n.tests) +
              "\" failures=\"" + std::to_string(n.failures) + "\" errors=\"" +
              std::to_string(n.errors) + "\" skipped=\"" + std::to_string(n.skipped) +
              "\" time=\"" + fixed3(secs) + "\"";
    if (!s.started_at.empty()) suites += " timestamp=\"" + attr(s.started_at) + "\"";
    suites += ">\n    <properties>\n" + props + "    </properties>\n" + body + "  </testsuite>\n";
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
