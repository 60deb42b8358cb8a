// Tests for summary.md (reports/summary.h): one table row per scenario,
// details only for the scenarios that need attention, and cells that cannot
// break the table.
#include "reports/summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
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

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) out.push_back(line);
  return out;
}

std::vector<std::string> table_rows(const std::string& md) {
  std::vector<std::string> rows;
  for (const auto& l : lines(md)) {
    if (l.rfind("|", 0) == 0) rows.push_back(l);
  }
  // Header and separator first.
  return rows.size() >= 2 ? std::vector<std::string>(rows.begin() + 2, rows.end()) : rows;
}

// Cell separators: '|' not escaped by a backslash.
size_t separators(const std::string& row) {
  size_t n = 0;
  for (size_t i = 0; i < row.size(); ++i) n += row[i] == '|' && (i == 0 || row[i - 1] != '\\');
  return n;
}

TEST(Summary, OneRowPerScenario) {
  json result = load_fixture();
  std::string md = render_summary_md(result);
  auto rows = table_rows(md);
  ASSERT_EQ(rows.size(), result["scenarios"].size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(separators(rows[i]), 7u) << rows[i];
    EXPECT_EQ(rows[i].rfind("| " + result["scenarios"][i]["name"].get<std::string>() + " |", 0), 0u)
        << rows[i];
  }
  EXPECT_THAT(md,
              HasSubstr("| scenario | verdict | failed checks | job | all gone | shm baseline |"));
  EXPECT_THAT(md, HasSubstr("## aftermath: 6 scenarios (1 pass, 4 xfail, 1 fail)"));
}

TEST(Summary, RowsShowVerdictFailedChecksAndTimings) {
  json result = load_fixture();
  auto rows = table_rows(render_summary_md(result));
  EXPECT_THAT(rows[0], HasSubstr("| \u2705 pass | - |"));  // clean-job
  EXPECT_THAT(rows[3], HasSubstr("| \u2705 xfail | all_exited, job_exit, no_hang | - |"));  // hang
  EXPECT_THAT(rows[5], HasSubstr("| \u274C fail | all_exited, no_orphans |"));
  // hang never exited by itself: no job time; shm-leak never got back to baseline.
  EXPECT_THAT(rows[4], HasSubstr(" | -"));
  EXPECT_THAT(rows[1], HasSubstr("1.50 s"));  // orphan-outlives-parent: all gone after 1.5 s
}

TEST(Summary, DetailsOnlyForScenariosThatNeedAttention) {
  json result = load_fixture();
  std::string md = render_summary_md(result);
  EXPECT_EQ(count(md, "\n### "), 1u);
  EXPECT_THAT(md, HasSubstr("### \u274C orphan-unexpected: fail"));
  const json& sc = scenario(result, "orphan-unexpected");
  for (const auto& c : sc["checks"]) {
    if (c["status"] != "fail") continue;
    EXPECT_THAT(md, HasSubstr("- **" + c["name"].get<std::string>() + "** (fail): "));
  }
  EXPECT_THAT(md, HasSubstr("orphan(s) over the 300ms grace"));
  EXPECT_THAT(md, HasSubstr("- repro: `" + sc["repro"].get<std::string>() + "`"));
  // An expected failure (xfail) is fine and gets no details.
  EXPECT_THAT(md, Not(HasSubstr("### \u274C hang")));
}

TEST(Summary, CellsCannotBreakTheTable) {
  json result = load_fixture();
  json& sc = scenario(result, "hang");
  sc["name"] = "a|b\nc";
  sc["verdict"] = "error";
  sc["checks"][0]["name"] = "x|y";
  sc["checks"][0]["status"] = "error";
  sc["checks"][0]["reason"] = "line one\nline two <b>*bold*</b>";
  std::string md = render_summary_md(result);
  auto rows = table_rows(md);
  ASSERT_EQ(rows.size(), result["scenarios"].size());
  EXPECT_THAT(rows[3], HasSubstr("| a\\|b c | \u274C error | x\\|y"));
  for (const auto& r : rows) EXPECT_EQ(separators(r), 7u) << r;
  EXPECT_THAT(md, HasSubstr("(error): line one line two &lt;b&gt;\\*bold\\*&lt;/b&gt;"));
}

TEST(Summary, MdCell) {
  EXPECT_EQ(md_cell("a|b"), "a\\|b");
  EXPECT_EQ(md_cell("x\ny\tz"), "x y z");
  EXPECT_EQ(md_cell("<i>&"), "&lt;i&gt;&amp;");
  EXPECT_EQ(md_cell("[link](x) `c` *e*"), "\\[link\\](x) \\`c\\` \\*e\\*");
  EXPECT_EQ(md_cell("no_orphans"), "no_orphans");
}

TEST(Summary, EmptyAndOddInput) {
  EXPECT_THAT(render_summary_md(json{{"scenarios", json::array()}}),
              HasSubstr("No scenarios ran."));
  EXPECT_NO_THROW(render_summary_md(json::array()));
  std::string md = render_summary_md(json{{"scenarios", {{{"name", "x"}}}}});
  EXPECT_EQ(table_rows(md).size(), 1u);
  EXPECT_THAT(md, HasSubstr("| x | \u274C unknown |"));
}

}  // namespace
}  // namespace aftermath
