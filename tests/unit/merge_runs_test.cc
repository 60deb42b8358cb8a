// Tests for merging runs read from their result.json (reports/merge_runs): the
// shards of `run --shard I/N` back in the suite's order, what is missing
// said, the same scenario twice refused, paths that still resolve, totals
// counted again.
#include "reports/merge_runs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/core/repeat_stats.h"
#include "harness/core/result.h"
#include "reports/html.h"
#include "reports/json.h"
#include "reports/summary.h"
#include "reports/view.h"
#include "tests/unit/report_fixture.h"

namespace aftermath {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

// The run's folder when it ran (on a CI runner), and where its result.json
// was downloaded to before the merge; the merged reports go to kOut.
std::string then_dir(int shard) { return "/ci/runner/out-" + std::to_string(shard); }
std::string now_dir(int shard) { return "/dl/out-" + std::to_string(shard); }
constexpr const char* kOut = "/dl/all";

ScenarioResult scenario(const std::string& name, int shard, Verdict verdict = Verdict::Pass,
                        int run_index = 0, int runs = 1) {
  ScenarioResult s;
  s.name = name;
  s.verdict = verdict;
  s.run_index = run_index;
  s.runs = runs;
  s.out_dir = then_dir(shard) + "/" + name;
  if (runs > 1) s.out_dir += "/run-" + std::to_string(run_index + 1);
  s.stdout_path = s.out_dir + "/stdout.log";
  s.stderr_path = s.out_dir + "/stderr.log";
  CheckResult c;
  c.name = "no_orphans";
  c.status = verdict == Verdict::Fail ? CheckStatus::Fail : CheckStatus::Pass;
  s.checks = {c};
  s.timings_ms["total_ms"] = 100.0 * (run_index + 1);
  return s;
}

// Shard `index`/`count` of a suite of `total` scenarios named `names` (at
// `positions`); `results` what it ran.
MergeInput shard(int index, int count, std::size_t total, std::vector<std::size_t> positions,
                 std::vector<std::string> names, std::vector<ScenarioResult> results) {
  RunResult run;
  run.tool_version = "0.1.0";
  run.command_line = "aftermath run --shard " + std::to_string(index) + "/" + std::to_string(count);
  run.environment = {{"kernel", "6.1.0"}, {"host", "runner-" + std::to_string(index)}};
  run.scenarios = std::move(results);
  if (run.scenarios.size() > 0 && run.scenarios[0].runs > 1)
    run.aggregates = aggregate(run.scenarios);
  run.shard = ShardInfo{{index, count}, total, std::move(positions), std::move(names)};
  // Through the text, as the merge reads it from disk.
  return {"out-" + std::to_string(index) + "/result.json", now_dir(index) + "/result.json",
          testing_reports::typed(json::parse(write_json(run)))};
}

std::vector<std::string> names_of(const json& result) {
  std::vector<std::string> out;
  for (const auto& sc : result["scenarios"]) {
    std::string label = sc["name"];
    if (sc.contains("run")) label += "#" + std::to_string(sc["run"].get<int>());
    out.push_back(label);
  }
  return out;
}

// A merge and the result.json it writes.
struct Merged {
  RunResult run;
  json result;
  std::vector<std::string> incomplete, notes;
};

Merged merge(const std::vector<MergeInput>& inputs) {
  auto m = merge_runs(inputs, kOut, "aftermath merge --out all out-1 out-2");
  if (!m) {
    ADD_FAILURE() << m.error().what;
    return {};
  }
  return {m->run, to_json(m->run), m->incomplete, m->notes};
}

// A suite of five, two shards: shard 1 ran a, c, e (positions 0, 2, 4),
// shard 2 ran b, d. Given in either order, the merge lists a..e.
TEST(MergeRuns, TheSuiteOrderComesBackFromThePositions) {
  auto s1 = shard(1, 2, 5, {0, 2, 4}, {"a", "c", "e"},
                  {scenario("a", 1), scenario("c", 1), scenario("e", 1)});
  auto s2 = shard(2, 2, 5, {1, 3}, {"b", "d"}, {scenario("b", 2), scenario("d", 2)});
  for (const auto& inputs : {std::vector<MergeInput>{s2, s1}, std::vector<MergeInput>{s1, s2}}) {
    Merged m = merge(inputs);
    EXPECT_EQ(names_of(m.result), (std::vector<std::string>{"a", "b", "c", "d", "e"}));
    EXPECT_TRUE(m.incomplete.empty());
    EXPECT_TRUE(m.notes.empty());
    EXPECT_EQ(m.result["merge"]["complete"], true);
    EXPECT_EQ(m.result["merge"]["shards"], json({{"count", 2}, {"total", 5}}));
    EXPECT_FALSE(m.result.contains("shard")) << "the merged run is the whole run";
  }
}

// With --repeat each scenario's runs stay together and in order, and the
// statistics over them are those of the unsharded run.
TEST(MergeRuns, RepeatedRunsKeepTheirOrderAndTheirStatistics) {
  auto runs = [](const std::string& name, int shard, Verdict second) {
    return std::vector<ScenarioResult>{scenario(name, shard, Verdict::Pass, 0, 2),
                                       scenario(name, shard, second, 1, 2)};
  };
  auto a = runs("a", 1, Verdict::Fail), b = runs("b", 2, Verdict::Pass),
       c = runs("c", 1, Verdict::Pass);
  std::vector<ScenarioResult> s1_runs = a;
  s1_runs.insert(s1_runs.end(), c.begin(), c.end());
  auto s1 = shard(1, 2, 3, {0, 2}, {"a", "c"}, s1_runs);
  auto s2 = shard(2, 2, 3, {1}, {"b"}, b);
  Merged m = merge({s2, s1});
  EXPECT_EQ(names_of(m.result),
            (std::vector<std::string>{"a#1", "a#2", "b#1", "b#2", "c#1", "c#2"}));
  std::vector<ScenarioResult> whole = a;
  whole.insert(whole.end(), b.begin(), b.end());
  whole.insert(whole.end(), c.begin(), c.end());
  json want = json::array();
  for (const auto& agg : aggregate(whole)) want.push_back(to_json(agg));
  EXPECT_EQ(m.result["aggregates"], want);
  EXPECT_EQ(m.result["aggregates"][0]["failed"], 1);
}

// The same scenario run in two inputs (a folder given twice, two runs
// mixed) is refused, naming the scenario and both files; another run of the
// same scenario is not the same run.
TEST(MergeRuns, TheSameScenarioRunTwiceIsRefusedNamingBoth) {
  auto s1 = shard(1, 2, 3, {0, 2}, {"a", "c"}, {scenario("a", 1), scenario("c", 1)});
  auto again = s1;
  again.path = "elsewhere/result.json";
  auto m = merge_runs({s1, again}, kOut, "");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().what, "scenario 'a' is in both out-1/result.json and elsewhere/result.json");

  auto r1 = shard(1, 1, 1, {0}, {"a"}, {scenario("a", 1, Verdict::Pass, 1, 5)});
  auto r2 = shard(1, 1, 1, {0}, {"a"}, {scenario("a", 2, Verdict::Pass, 1, 5)});
  r2.path = "out-2/result.json";
  m = merge_runs({r1, r2}, kOut, "");
  ASSERT_FALSE(m);
  EXPECT_THAT(
      m.error().what,
      HasSubstr("scenario 'a' (run 2/5) is in both out-1/result.json and out-2/result.json"));

  auto r3 = shard(2, 2, 1, {}, {}, {scenario("a", 2, Verdict::Pass, 2, 5)});
  EXPECT_TRUE(merge_runs({r1, r3}, kOut, "")) << "run 3/5 is another run of 'a'";
}

// Shard 2 of 3 never came back: the merge still holds shards 1 and 3, in
// order, and says which shard and positions are missing.
TEST(MergeRuns, AMissingShardIsSaidAndRecorded) {
  auto s1 = shard(1, 3, 5, {0, 3}, {"a", "d"}, {scenario("a", 1), scenario("d", 1)});
  auto s3 = shard(3, 3, 5, {2}, {"c"}, {scenario("c", 3)});
  Merged m = merge({s3, s1});
  EXPECT_EQ(names_of(m.result), (std::vector<std::string>{"a", "c", "d"}));
  ASSERT_EQ(m.incomplete.size(), 1u);
  EXPECT_EQ(m.incomplete[0], "shard 2/3 is missing: positions 1, 4 (of 5, from 0) did not run");
  const json& record = m.result["merge"];
  EXPECT_EQ(record["complete"], false);
  EXPECT_EQ(record["missing_shards"], json({2}));
  EXPECT_EQ(record["missing_positions"], json({1, 4}));
  EXPECT_EQ(record["incomplete"], json(m.incomplete));
  EXPECT_EQ(m.result["summary"]["scenarios"], 3);
  // The reports say it before anything else; a whole run's do not.
  EXPECT_THAT(render_summary_md(m.run), HasSubstr("**incomplete**: shard 2/3 is missing"));
  EXPECT_THAT(render_html(m.run, kOut),
              HasSubstr("<p class=\"error\">Incomplete: shard 2/3 is missing"));
  auto s2 = shard(2, 3, 5, {1, 4}, {"b", "e"}, {scenario("b", 2), scenario("e", 2)});
  Merged whole = merge({s1, s2, s3});
  EXPECT_TRUE(whole.incomplete.empty());
  EXPECT_THAT(render_summary_md(whole.run), Not(HasSubstr("incomplete")));
  EXPECT_THAT(render_html(whole.run, kOut), Not(HasSubstr("Incomplete")));
}

// A shard whose run was interrupted lacks its last positions; two runs'
// shards that disagree cover a position twice. An empty shard (more shards
// than scenarios) is not missing.
TEST(MergeRuns, AGapOrAPositionCoveredTwiceIsSaid) {
  auto s1 = shard(1, 2, 5, {0, 2, 4}, {"a", "c", "e"}, {scenario("a", 1), scenario("c", 1)});
  auto s2 = shard(2, 2, 5, {1, 3}, {"b", "d"}, {scenario("b", 2), scenario("d", 2)});
  Merged m = merge({s1, s2});
  ASSERT_EQ(m.incomplete.size(), 1u);
  EXPECT_EQ(m.incomplete[0],
            "shard 1/2 (out-1/result.json) lacks positions 4: its run ended before them");
  EXPECT_EQ(m.result["merge"]["missing_positions"], json({4}));
  EXPECT_EQ(m.result["merge"]["missing_shards"], json::array());

  auto other = shard(2, 2, 5, {1, 3, 4}, {"x", "y", "z"},
                     {scenario("x", 2), scenario("y", 2), scenario("z", 2)});
  auto whole1 = shard(1, 2, 5, {0, 2, 4}, {"a", "c", "e"},
                      {scenario("a", 1), scenario("c", 1), scenario("e", 1)});
  m = merge({whole1, other});
  ASSERT_EQ(m.incomplete.size(), 1u);
  EXPECT_EQ(m.incomplete[0],
            "position 4 is covered twice: 'e' in out-1/result.json, 'z' in out-2/result.json");
  EXPECT_EQ(m.result["merge"]["repeated_positions"], json({4}));

  // Three scenarios over four shards: shard 4 has nothing to run.
  std::vector<MergeInput> three;
  for (int k = 1; k <= 3; ++k) {
    std::string name(1, static_cast<char>('a' + k - 1));
    three.push_back(shard(k, 4, 3, {static_cast<std::size_t>(k - 1)}, {name}, {scenario(name, k)}));
  }
  m = merge(three);
  EXPECT_TRUE(m.incomplete.empty()) << m.incomplete[0];
  EXPECT_EQ(m.result["merge"]["complete"], true);
}

// Every path points at where the shard's folder is now, relative to the
// merged report's folder; the job's own files elsewhere are left alone.
TEST(MergeRuns, PathsAreRebasedToResolveFromTheMergedFolder) {
  ScenarioResult a = scenario("a", 1);
  a.process_logs[7] = {"logs/rank-7.out", then_dir(1) + "/a/logs/rank-7.err"};
  a.process_logs[8] = {"/var/log/job/rank-8.out", ""};
  ProcessHistory p7, p8;
  p7.pid = 7;
  p8.pid = 8;
  a.processes = {p7, p8};
  NodeResult node;
  node.out_dir = then_dir(1) + "/a/node1";
  a.nodes = {node};
  ScenarioResult b = scenario("b", 2, Verdict::Pass, 1, 3);  // <out>/b/run-2
  auto s1 = shard(1, 2, 2, {0}, {"a"}, {a});
  auto s2 = shard(2, 2, 2, {1}, {"b"}, {b});
  Merged m = merge({s1, s2});
  const json& ma = m.result["scenarios"][0];
  EXPECT_EQ(ma["out_dir"], "../out-1/a");
  EXPECT_EQ(ma["stdout_path"], "../out-1/a/stdout.log");
  EXPECT_EQ(ma["stderr_path"], "../out-1/a/stderr.log");
  EXPECT_EQ(ma["processes"][0]["logs"]["stdout"], "logs/rank-7.out")
      << "relative to out_dir, which moved";
  EXPECT_EQ(report::scenario_file(m.run.scenarios[0], "logs/rank-7.out"),
            "../out-1/a/logs/rank-7.out");
  EXPECT_EQ(ma["processes"][0]["logs"]["stderr"], "../out-1/a/logs/rank-7.err");
  EXPECT_EQ(ma["processes"][1]["logs"]["stdout"], "/var/log/job/rank-8.out");
  EXPECT_EQ(ma["nodes"][0]["out_dir"], "../out-1/a/node1");
  EXPECT_EQ(m.result["scenarios"][1]["out_dir"], "../out-2/b/run-2");
  EXPECT_EQ(m.result["merge"]["inputs"][0]["path"], "../out-1/result.json");

  // A merged result merged again: its relative paths were relative to its folder.
  MergeInput again{"all/result.json", std::string(kOut) + "/result.json", m.run};
  auto twice = merge_runs({again}, "/dl/final", "");
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->run.scenarios[0].stdout_path, "../out-1/a/stdout.log");
  auto deeper = merge_runs({again}, "/dl/final/nested", "");
  ASSERT_TRUE(deeper);
  EXPECT_EQ(deeper->run.scenarios[0].stdout_path, "../../out-1/a/stdout.log");
}

// summary is counted again over every scenario; what cannot be added up is
// joined or kept per input.
TEST(MergeRuns, TheTopLevelFieldsDescribeTheMergedRun) {
  auto s1 = shard(1, 2, 4, {0, 2}, {"a", "c"},
                  {scenario("a", 1, Verdict::Fail), scenario("c", 1, Verdict::XFail)});
  auto s2 =
      shard(2, 2, 4, {1, 3}, {"b", "d"}, {scenario("b", 2), scenario("d", 2, Verdict::Error)});
  Merged m = merge({s1, s2});
  EXPECT_EQ(m.result["summary"], json({{"scenarios", 4},
                                       {"pass", 1},
                                       {"fail", 1},
                                       {"xfail", 1},
                                       {"xpass", 0},
                                       {"error", 1},
                                       {"skipped", 0}}));
  EXPECT_EQ(m.result["schema"], "aftermath/result");
  EXPECT_EQ(m.result["schema_version"], kResultSchemaVersion);
  EXPECT_EQ(m.result["tool_version"], "0.1.0");
  EXPECT_EQ(m.result["command_line"], "aftermath merge --out all out-1 out-2");
  EXPECT_EQ(m.result["environment"], json({{"kernel", "6.1.0"}, {"host", "runner-1, runner-2"}}));
  EXPECT_FALSE(m.result.contains("aggregates"));
  const json& in = m.result["merge"]["inputs"];
  ASSERT_EQ(in.size(), 2u);
  EXPECT_EQ(in[1], json({{"path", "../out-2/result.json"},
                         {"scenarios", 2},
                         {"shard", "2/2"},
                         {"command_line", "aftermath run --shard 2/2"},
                         {"tool_version", "0.1.0"}}));
}

// Runs that are not shards of one run keep their input order, and nothing
// is called missing; a mix of shard counts says why it was not checked.
TEST(MergeRuns, RunsThatAreNotShardsOfOneRunKeepInputOrder) {
  auto plain = [](const std::string& name, const std::string& path) {
    RunResult run;
    run.scenarios = {scenario(name, 1)};
    return MergeInput{path, "/dl/" + path, testing_reports::typed(json::parse(write_json(run)))};
  };
  Merged m = merge({plain("z", "one/result.json"), plain("a", "two/result.json")});
  EXPECT_EQ(names_of(m.result), (std::vector<std::string>{"z", "a"}));
  EXPECT_TRUE(m.incomplete.empty());
  EXPECT_TRUE(m.notes.empty());
  EXPECT_FALSE(m.result["merge"].contains("complete"));

  auto s2 = shard(2, 2, 4, {1, 3}, {"b", "d"}, {scenario("b", 2), scenario("d", 2)});
  auto t1 = shard(1, 3, 4, {0, 3}, {"a", "e"}, {scenario("a", 1), scenario("e", 1)});
  m = merge({s2, t1});
  EXPECT_EQ(names_of(m.result), (std::vector<std::string>{"b", "d", "a", "e"}));
  EXPECT_TRUE(m.incomplete.empty());
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_EQ(m.notes[0],
            "the inputs are not the shards of one run (out-2/result.json: shard 2/2 of 4, "
            "out-1/result.json: shard 1/3 of 4): kept in input order, completeness not checked");
}

// A result.json an earlier release wrote (no shard record, no logs, few
// fields) merges: what it lacks reads as its default.
TEST(MergeRuns, AnOlderDocumentMerges) {
  json doc = json::parse(R"({"schema_version": 1, "scenarios": [
      {"name": "x", "verdict": "fail", "out_dir": "/old/x"},
      {"name": "y", "verdict": "pass"}]})");
  MergeInput old{"old/result.json", "/dl/old/result.json", testing_reports::typed(doc)};
  auto m = merge_runs({old}, kOut, "");
  ASSERT_TRUE(m) << m.error().what;
  json result = to_json(m->run);
  EXPECT_EQ(result["summary"]["scenarios"], 2);
  EXPECT_EQ(result["summary"]["fail"], 1);
  EXPECT_EQ(result["summary"]["pass"], 1);
  EXPECT_EQ(result["merge"]["inputs"][0]["shard"], nullptr);
}

}  // namespace
}  // namespace aftermath
