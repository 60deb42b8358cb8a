// Tests for comparing two runs (reports/diff.h): verdict and check status
// changes are flagged and make runs_differ() true; timings are always shown
// with both values and the delta, and never count as a difference.
#include "reports/diff.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/report_fixture.h"

namespace aftermath {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using testing_reports::count;
using testing_reports::load_fixture;
using testing_reports::scenario;

TEST(Diff, SameRunHasNoChanges) {
  json a = load_fixture();
  EXPECT_FALSE(runs_differ(a, a));
  std::string text = render_diff(a, a);
  EXPECT_THAT(text, HasSubstr("6 scenario(s) compared: 0 verdict change(s), 0 check status "
                              "change(s), 0 only in a, 0 only in b"));
  EXPECT_THAT(text, Not(HasSubstr("[CHANGED]")));
  EXPECT_THAT(text, HasSubstr("+0.0 ms (+0.0%)"));
}

TEST(Diff, RerunShowsEveryTimingWithBothValuesAndDelta) {
  json a = load_fixture();
  json b = load_fixture("result-rerun.json");
  EXPECT_FALSE(runs_differ(a, b));  // same verdicts and statuses; timings differ
  std::string text = render_diff(a, b);
  size_t timings = 0;
  for (const auto& sc : a["scenarios"]) {
    EXPECT_THAT(text, HasSubstr("scenario " + sc["name"].get<std::string>() + ": verdict " +
                                sc["verdict"].get<std::string>() + "\n"));
    timings += sc["timings_ms"].size();
  }
  // One indented line per timing, each with both values and the delta.
  EXPECT_EQ(count(text, "\n    "), timings);
  EXPECT_EQ(count(text, " ms (") + count(text, "(not reached in"), timings);
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

  EXPECT_TRUE(runs_differ(a, b));
  std::string text = render_diff(a, b);
  EXPECT_THAT(text, HasSubstr("scenario orphan-unexpected: verdict fail -> pass  [CHANGED]"));
  EXPECT_THAT(text, HasSubstr("  check all_exited: fail -> pass\n"));
  EXPECT_THAT(text, HasSubstr("  check no_orphans: fail -> pass\n"));
  EXPECT_THAT(text, HasSubstr("200.0 ms -> 250.0 ms     +50.0 ms (+25.0%)"));
  EXPECT_THAT(text, HasSubstr("1000.0 ms -> 900.0 ms     -100.0 ms (-10.0%)"));
  EXPECT_THAT(text, HasSubstr("- -> 12.0 ms      (not reached in a)"));
  EXPECT_THAT(text, HasSubstr("+3.0 ms (n/a %)"));
  EXPECT_THAT(text, HasSubstr("1 verdict change(s), 2 check status change(s)"));
}

TEST(Diff, CheckStatusAloneCounts) {
  json a = load_fixture();
  json b = a;
  scenario(b, "clean-job")["checks"][0]["status"] = "error";
  EXPECT_TRUE(runs_differ(a, b));
  EXPECT_THAT(render_diff(a, b), HasSubstr("scenario clean-job: verdict pass\n  check all_exited: "
                                           "pass -> error\n"));
  // A check present in one run only is a status change too.
  json c = a;
  scenario(c, "clean-job")["checks"].push_back({{"name", "gpu_released"}, {"status", "pass"}});
  EXPECT_TRUE(runs_differ(a, c));
  EXPECT_THAT(render_diff(a, c), HasSubstr("check gpu_released: (absent) -> pass"));
}

TEST(Diff, ScenariosInOneRunOnly) {
  json a = load_fixture();
  json b = a;
  b["scenarios"].erase(3);  // hang
  b["scenarios"].push_back({{"name", "brand-new"}, {"verdict", "pass"}});
  EXPECT_TRUE(runs_differ(a, b));
  std::string text = render_diff(a, b);
  EXPECT_THAT(text, HasSubstr("only in a: hang (xfail)\n"));
  EXPECT_THAT(text, HasSubstr("only in b: brand-new (pass)\n"));
  EXPECT_THAT(text, HasSubstr("5 scenario(s) compared"));
}

TEST(Diff, ToleratesOddInput) {
  EXPECT_FALSE(runs_differ(json::object(), json::object()));
  EXPECT_NO_THROW(render_diff(json::array(), json{{"scenarios", 1}}));
  EXPECT_TRUE(runs_differ(json::object(), load_fixture()));
}

}  // namespace
}  // namespace aftermath
