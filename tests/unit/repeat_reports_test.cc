// What --repeat N shows in each report (summary.md, report.html, junit.xml,
// result.json, trace.json): every run numbered, each scenario's rate with its
// interval, and for a flaky one the outcomes that occurred. The run is made
// by hand (repeat_fixture.h) and rendered as `aftermath run` renders it;
// result.json read back gives the same statistics.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "reports/html.h"
#include "reports/json.h"
#include "reports/junit.h"
#include "reports/repeat_view.h"
#include "reports/result_read.h"
#include "reports/summary.h"
#include "reports/trace.h"
#include "tests/unit/repeat_fixture.h"

namespace aftermath {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace testing_repeats;

std::string escaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}

TEST(RepeatJson, AggregatesCarryCountsAndOutcomes) {
  json j = to_json(repeated_run());
  ASSERT_EQ(j["aggregates"].size(), 2u);
  const json& leaky = j["aggregates"][1];
  EXPECT_EQ(leaky["failed"], 3);
  EXPECT_EQ(leaky["judged"], 5);
  EXPECT_EQ(leaky["rate_counts"], "failed");
  EXPECT_TRUE(leaky["flaky"].get<bool>());
  ASSERT_EQ(leaky["outcomes"].size(), 3u);
  EXPECT_EQ(leaky["outcomes"][0],
            (json{{"verdict", "fail"}, {"failed_checks", {"shm_clean"}}, {"runs", {1, 3}}}));
  EXPECT_EQ(j["scenarios"][6]["run"], 2);
  EXPECT_EQ(j["scenarios"][6]["runs"], 5);
}

// What the renderers read back is what the run computed.
TEST(RepeatJson, ReadBackAsTheRunComputedIt) {
  RunResult run = repeated_run();
  auto read = read_result(to_json(run));
  ASSERT_TRUE(read) << read.error().what;
  const auto& back = read->aggregates;
  ASSERT_EQ(back.size(), 2u);
  for (size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(rate_text(back[i]), rate_text(run.aggregates[i]));
    EXPECT_EQ(outcomes_text(back[i]), outcomes_text(run.aggregates[i]));
    EXPECT_EQ(back[i].flaky, run.aggregates[i].flaky);
  }
  EXPECT_EQ(report::verdicts_text(back[0]), "3 xfail, 2 xpass");
  EXPECT_EQ(report::all_gone_text(back[0]), "10.0 ms / 30.0 ms / 1.50 s / 1.50 s");
  // An older document: no counts beyond the verdicts, no outcomes.
  json old = {{"schema_version", 1},
              {"scenarios", json::array()},
              {"aggregates",
               {{{"name", "x"},
                 {"runs", 4},
                 {"verdicts", {{"fail", 1}, {"pass", 2}, {"skipped", 1}}},
                 {"reproduction_rate", 1.0 / 3},
                 {"rate_ci95", {0.06, 0.79}}}}}};
  auto x = read_result(old);
  ASSERT_TRUE(x) << x.error().what;
  ASSERT_EQ(x->aggregates.size(), 1u);
  EXPECT_EQ(x->aggregates[0].failed, 1);
  EXPECT_EQ(x->aggregates[0].skipped, 1);
  EXPECT_EQ(x->aggregates[0].judged, 3);
  EXPECT_EQ(rate_text(x->aggregates[0]), "failed 1/3 (33%, 95% interval 6\u201379%), 1 skipped");
  // No interval written: every rate is possible.
  old["aggregates"][0].erase("rate_ci95");
  EXPECT_EQ(read_result(old)->aggregates[0].rate_high, 1);
  // A verdict no version wrote is refused, naming it.
  old["aggregates"][0]["verdicts"]["maybe"] = 1;
  auto odd = read_result(old);
  ASSERT_FALSE(odd);
  EXPECT_EQ(odd.error().what, "aggregates[0].verdicts.maybe is not a verdict");
}

TEST(RepeatSummary, RatesFlakyOutcomesAndNumberedRuns) {
  std::string md = render_summary_md(repeated_run());
  EXPECT_THAT(
      md, HasSubstr("## aftermath: 2 scenarios, 5 runs each (2 pass, 3 xfail, 3 fail, 2 xpass)\n"));
  EXPECT_THAT(md, HasSubstr("\n### Repeated runs\n"));
  EXPECT_THAT(md, HasSubstr("| hang | 5 | 3 xfail, 2 xpass (flaky) | " + std::string(kHangRate) +
                            " | 10.0 ms / 30.0 ms / 1.50 s / 1.50 s |\n"));
  EXPECT_THAT(md, HasSubstr("| leaky | 5 | 2 pass, 3 fail (flaky) | " + std::string(kLeakyRate)));
  EXPECT_THAT(md, HasSubstr("- **hang** is flaky: " + std::string(kHangOutcomes) + "\n"));
  EXPECT_THAT(md, HasSubstr("- **leaky** is flaky: " + std::string(kLeakyOutcomes) + "\n"));
  for (int i = 1; i <= 5; ++i)
    EXPECT_THAT(md, HasSubstr("\n| hang run " + std::to_string(i) + "/5 | "));
  // The details of a failed run name the run.
  EXPECT_THAT(md, HasSubstr("### \u274C leaky run 2/5: fail"));
}

TEST(RepeatSummary, NothingAboutRepeatsForASingleRun) {
  RunResult run = repeated_run();
  run.scenarios.resize(1);
  run.scenarios[0].runs = 1;
  run.scenarios[0].run_index = 0;
  run.aggregates.clear();
  std::string md = render_summary_md(run);
  EXPECT_THAT(md, Not(HasSubstr("Repeated runs")));
  EXPECT_THAT(md, HasSubstr("\n| hang | "));
  EXPECT_THAT(md, Not(HasSubstr("run 1/")));
  EXPECT_THAT(md, HasSubstr("## aftermath: 1 scenario (1 xfail)\n"));
}

TEST(RepeatHtml, RepeatedRunsSectionAndNumberedRuns) {
  std::string html = render_html(repeated_run());
  size_t repeats = html.find("<section id=\"repeats\"><h2>Repeated runs</h2>");
  ASSERT_NE(repeats, std::string::npos);
  EXPECT_LT(repeats, html.find("<section id=\"overview\">")) << "the rate is the headline";
  EXPECT_THAT(html, HasSubstr("<p class=\"summary\"><span>2 scenarios, 5 runs each</span>"));
  EXPECT_THAT(html, HasSubstr("<td><a href=\"#s0-hang\">hang</a></td><td class=\"num\">5</td><td>3 "
                              "xfail, 2 xpass <span class=\"flaky\">flaky</span></td><td "
                              "class=\"rate\">" +
                              escaped(kHangRate) + "</td>"));
  EXPECT_THAT(html, HasSubstr("<a href=\"#s5-leaky\">leaky</a>"));
  EXPECT_THAT(html, HasSubstr("<tr class=\"flaky-why\"><td colspan=\"5\">flaky: " +
                              escaped(kLeakyOutcomes) + "</td></tr>"));
  // The overview rows and the section banners carry the run number.
  EXPECT_THAT(html, HasSubstr("<a href=\"#s2-hang\">hang run 3/5</a>"));
  EXPECT_THAT(html, HasSubstr("<h2>leaky run 5/5</h2>"));
  RunResult once = repeated_run();
  once.aggregates.clear();
  EXPECT_THAT(render_html(once), Not(HasSubstr("id=\"repeats\"")));
}

TEST(RepeatJunit, EveryRunsSuiteCarriesTheRepeatProperties) {
  std::string xml = render_junit(repeated_run());
  auto prop = [](const std::string& name, const std::string& value) {
    return "<property name=\"" + name + "\" value=\"" + value + "\"/>";
  };
  // Each of the ten suites.
  size_t suites = 0;
  for (size_t pos = xml.find("<testsuite "); pos != std::string::npos;
       pos = xml.find("<testsuite ", pos + 1)) {
    ++suites;
    std::string suite = xml.substr(pos, xml.find("</testsuite>", pos) - pos);
    EXPECT_THAT(suite, HasSubstr(prop("aftermath.repeat.runs", "5")));
    EXPECT_THAT(suite, HasSubstr(prop("aftermath.repeat.flaky", "true")));
  }
  EXPECT_EQ(suites, 10u);
  EXPECT_THAT(xml, HasSubstr("<testsuite name=\"hang [run 3/5]\""));
  EXPECT_THAT(xml, HasSubstr(prop("aftermath.repeat.run", "3/5")));
  EXPECT_THAT(xml, HasSubstr(prop("aftermath.repeat.failed", "2") + "\n      " +
                             prop("aftermath.repeat.reproduced", "3") + "\n      " +
                             prop("aftermath.repeat.rate", "0.600") + "\n      " +
                             prop("aftermath.repeat.interval95", "0.231-0.882") + "\n      " +
                             prop("aftermath.repeat.summary", kHangRate)));
  EXPECT_THAT(xml, HasSubstr(prop("aftermath.repeat.outcomes", kLeakyOutcomes)));
  // leaky expects to pass: no reproduced count, its rate is of failures.
  EXPECT_THAT(xml, HasSubstr(prop("aftermath.repeat.failed", "3") + "\n      " +
                             prop("aftermath.repeat.rate", "0.600")));
  RunResult once = repeated_run();
  once.aggregates.clear();
  EXPECT_THAT(render_junit(once), Not(HasSubstr("aftermath.repeat.")));
}

TEST(RepeatTrace, EachRunIsATraceProcessNamedWithItsNumber) {
  json trace = render_trace(repeated_run());
  std::vector<std::string> names;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") names.push_back(e["args"]["name"]);
  ASSERT_EQ(names.size(), 10u);
  EXPECT_EQ(names[0], "hang run 1/5");
  EXPECT_EQ(names[9], "leaky run 5/5");
}

}  // namespace
}  // namespace aftermath
