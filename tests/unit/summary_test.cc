// Tests for summary.md (reports/summary.h): one table row per scenario,
// details only for the scenarios that need attention, and cells that cannot
// break the table.
#include "reports/summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
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
using testing_reports::typed;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) out.push_back(line);
  return out;
}

// The rows of the first table (the scenarios'; a hang diagnosis has its own).
std::vector<std::string> table_rows(const std::string& md) {
  std::vector<std::string> rows;
  for (const auto& l : lines(md)) {
    if (l.rfind("|", 0) == 0) {
      rows.push_back(l);
    } else if (!rows.empty()) {
      break;
    }
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
  std::string md = render_summary_md(typed(result));
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
  auto rows = table_rows(render_summary_md(typed(result)));
  EXPECT_THAT(rows[0], HasSubstr("| \u2705 pass | - |"));  // clean-job
  EXPECT_THAT(rows[3], HasSubstr("| \u2705 xfail | all_exited, job_exit, no_hang | - |"));  // hang
  EXPECT_THAT(rows[5], HasSubstr("| \u274C fail | all_exited, no_orphans |"));
  // hang never exited by itself: no job time; shm-leak never got back to baseline.
  EXPECT_THAT(rows[4], HasSubstr(" | -"));
  EXPECT_THAT(rows[1], HasSubstr("1.50 s"));  // orphan-outlives-parent: all gone after 1.5 s
}

TEST(Summary, DetailsOnlyForScenariosThatNeedAttention) {
  json result = load_fixture();
  std::string md = render_summary_md(typed(result));
  EXPECT_EQ(count(md, "\n### \u274C "), 1u);
  EXPECT_THAT(md, HasSubstr("### \u274C orphan-unexpected: fail"));
  const json& sc = scenario(result, "orphan-unexpected");
  for (const auto& c : sc["checks"]) {
    if (c["status"] != "fail") continue;
    EXPECT_THAT(md, HasSubstr("- **" + c["name"].get<std::string>() + "** (fail): "));
  }
  EXPECT_THAT(md, HasSubstr("orphan(s) over the 300ms grace"));
  EXPECT_THAT(md, HasSubstr("- repro: `" + sc["repro"].get<std::string>() + "`"));
  // An expected failure (xfail) is fine and gets no details; only its hang
  // diagnosis, which is what reproducing a hang is for.
  EXPECT_THAT(md, Not(HasSubstr("### \u274C hang")));
  EXPECT_EQ(count(md, "\n### "), 2u);
  EXPECT_THAT(md, HasSubstr("\n### \u23F8 hang: xfail\n\n**Hang diagnosis**: 3 live processes\n"));
}

// A failed scenario's details end with the job's own last stderr lines, in a
// fence a line of the job's cannot close; a passing one shows none.
TEST(Summary, AFailedScenarioShowsTheJobsLastStderrLines) {
  RunResult run = typed(load_fixture());
  for (ScenarioResult& sc : run.scenarios) {
    sc.timeline.facts.stderr_text =
        "one\ntwo\nthree\nfour\n```\nTraceback (most recent call last):\n"
        "ModuleNotFoundError: No module named 'torch'\n";
  }
  std::string md = render_summary_md(run);
  EXPECT_THAT(md,
              HasSubstr("- the job's last stderr lines:\n\n````\nthree\nfour\n```\nTraceback (most "
                        "recent call last):\nModuleNotFoundError: No module named 'torch'\n"
                        "````\n"));
  EXPECT_THAT(md, Not(HasSubstr("\ntwo\n"))) << "the last 5 lines only";
  EXPECT_EQ(count(md, "- the job's last stderr lines:"), 1u) << "only the failed scenario's";
}

// A failed pytest suite names each leaking test (and no clean one) in its details.
TEST(Summary, LeakingPytestTestsAreNamedInTheDetails) {
  json result = load_fixture();
  json& sc = scenario(result, "orphan-unexpected");
  sc["tests"] = json::array(
      {json{{"nodeid", "t.py::test_clean"}, {"leaks", json::array()}},
       json{{"nodeid", "t.py::test_leaky[a]"},
            {"leaks",
             json::array({json{{"kind", "orphan"}, {"what", "worker 81 outlived its parent by 5s"}},
                          json{{"kind", "shm"},
                               {"what", "/dev/shm/torch_2_x_0 (64 KiB) left behind"}}})}}});
  std::string md = render_summary_md(typed(result));
  EXPECT_THAT(
      md,
      HasSubstr(
          "- test `t.py::test_leaky[a]` left orphan: worker 81 outlived its parent by 5s; shm: "));
  EXPECT_THAT(md, Not(HasSubstr("test_clean")));
}

TEST(Summary, CellsCannotBreakTheTable) {
  json result = load_fixture();
  json& sc = scenario(result, "hang");
  sc["name"] = "a|b\nc";
  sc["verdict"] = "error";
  sc["checks"][0]["name"] = "x|y";
  sc["checks"][0]["status"] = "error";
  sc["checks"][0]["reason"] = "line one\nline two <b>*bold*</b>";
  std::string md = render_summary_md(typed(result));
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

TEST(Summary, NoScenariosAndABareOne) {
  EXPECT_THAT(render_summary_md(RunResult{}), HasSubstr("No scenarios ran."));
  RunResult run;
  run.scenarios.emplace_back().name = "x";  // a run that broke: error
  std::string md = render_summary_md(run);
  EXPECT_EQ(table_rows(md).size(), 1u);
  EXPECT_THAT(md, HasSubstr("| x | \u274C error | - | - | - | - |"));
  EXPECT_THAT(md, HasSubstr("### \u274C x: error"));
}

// ---------------------------------------------------------------------------
// The hang diagnosis block.

// The fixture's hang as a hung DDP job: rank 0 in torch's all_reduce called
// from the user's step(), rank 1 without a Python stack.
json hung_ddp(json result) {
  json& d = scenario(result, "hang")["hang_diagnosis"];
  d["took_ms"] = 830;
  json& p0 = d["processes"][0];
  p0["role"] = "rank";
  p0["rank"] = 0;
  p0["state"] = "T";
  p0["waiting_in"] = "allreduce #7";
  p0["python_frames"] = {
      {{"file", "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py"},
       {"line", 1234},
       {"function", "all_reduce"},
       {"code", "work = group.allreduce([tensor], opts)"}},
      {{"file", "/usr/lib/python3.11/contextlib.py"},
       {"line", 81},
       {"function", "inner"},
       {"code", ""}},
      {{"file", "/w/train.py"},
       {"line", 42},
       {"function", "step"},
       {"code", "dist.all_reduce(t)"}}};
  json& p1 = d["processes"][1];
  p1["role"] = "rank";
  p1["rank"] = 1;
  p1["python_note"] = "py-bt: gdb has no Python support";
  json& p2 = d["processes"][2];
  p2["python_frames"] = {
      {{"file", "/w/train.py"}, {"line", 7}, {"function", "main"}, {"code", "run()"}}};
  return result;
}

// The lines of the block that starts at "**Hang diagnosis**" after `from`.
std::vector<std::string> hang_block(const std::string& md, const std::string& from) {
  size_t at = md.find(from);
  if (at == std::string::npos) return {};
  at = md.find("**Hang diagnosis**", at);
  if (at == std::string::npos) return {};
  std::vector<std::string> out;
  for (const auto& l : lines(md.substr(at))) {
    if (l.rfind("### ", 0) == 0) break;
    out.push_back(l);
  }
  return out;
}

TEST(SummaryHang, TableOfWhereEachProcessWaits) {
  json result = hung_ddp(load_fixture());
  auto block = hang_block(render_summary_md(typed(result)), "### \u23F8 hang: xfail");
  ASSERT_GE(block.size(), 8u);
  EXPECT_EQ(block[0], "**Hang diagnosis**: 3 live processes, diagnosed in 830.0 ms");
  EXPECT_EQ(block[1], "");
  EXPECT_EQ(block[2], "| role | pid | state | waiting in | where |");
  EXPECT_EQ(block[3], "|---|--:|---|---|---|");
  // Top frame in torch, so the user's own innermost frame follows it.
  EXPECT_EQ(
      block[4],
      "| rank 0 | 819 | T stopped | allreduce #7 | torch/distributed/distributed\\_c10d.py:1234 "
      "in all\\_reduce \u2190 train.py:42 in step \u2014 dist.all\\_reduce(t) |");
  EXPECT_EQ(block[5], "| rank 1 | 820 | S sleeping | - | (py-bt: gdb has no Python support) |");
  // Top frame in the user's code: that frame only.
  EXPECT_EQ(block[6], "| unknown | 821 | S sleeping | - | train.py:7 in main \u2014 run() |");
  // Dunders in a frame stay literal: escaped, they cannot turn into emphasis.
  scenario(result, "hang")["hang_diagnosis"]["processes"][2]["python_frames"][0]["code"] =
      "f(\"__main__\")";
  EXPECT_THAT(render_summary_md(typed(result)),
              HasSubstr("train.py:7 in main \u2014 f(\"\\_\\_main\\_\\_\") |"));
  EXPECT_EQ(block[7], "");
  EXPECT_EQ(block[8],
            "Full Python, C and kernel stacks: report.html (Hang diagnosis) and result.json "
            "(`hang_diagnosis`).");
  EXPECT_EQ(block.size(), 9u);
  // Scenarios that did not hang have none.
  EXPECT_EQ(count(render_summary_md(typed(result)), "**Hang diagnosis**"), 1u);
}

TEST(SummaryHang, InTheDetailsOfAFailedScenarioAfterItsChecks) {
  json result = hung_ddp(load_fixture());
  json& sc = scenario(result, "hang");
  sc["verdict"] = "fail";
  sc["hang_diagnosis"]["note"] = "gdb not installed: no user-space stacks";
  std::string md = render_summary_md(typed(result));
  EXPECT_THAT(md, Not(HasSubstr("\u23F8")));
  size_t details = md.find("### \u274C hang: fail");
  ASSERT_NE(details, std::string::npos);
  size_t block = md.find("\n\n**Hang diagnosis**", details);
  ASSERT_NE(block, std::string::npos);
  EXPECT_LT(md.find("- repro: ", details), block);  // a blank line ends the list first
  auto b = hang_block(md, "### \u274C hang: fail");
  EXPECT_NE(std::find(b.begin(), b.end(), "Note: gdb not installed: no user-space stacks"),
            b.end());
  EXPECT_EQ(count(md, "**Hang diagnosis**"), 1u);
}

TEST(SummaryHang, AtMostEightRowsAndCellsCannotBreakTheTable) {
  json result = hung_ddp(load_fixture());
  json& d = scenario(result, "hang")["hang_diagnosis"];
  d["processes"][0]["waiting_in"] = "a|b\nc";
  d["processes"][0]["python_frames"][2]["code"] = "x = y | z  # <b>*not bold*</b>";
  for (int i = 0; i < 9; ++i)
    d["processes"].push_back({{"pid", 900 + i}, {"role", "worker"}, {"state", "S"}});
  std::string md = render_summary_md(typed(result));
  auto block = hang_block(md, "### \u23F8 hang: xfail");
  std::vector<std::string> rows;
  for (const auto& l : block)
    if (l.rfind("| ", 0) == 0) rows.push_back(l);
  ASSERT_EQ(rows.size(), 9u);  // the header and eight processes
  for (const auto& r : rows) EXPECT_EQ(separators(r), 6u) << r;
  EXPECT_THAT(rows[1], HasSubstr("| a\\|b c |"));
  EXPECT_THAT(rows[1], HasSubstr("x = y \\| z  # &lt;b&gt;\\*not bold\\*&lt;/b&gt; |"));
  EXPECT_THAT(md, HasSubstr("\n\u2026 and 4 more.\n"));
}

}  // namespace
}  // namespace aftermath
