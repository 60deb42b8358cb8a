// Tests for comparing two runs (reports/diff.h): verdict and check status
// changes are flagged and make differ() true; timings are always shown
// with both values and the delta, and never count as a difference.
#include "reports/diff.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "tests/unit/report_fixture.h"

namespace aftermath {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using testing_reports::count;
using testing_reports::load_fixture;
using testing_reports::scenario;
using testing_reports::typed;

// Two result.json documents compared as `aftermath diff` compares them:
// read back into their runs first.
std::string diff(const json& a, const json& b) { return render_diff(typed(a), typed(b)); }
bool differ(const json& a, const json& b) { return runs_differ(typed(a), typed(b)); }

TEST(Diff, SameRunHasNoChanges) {
  json a = load_fixture();
  EXPECT_FALSE(differ(a, a));
  std::string text = diff(a, a);
  EXPECT_THAT(text, HasSubstr("6 scenario(s) compared: 0 verdict change(s), 0 check status "
                              "change(s), 0 only in a, 0 only in b"));
  EXPECT_THAT(text, Not(HasSubstr("[CHANGED]")));
  EXPECT_THAT(text, HasSubstr("+0.0 ms (+0.0%)"));
}

TEST(Diff, RerunShowsEveryTimingWithBothValuesAndDelta) {
  json a = load_fixture();
  json b = load_fixture("result-rerun.json");
  EXPECT_FALSE(differ(a, b));  // same verdicts and statuses; timings differ
  std::string text = diff(a, b);
  size_t timings = 0;
  for (const auto& sc : a["scenarios"]) {
    EXPECT_THAT(text, HasSubstr("scenario " + sc["name"].get<std::string>() + ": verdict " +
                                sc["verdict"].get<std::string>() + "\n"));
    timings += sc["timings_ms"].size();
  }
  // One indented line per timing, each with both values and the delta.
  EXPECT_EQ(count(text, "\n    "), timings);
  EXPECT_EQ(count(text, " ms (") + count(text, " ms\n") + count(text, " s\n") +
                count(text, " s (") + count(text, "(not reached in"),
            timings);
}

TEST(Diff, ChangedVerdictCheckAndTiming) {
  json a = load_fixture();
  json b = a;
  json& sa = scenario(a, "orphan-unexpected");
  json& sb = scenario(b, "orphan-unexpected");
  sb["verdict"] = "pass";
  for (auto& c : sb["checks"]) c["status"] = "pass";
  sa["timings_ms"]["job_ms"] = 200.0;
  sb["timings_ms"]["job_ms"] = 250.0;
  sa["timings_ms"]["total_ms"] = 1000.0;
  sb["timings_ms"]["total_ms"] = 900.0;
  sa["timings_ms"]["to_all_exited_ms"] = nullptr;
  sb["timings_ms"]["to_all_exited_ms"] = 12.0;
  sa["timings_ms"]["teardown_ms"] = 0.0;
  sb["timings_ms"]["teardown_ms"] = 3.0;

  EXPECT_TRUE(differ(a, b));
  std::string text = diff(a, b);
  EXPECT_THAT(text, HasSubstr("scenario orphan-unexpected: verdict fail -> pass  [CHANGED]"));
  EXPECT_THAT(text, HasSubstr("  check all_exited: fail -> pass\n"));
  EXPECT_THAT(text, HasSubstr("  check no_orphans: fail -> pass\n"));
  EXPECT_THAT(text, HasSubstr("200.0 ms -> 250.0 ms     +50.0 ms (+25.0%)"));
  EXPECT_THAT(text, HasSubstr("1000.0 ms -> 900.0 ms     -100.0 ms (-10.0%)"));
  EXPECT_THAT(text, HasSubstr("- -> 12.0 ms      (not reached in a)"));
  EXPECT_THAT(text, HasSubstr("0.0 ms -> 3.0 ms       +3.0 ms\n"));  // no percentage of 0
  EXPECT_THAT(text, HasSubstr("1 verdict change(s), 2 check status change(s)"));
}

TEST(Diff, CheckStatusAloneCounts) {
  json a = load_fixture();
  json b = a;
  scenario(b, "clean-job")["checks"][0]["status"] = "error";
  EXPECT_TRUE(differ(a, b));
  EXPECT_THAT(diff(a, b), HasSubstr("scenario clean-job: verdict pass\n  check all_exited: "
                                    "pass -> error\n"));
  // A check present in one run only is a status change too.
  json c = a;
  scenario(c, "clean-job")["checks"].push_back({{"name", "gpu_released"}, {"status", "pass"}});
  EXPECT_TRUE(differ(a, c));
  EXPECT_THAT(diff(a, c), HasSubstr("check gpu_released: (absent) -> pass"));
}

TEST(Diff, ScenariosInOneRunOnly) {
  RunResult a = typed(load_fixture());
  RunResult b = a;
  b.scenarios.erase(b.scenarios.begin() + 3);  // hang
  ScenarioResult& added = b.scenarios.emplace_back();
  added.name = "brand-new";
  added.verdict = Verdict::Pass;
  EXPECT_TRUE(runs_differ(a, b));
  std::string text = render_diff(a, b);
  EXPECT_THAT(text, HasSubstr("only in a: hang (xfail)\n"));
  EXPECT_THAT(text, HasSubstr("only in b: brand-new (pass)\n"));
  EXPECT_THAT(text, HasSubstr("5 scenario(s) compared"));
}

TEST(Diff, EmptyRuns) {
  EXPECT_FALSE(runs_differ(RunResult{}, RunResult{}));
  EXPECT_THAT(render_diff(RunResult{}, RunResult{}), HasSubstr("0 scenario(s) compared"));
  EXPECT_TRUE(runs_differ(RunResult{}, typed(load_fixture())));
}

// The reported case: a base near zero made "+1890086.3%". A delta that a
// ratio cannot describe stands alone, in seconds from one second on.
TEST(Diff, AbsoluteDeltasWhereARatioIsMeaningless) {
  EXPECT_EQ(timing_delta(0, 1890), "+1.89 s");
  EXPECT_EQ(timing_delta(0.1, 1890), "+1.89 s");
  EXPECT_EQ(timing_delta(0.5, 0.9), "+0.4 ms");   // base under 1 ms
  EXPECT_EQ(timing_delta(40, 0), "-40.0 ms");     // either side 0
  EXPECT_EQ(timing_delta(10, 500), "+490.0 ms");  // +4900%: beyond the bound
  EXPECT_EQ(timing_delta(200, 250), "+50.0 ms (+25.0%)");
  EXPECT_EQ(timing_delta(1000, 900), "-100.0 ms (-10.0%)");
  EXPECT_EQ(timing_delta(100, 1100), "+1.00 s (+1000.0%)");  // the bound itself is shown
  EXPECT_EQ(timing_delta(1500, 4000), "+2.50 s (+166.7%)");

  json a = load_fixture();
  json b = a;
  scenario(a, "clean-job")["timings_ms"]["to_all_gone_ms"] = 0.0;
  scenario(b, "clean-job")["timings_ms"]["to_all_gone_ms"] = 1890.0;
  std::string text = diff(a, b);
  EXPECT_THAT(text, HasSubstr("0.0 ms -> 1890.0 ms    +1.89 s\n"));
  EXPECT_THAT(text, Not(HasSubstr("%)\n    to_all_gone")));
  std::regex huge(R"([0-9]{5,}\.[0-9]%)");
  EXPECT_FALSE(std::regex_search(text, huge)) << text;
}

json with_faults(json run, const std::string& name, json faults) {
  scenario(run, name)["faults"] = std::move(faults);
  return run;
}

json fault(const std::string& action, const std::string& target, const std::string& trigger) {
  return {{"index", 0},
          {"action", action},
          {"target", target},
          {"trigger", trigger},
          {"status", "injected"}};
}

// Same name, different faults: a different experiment. The diff says which
// faults each side injected and does not compare the timings.
TEST(Diff, DifferentFaultPlansAreSaidPlainlyNotTimed) {
  json a = with_faults(load_fixture(), "orphan-unexpected",
                       {fault("SIGKILL", "rank:1", "point step rank=1 hit 3")});
  json b = with_faults(load_fixture("result-rerun.json"), "orphan-unexpected",
                       {fault("SIGKILL", "worker:0/0", "point loader.worker.getitem hit 5")});
  scenario(a, "orphan-unexpected")["timings_ms"]["to_all_gone_ms"] = 0.1;
  scenario(b, "orphan-unexpected")["timings_ms"]["to_all_gone_ms"] = 1890.0;
  EXPECT_TRUE(differ(a, b));
  std::string text = diff(a, b);
  size_t block = text.find("scenario orphan-unexpected: verdict fail\n");
  ASSERT_NE(block, std::string::npos) << text;
  std::string rest = text.substr(block);
  EXPECT_THAT(rest, HasSubstr("  fault plans differ: a SIGKILL rank:1 at point step rank=1 hit 3; "
                              "b SIGKILL worker:0/0 at point loader.worker.getitem hit 5  "
                              "[CHANGED]\n  timings not compared: the runs injected different "
                              "faults\n"));
  EXPECT_THAT(rest.substr(0, rest.find("\nscenario ", 1)), Not(HasSubstr("to_all_gone_ms")));
  EXPECT_THAT(text, HasSubstr(", 1 with different fault plans\n"));
  // The other scenarios' timings are still compared.
  EXPECT_THAT(text, HasSubstr("scenario clean-job: verdict pass\n  timings (a -> b, delta):\n"));

  // A fault on one side only, and the same faults on both (negative control).
  json none = with_faults(load_fixture(), "orphan-unexpected", json::array());
  EXPECT_THAT(diff(none, b), HasSubstr("fault plans differ: a no faults; b SIGKILL worker:0/0"));
  json timed = with_faults(
      load_fixture(), "orphan-unexpected",
      {fault("SIGTERM", "launcher", "after 2s"), fault("SIGKILL", "all", "when processes >= 4")});
  EXPECT_THAT(diff(timed, b), HasSubstr("fault plans differ: a SIGTERM launcher after 2s; "
                                        "SIGKILL all when processes >= 4; b SIGKILL"));
  json same = with_faults(load_fixture("result-rerun.json"), "orphan-unexpected",
                          {fault("SIGKILL", "rank:1", "point step rank=1 hit 3")});
  EXPECT_FALSE(differ(a, same));
  EXPECT_THAT(diff(a, same), Not(HasSubstr("fault plans differ")));
}

// With --repeat, run k pairs with run k, every run is compared, and the
// first run's block shows the rate over all runs on each side.
TEST(Diff, RepeatedRunsPairByRunNumber) {
  auto repeated = [](const std::vector<Verdict>& verdicts) {
    RunResult run;
    for (size_t i = 0; i < verdicts.size(); ++i) {
      ScenarioResult& sc = run.scenarios.emplace_back();
      sc.name = "hang";
      sc.verdict = verdicts[i];
      sc.run_index = static_cast<int>(i);
      sc.runs = static_cast<int>(verdicts.size());
    }
    return run;
  };
  using enum Verdict;
  RunResult a = repeated({XFail, XFail, XPass});
  RunResult b = repeated({XFail, XPass, XPass});
  Aggregate& agg = a.aggregates.emplace_back();
  agg.name = "hang";
  agg.runs = 3;
  agg.expects_failure = true;
  agg.reproduced = 2;
  agg.judged = 3;
  agg.rate = 2.0 / 3;
  agg.rate_low = 0.21;
  agg.rate_high = 0.94;
  agg.flaky = true;
  std::string text = render_diff(a, b);
  EXPECT_THAT(text, HasSubstr("scenario hang run 1/3: verdict xfail\n"
                              "  repeats: a reproduced 2/3 (67%, 95% interval 21\u201394%), "
                              "flaky; b no repeat statistics\n"));
  EXPECT_THAT(text, HasSubstr("scenario hang run 2/3: verdict xfail -> xpass  [CHANGED]\n"));
  EXPECT_THAT(text, HasSubstr("scenario hang run 3/3: verdict xpass\n"));
  EXPECT_THAT(text, HasSubstr("3 scenario(s) compared: 1 verdict change(s)"));
  RunResult longer = repeated({XFail, XFail, XPass, XFail});
  EXPECT_THAT(render_diff(a, longer), HasSubstr("only in b: hang run 4/4 (xfail)\n"));
}

}  // namespace
}  // namespace aftermath
