// Tests for the result.json writer (reports/json): the golden file, the
// round trip through parse, and the fields of each part (writer_fixture.h
// holds the hand-made run and says how to regenerate the golden).
#include "reports/json.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/core/result.h"
#include "harness/core/timeline.h"
#include "harness/core/types.h"
#include "tests/unit/writer_fixture.h"

namespace aftermath {
namespace {

using nlohmann::json;
using namespace testing_writers;

bool volatile_key(const std::string& key) {
  static const std::set<std::string> kKeys = {"pid",     "ppid",        "last_ppid",   "started_at",
                                              "out_dir", "stdout_path", "stderr_path", "time",
                                              "repro",   "command_line"};
  return kKeys.count(key) > 0 || (key.size() >= 3 && key.compare(key.size() - 3, 3, "_ms") == 0);
}

// Replaces pids, times and paths with "*". Nulls stay null: whether a time
// was reached at all is part of the format under test.
void normalise_json(json& j) {
  if (j.is_array()) {
    for (auto& e : j) normalise_json(e);
  } else if (j.is_object()) {
    for (auto& [key, value] : j.items()) {
      if (value.is_structured()) {
        normalise_json(value);
      } else if (!value.is_null() && volatile_key(key)) {
        value = "*";
      }
    }
  }
}

// ---------------------------------------------------------------------------
// result.json

TEST(ReportsJsonGolden, MatchesGoldenFile) {
  json j = json::parse(write_json(sample_run()));
  normalise_json(j);
  compare_or_update("result.json", j.dump(2) + "\n");
}

TEST(ReportsJson, RoundTripsThroughParse) {
  const RunResult run = sample_run();
  const std::string text = write_json(run);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  json parsed;
  ASSERT_NO_THROW(parsed = json::parse(text));
  EXPECT_EQ(parsed, to_json(run));
}

TEST(ReportsJson, TopLevelShapeAndSummary) {
  const json j = to_json(sample_run());
  EXPECT_EQ(j["schema"], "aftermath/result");
  EXPECT_EQ(j["schema_version"], kResultSchemaVersion);
  EXPECT_EQ(j["tool_version"], "0.1.0");
  EXPECT_EQ(j["environment"]["kernel"], "6.1.0");
  EXPECT_EQ(j["summary"], json({{"scenarios", 2},
                                {"pass", 0},
                                {"fail", 1},
                                {"xfail", 1},
                                {"xpass", 0},
                                {"error", 0},
                                {"skipped", 0}}));
  ASSERT_EQ(j["scenarios"].size(), 2u);
}

// --shard I/N: the slice is recorded for `aftermath merge`; absent otherwise.
TEST(ReportsJson, AShardRecordsItsSlice) {
  RunResult run = sample_run();
  EXPECT_FALSE(to_json(run).contains("shard"));
  run.shard = ShardInfo{{2, 3}, 5, {1, 4}, {"orphan_reaper", "shm_leak"}};
  EXPECT_EQ(to_json(run)["shard"], json::parse(R"({"index": 2, "count": 3, "total": 5,
      "positions": [1, 4], "names": ["orphan_reaper", "shm_leak"]})"));
}

TEST(ReportsJson, ClosedTypesAreWrittenByName) {
  const json j = to_json(sample_run());
  const std::set<std::string> verdicts = {"pass", "fail", "xfail", "xpass", "error", "skipped"};
  const std::set<std::string> statuses = {"pass", "fail", "skipped", "error"};
  const std::set<std::string> roles = {"launcher", "rank", "worker", "helper", "unknown"};
  for (const auto& s : j["scenarios"]) {
    EXPECT_TRUE(verdicts.count(s["verdict"].get<std::string>())) << s["verdict"];
    for (const auto& c : s["checks"])
      EXPECT_TRUE(statuses.count(c["status"].get<std::string>())) << c["status"];
    for (const auto& p : s["processes"])
      EXPECT_TRUE(roles.count(p["role"].get<std::string>())) << p["role"];
  }
  const json& xfail = j["scenarios"][0];
  const json& fail = j["scenarios"][1];
  EXPECT_EQ(xfail["verdict"], "xfail");
  EXPECT_EQ(fail["verdict"], "fail");
  EXPECT_EQ(xfail["checks"][0]["status"], "fail");
  EXPECT_EQ(xfail["checks"][0]["expected_to_fail"], true);
  EXPECT_EQ(xfail["checks"][2]["status"], "skipped");
  EXPECT_EQ(fail["checks"][1]["status"], "error");

  EXPECT_EQ(xfail["top"]["outcome"],
            json({{"kind", "exited"}, {"code", 0}, {"text", "exited(0)"}}));
  EXPECT_EQ(fail["top"]["outcome"], json({{"kind", "killed"},
                                          {"signal", "SIGKILL"},
                                          {"signo", 9},
                                          {"core_dumped", false},
                                          {"text", "killed(SIGKILL)"}}));
  EXPECT_EQ(to_json(Outcome::killed(11, true))["text"], "killed(SIGSEGV, core)");
}

TEST(ReportsJson, ScenarioFields) {
  const json j = to_json(sample_run());
  const json& xfail = j["scenarios"][0];
  const json& fail = j["scenarios"][1];
  // "error" is present only when the run itself failed.
  EXPECT_FALSE(xfail.contains("error"));
  EXPECT_EQ(fail["error"], "lost track of the job: waitid: ECHILD");
  EXPECT_EQ(xfail["scenario"]["hash"], "9f86d081884c7d65");
  EXPECT_EQ(xfail["seed"], 42);
  EXPECT_EQ(fail["containment"], json({{"mode", "subreaper"},
                                       {"note", "unprivileged user namespaces are disabled"},
                                       {"shm", ""}}));
  EXPECT_EQ(fail["top"]["pid"], 3001);
  EXPECT_EQ(fail["top"]["deadline_hit"], true);
  EXPECT_EQ(fail["faults"], json::array());
  EXPECT_EQ(xfail["checks"][0]["measured"]["orphans"][0]["comm"], "worker");

  // Unreached timings are null, not absent and not zero.
  EXPECT_TRUE(xfail["timings_ms"]["to_all_exited_ms"].is_null());
  EXPECT_EQ(xfail["timings_ms"]["to_shm_baseline_ms"], 0.0);
  EXPECT_EQ(xfail["timings_ms"]["total_ms"], 2300.25);

  const json& worker = xfail["processes"][1];
  EXPECT_EQ(worker["ppid"], 2001);
  EXPECT_EQ(worker["last_ppid"], 1);
  EXPECT_EQ(worker["orphaned_ms"], 812.5);
  EXPECT_TRUE(worker["exited_ms"].is_null());
  EXPECT_TRUE(worker["outcome"].is_null());
  EXPECT_EQ(worker["top"], false);
  EXPECT_EQ(xfail["processes"][0]["top"], true);
  EXPECT_EQ(fail["processes"][1]["zombie_since_ms"], 900.0);
}

TEST(ReportsJson, TimelineEntriesCarryOnlyTheirKindsFields) {
  const json j = to_json(sample_run());
  std::map<std::string, json> first_of_kind;
  for (const auto& s : j["scenarios"])
    for (const auto& e : s["timeline"]) first_of_kind.emplace(e["kind"].get<std::string>(), e);
  const std::map<std::string, std::set<std::string>> expected_keys = {
      {"phase", {"name"}},
      {"proc_start", {"pid", "ppid", "comm", "cmdline", "role", "depth", "start_ticks"}},
      {"proc_parent", {"pid", "ppid"}},
      {"proc_state", {"pid", "state"}},
      {"proc_exit", {"pid", "outcome"}},
      {"proc_gone", {"pid"}},
      {"shm_add", {"name", "bytes", "baseline"}},
      {"shm_resize", {"name", "bytes"}},
      {"shm_remove", {"name"}},
      {"shm_reclaim", {"name", "bytes"}},
      {"tmp_left", {"path", "bytes", "owner", "residue", "held_outside_by"}},
      {"tmp_reclaim", {"path", "bytes"}},
      {"signal", {"pid", "signal", "signo", "why"}},
      {"sample", {"procs", "shm_bytes"}},
      {"note", {"text"}},
  };
  for (const auto& [kind, keys] : expected_keys) {
    ASSERT_TRUE(first_of_kind.count(kind)) << "sample run lacks a " << kind << " entry";
    std::set<std::string> got;
    for (const auto& [k, v] : first_of_kind[kind].items()) got.insert(k);
    std::set<std::string> want = keys;
    want.insert({"t_ms", "kind"});
    EXPECT_EQ(got, want) << kind;
  }
  EXPECT_EQ(first_of_kind["proc_state"]["state"], "Z");
  EXPECT_EQ(first_of_kind["signal"]["signal"], "SIGKILL");
  EXPECT_EQ(first_of_kind["signal"]["why"], "deadline");
  EXPECT_EQ(first_of_kind["proc_start"]["comm"], "launcher");
  EXPECT_EQ(first_of_kind["proc_start"]["role"], "launcher");
  EXPECT_EQ(first_of_kind["proc_start"]["t_ms"], 1.5);
  EXPECT_EQ(first_of_kind["sample"]["procs"], 1);
  EXPECT_EQ(first_of_kind["shm_add"]["baseline"], true);

  const json& killed_exit = j["scenarios"][1]["timeline"][10];
  ASSERT_EQ(killed_exit["kind"], "proc_exit");
  EXPECT_EQ(killed_exit["outcome"]["signal"], "SIGKILL");
  EXPECT_TRUE(j["scenarios"][1]["timeline"][11]["outcome"].is_null());
}

// The kinds the golden file has no entry of, each as result.json showed it
// before the kinds had payloads of their own (a field left out where its kind
// says "when set").
TEST(ReportsJson, EveryOtherKindShowsExactlyItsFields) {
  struct Case {
    Observation o;
    json want;
  };
  const std::vector<Case> cases = {
      {obs::announce(1'000'000, 7, Role::Worker, 1, 3, "{\"a\":1}"),
       {{"pid", 7}, {"role", "worker"}, {"rank", 1}, {"worker", 3}, {"labels", {{"a", 1}}}}},
      {obs::event(1'000'000, 7, "memory", "{\"step\":2}"),
       {{"pid", 7}, {"name", "memory"}, {"fields", {{"step", 2}}}}},
      {obs::event(1'000'000, 7, "raw", "not json"),
       {{"pid", 7}, {"name", "raw"}, {"fields", "not json"}}},
      {obs::event(1'000'000, 7, "empty", ""),
       {{"pid", 7}, {"name", "empty"}, {"fields", json::object()}}},
      {obs::point(1'000'000, 7, "loader.worker.getitem", 12, "{\"worker\":3}"),
       {{"pid", 7}, {"name", "loader.worker.getitem"}, {"hit", 12}, {"labels", {{"worker", 3}}}}},
      {obs::fault(1'000'000, 0, 7, FaultAction::Sigkill, "rank:1"),
       {{"index", 0}, {"pid", 7}, {"action", "SIGKILL"}, {"what", "rank:1"}}},
      {obs::memory(1'000'000, 4096, 3), {{"rss_bytes", 4096}, {"procs", 3}}},
      {obs::proc_exec(1'000'000, 7, "python3", "python3 -c pass", Role::Helper),
       {{"pid", 7}, {"comm", "python3"}, {"cmdline", "python3 -c pass"}, {"role", "helper"}}},
      {obs::shm_held(1'000'000, 7, "/dev/shm/x", 4096, "fd", true),
       {{"pid", 7}, {"path", "/dev/shm/x"}, {"bytes", 4096}, {"how", "fd"}, {"deleted", true}}},
      {obs::role_inferred(1'000'000, 7, Role::Rank, 2, -1, "RANK=2"),
       {{"pid", 7}, {"role", "rank"}, {"rank", 2}, {"worker", -1}, {"why", "RANK=2"}}},
      {obs::oom_kill(1'000'000, 1, 7, 2, "/sys/fs/cgroup/f1"),
       {{"index", 1}, {"pid", 7}, {"kills", 2}, {"cgroup", "/sys/fs/cgroup/f1"}}},
      {obs::oom_kill(1'000'000, 1, 7, 2, "/sys/fs/cgroup/f1", "Killed process 7"),
       {{"index", 1},
        {"pid", 7},
        {"kills", 2},
        {"cgroup", "/sys/fs/cgroup/f1"},
        {"kernel", "Killed process 7"}}},
      {obs::tmp_reclaim(1'000'000, "/tmp/torchelastic_x", 5, "/out/torchelastic_x"),
       {{"path", "/tmp/torchelastic_x"}, {"bytes", 5}, {"moved_to", "/out/torchelastic_x"}}},
      {obs::harness_failure(1'000'000, HarnessPart::TmpDir, "EACCES"),
       {{"part", "tmp"}, {"why", "EACCES"}}},
      {obs::harness_failure(1'000'000, HarnessPart::Teardown, "still alive", 7),
       {{"part", "teardown"}, {"why", "still alive"}, {"pid", 7}}},
      {obs::sample_period(1'000'000, 20'000'000, 12'500'000),
       {{"period_ms", 20.0}, {"sample_took_ms", 12.5}}},
      {obs::proc_start(1'000'000, 7, 1, "python3", "python3 x.py", Role::Rank, 1, 99, 'R', 12),
       {{"pid", 7},
        {"ppid", 1},
        {"comm", "python3"},
        {"cmdline", "python3 x.py"},
        {"role", "rank"},
        {"depth", 1},
        {"start_ticks", 99},
        {"job_pid", 12}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.want.dump());
    json want = c.want;
    want["t_ms"] = 1.0;
    want["kind"] = std::string(c.o.word());
    EXPECT_EQ(to_json(c.o), want);
  }
  Observation on_node = obs::note(2'000'000, "x");
  on_node.node = 1;
  EXPECT_EQ(to_json(on_node), (json{{"t_ms", 2.0}, {"kind", "note"}, {"text", "x"}, {"node", 1}}));
}

TEST(ReportsJson, StderrTailIsBoundedAndBadBytesDoNotThrow) {
  RunResult run = sample_run();
  // 3-byte characters, so a 2000-byte cut lands inside one.
  std::string big;
  for (int i = 0; i < 3000; ++i) big += "\xE2\x82\xAC";  // U+20AC
  run.scenarios[1].timeline.facts.stderr_text = "\xff\xfe junk " + big;
  const json j = to_json(run);
  const std::string tail = j["scenarios"][1]["top"]["stderr_tail"];
  EXPECT_LE(tail.size(), kStderrTailBytes);
  EXPECT_GE(tail.size(), kStderrTailBytes - 3);
  EXPECT_NE(static_cast<unsigned char>(tail[0]) & 0xC0, 0x80) << "cut inside a character";

  run.scenarios[1].timeline.facts.stderr_text = "bad \xff\xfe bytes\x01";
  std::string text;
  ASSERT_NO_THROW(text = write_json(run));
  EXPECT_NO_THROW(json::parse(text));
  EXPECT_NE(text.find("\\u0001"), std::string::npos) << "control byte escaped, not dropped";
}

TEST(ReportsJson, Utf8Tail) {
  EXPECT_EQ(utf8_tail("short", 10), "short");
  EXPECT_EQ(utf8_tail("abcdef", 3), "def");
  EXPECT_EQ(utf8_tail("a\xC3\xA9", 1), "");  // never half of "é"
  EXPECT_EQ(utf8_tail("a\xC3\xA9", 2), "\xC3\xA9");
}

TEST(ReportsJson, EmptyRunIsValid) { EXPECT_NO_THROW(json::parse(write_json(RunResult{}))); }

// A pytest suite's tests: present only when the job reported some.
TEST(ReportsJson, TestsAreWrittenOnlyWhenThereAreSome) {
  RunResult run;
  run.scenarios.push_back(ScenarioResult{});
  EXPECT_FALSE(to_json(run)["scenarios"][0].contains("tests"));
  TestResult t;
  t.nodeid = "t.py::test_x";
  t.worker = "gw0";
  t.pid = 42;
  t.started = 1500 * kMilli;
  t.outcome = TestOutcome::Passed;
  t.processes = {43, 44};
  t.leaks.push_back(TestLeak{LeakKind::Orphan, 44, "", 0, "worker 44 outlived its parent by 4.9s"});
  t.leaks.push_back(
      TestLeak{LeakKind::Shm, 0, "torch_42_x_0", 4096, "/dev/shm/torch_42_x_0 left behind"});
  run.scenarios[0].tests.push_back(t);
  json j = to_json(run)["scenarios"][0]["tests"];
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["nodeid"], "t.py::test_x");
  EXPECT_EQ(j[0]["worker"], "gw0");
  EXPECT_EQ(j[0]["pid"], 42);
  EXPECT_EQ(j[0]["start_ms"], 1500.0);
  EXPECT_TRUE(j[0]["end_ms"].is_null());
  EXPECT_EQ(j[0]["processes"], json::array({43, 44}));
  EXPECT_EQ(
      j[0]["leaks"][0],
      (json{{"kind", "orphan"}, {"pid", 44}, {"what", "worker 44 outlived its parent by 4.9s"}}));
  EXPECT_EQ(j[0]["leaks"][1]["name"], "torch_42_x_0");
  EXPECT_EQ(j[0]["leaks"][1]["bytes"], 4096);
  EXPECT_FALSE(j[0]["leaks"][1].contains("pid"));
}

}  // namespace
}  // namespace aftermath
