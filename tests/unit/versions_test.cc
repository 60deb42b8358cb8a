// Tests for the side-by-side view of one run on several interpreters
// (reports/versions.h): a column per PyTorch version from each part's typed
// run, the rows that differ marked, a part that did not finish said so, a
// scenario's repeated runs a row each, and both files written from the
// parts' result.json as `aftermath run --python A --python B` leaves them.
#include "reports/versions.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "reports/json.h"
#include "tests/support/temp_dir.h"

namespace aftermath {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr Nanos kMs = 1'000'000;

VersionRun part(const std::string& torch, const std::string& dir) {
  VersionRun v;
  v.facts.interpreter = "/venv-" + torch + "/bin/python";
  v.facts.python = "3.11.7";
  v.facts.torch = parse_torch_version(torch);
  v.dir = dir;
  v.result_path = "/out/" + dir + "/result.json";
  return v;
}

CheckResult check(const std::string& name, CheckStatus status, json measured = json::object()) {
  CheckResult c;
  c.name = name;
  c.status = status;
  c.measured = std::move(measured);
  return c;
}

ScenarioResult scenario(const std::string& name, Verdict verdict, std::vector<CheckResult> checks) {
  ScenarioResult s;
  s.name = name;
  s.verdict = verdict;
  s.checks = std::move(checks);
  return s;
}

// The loader scenario leaves a lingering torch_shm_manager on one version
// and an orphaned worker on the other.
std::vector<std::optional<RunResult>> two_versions() {
  json helper = {{"orphans", {{{"role", "helper"}, {"orphan_lifetime_ms", 4900}}}}};
  json worker = {{"orphans",
                  {{{"role", "worker"}, {"orphan_lifetime_ms", 120}},
                   {{"role", "worker"}, {"orphan_lifetime_ms", 1500}}}}};
  ScenarioResult old_loader =
      scenario("loader", Verdict::Pass, {check("no_orphans", CheckStatus::Pass, helper)});
  old_loader.timings_ms = {{"to_all_gone_ms", 5000.0}, {"to_shm_baseline_ms", std::nullopt}};
  old_loader.timeline.facts.top_outcome = Outcome::exited(0);
  ScenarioResult new_loader =
      scenario("loader", Verdict::Fail, {check("no_orphans", CheckStatus::Fail, worker)});
  new_loader.timeline.facts.deadline_hit = true;
  RunResult a, b;
  a.scenarios = {scenario("clean", Verdict::Pass, {check("all_exited", CheckStatus::Pass)}),
                 old_loader};
  b.scenarios = {scenario("clean", Verdict::Pass, {check("all_exited", CheckStatus::Pass)}),
                 new_loader};
  return {a, b};
}

TEST(Versions, AColumnPerVersionAndTheRowsThatDiffer) {
  std::vector<VersionRun> runs = {part("1.13.1", "torch-1.13.1"), part("2.13.0", "torch-2.13.0")};
  json doc = versions_json(runs, two_versions());
  ASSERT_EQ(doc["versions"].size(), 2u);
  EXPECT_EQ(doc["versions"][0]["torch"], "1.13.1");
  EXPECT_EQ(doc["versions"][1]["summary"]["fail"], 1);
  EXPECT_EQ(doc["versions"][1]["summary"]["scenarios"], 2);
  ASSERT_EQ(doc["scenarios"].size(), 2u);
  const json& clean = doc["scenarios"][0];
  EXPECT_EQ(clean["name"], "clean");
  EXPECT_FALSE(clean["differs"].get<bool>());
  const json& loader = doc["scenarios"][1];
  EXPECT_TRUE(loader["differs"].get<bool>());
  const json& before = loader["cells"][0];
  EXPECT_EQ(before["verdict"], "pass");
  EXPECT_EQ(before["helpers_orphaned"], 1);
  EXPECT_EQ(before["helper_linger_ms"], 4900);
  EXPECT_EQ(before["orphans"], 0);
  EXPECT_EQ(before["to_all_gone_ms"], 5000);
  EXPECT_FALSE(before.contains("to_shm_baseline_ms")) << "not reached: not shown";
  EXPECT_EQ(before["exit"], "exited(0)");
  const json& after = loader["cells"][1];
  EXPECT_EQ(after["failed"], json({"no_orphans"}));
  EXPECT_EQ(after["orphans"], 2);
  EXPECT_EQ(after["longest_orphan_ms"], 1500);
  EXPECT_EQ(after["exit"], "still running at the deadline");

  std::string md = render_versions_md(doc);
  EXPECT_THAT(md, HasSubstr("| clean | **pass** | **pass** | |\n"));
  EXPECT_THAT(md, HasSubstr("**fail** (no_orphans); 2 orphans ≤ 1.50 s; exit still running at the "
                            "deadline | **yes** |"));
  EXPECT_THAT(md, HasSubstr("1 helper linger ≤ 4.90 s; all gone 5.00 s; exit exited(0)"));
  EXPECT_THAT(md, HasSubstr("1 of 2 scenario(s) differ"));
  EXPECT_THAT(md, HasSubstr("`aftermath diff torch-1.13.1/result.json torch-2.13.0/result.json`"));
}

TEST(Versions, APartThatDidNotFinishSaysSo) {
  std::vector<VersionRun> runs = {part("1.13.1", "torch-1.13.1"), part("2.13.0", "torch-2.13.0")};
  auto results = two_versions();
  results[1].reset();
  json doc = versions_json(runs, results);
  EXPECT_FALSE(doc["versions"][1]["finished"].get<bool>());
  EXPECT_TRUE(doc["scenarios"][0]["cells"][1].is_null());
  EXPECT_TRUE(doc["scenarios"][0]["differs"].get<bool>());
  std::string md = render_versions_md(doc);
  EXPECT_THAT(md, HasSubstr("(did not finish)"));
  EXPECT_THAT(md, HasSubstr("| not run |"));
}

// With --repeat N each run of a scenario is a row of its own.
TEST(Versions, EachRepeatedRunIsARow) {
  std::vector<VersionRun> runs = {part("2.13.0", "torch-2.13.0")};
  RunResult r;
  for (int i = 0; i < 3; ++i) {
    ScenarioResult s = scenario("hang", i == 1 ? Verdict::Fail : Verdict::Pass, {});
    s.run_index = i;
    s.runs = 3;
    r.scenarios.push_back(s);
  }
  json doc = versions_json(runs, {r});
  ASSERT_EQ(doc["scenarios"].size(), 3u);
  EXPECT_EQ(doc["scenarios"][0]["name"], "hang run 1");
  EXPECT_EQ(doc["scenarios"][1]["name"], "hang run 2");
  EXPECT_EQ(doc["scenarios"][1]["cells"][0]["verdict"], "fail");
  EXPECT_EQ(doc["scenarios"][2]["name"], "hang run 3");
}

// The files, from the parts' result.json as the runs wrote them; one that
// does not read is a part that did not finish.
TEST(Versions, WrittenFromEachPartsResultJson) {
  testing::TempDir dir;
  auto results = two_versions();
  std::vector<VersionRun> runs = {part("1.13.1", "torch-1.13.1"), part("2.13.0", "torch-2.13.0")};
  runs[0].result_path = dir / "a.json";
  runs[1].result_path = dir / "b.json";
  dir.write("a.json", write_json(*results[0]));
  dir.write("b.json", R"({"schema_version": 1, "scenarios": [{"name": 3}]})");
  auto md = write_versions(runs, dir.path());
  ASSERT_TRUE(md) << md.error().what;
  json doc = json::parse(std::ifstream(dir / "versions.json"));
  EXPECT_TRUE(doc["versions"][0]["finished"].get<bool>());
  EXPECT_FALSE(doc["versions"][1]["finished"].get<bool>());
  std::ifstream f(dir / "versions.md");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, *md);
  EXPECT_EQ(write_versions(runs, dir / "absent").error().what,
            "cannot write versions.json and versions.md under " + dir / "absent");
}

}  // namespace
}  // namespace aftermath
