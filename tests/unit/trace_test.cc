// Tests for trace.json (reports/trace.h): the Chrome trace event format that
// Perfetto and chrome://tracing load. Validated structurally on a real run:
// what the viewers need (ph, ts, pid, tid, dur, counter args) and the layout
// promised in trace.h (a process per scenario, a named track per job process).
#include "reports/trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/unit/report_fixture.h"

namespace aftermath {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using testing_reports::load_fixture;
using testing_reports::scenario;

std::vector<json> events_where(const json& trace, const std::string& ph,
                               const std::string& name = "") {
  std::vector<json> out;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == ph && (name.empty() || e["name"] == name)) out.push_back(e);
  }
  return out;
}

TEST(Trace, TopLevelIsTheJsonObjectFormat) {
  json trace = render_trace(testing_reports::typed(load_fixture()));
  ASSERT_TRUE(trace.is_object());
  ASSERT_TRUE(trace["traceEvents"].is_array());
  EXPECT_EQ(trace["displayTimeUnit"], "ms");
  // It survives a round trip through text, as the file is written.
  EXPECT_EQ(json::parse(trace.dump()), trace);
}

TEST(Trace, EveryEventIsWellFormed) {
  json trace = render_trace(testing_reports::typed(load_fixture()));
  ASSERT_GT(trace["traceEvents"].size(), 50u);
  const std::set<std::string> phases = {"M", "X", "i", "C"};
  for (const auto& e : trace["traceEvents"]) {
    SCOPED_TRACE(e.dump());
    ASSERT_TRUE(e["ph"].is_string());
    std::string ph = e["ph"];
    EXPECT_TRUE(phases.count(ph));
    EXPECT_TRUE(e["name"].is_string());
    ASSERT_TRUE(e["ts"].is_number());
    EXPECT_GE(e["ts"].get<double>(), 0);
    EXPECT_TRUE(e["pid"].is_number_integer());
    EXPECT_TRUE(e["tid"].is_number_integer());
    EXPECT_NE(e["tid"], 0);  // viewers take tid 0 for the idle thread
    if (ph == "X") {
      ASSERT_TRUE(e["dur"].is_number());
      EXPECT_GE(e["dur"].get<double>(), 0);
    }
    if (ph == "i") {
      std::string s = e["s"];
      EXPECT_TRUE(s == "t" || s == "p" || s == "g");
    }
    if (ph == "C") {
      ASSERT_TRUE(e["args"].is_object());
      EXPECT_FALSE(e["args"].empty());
      for (const auto& [k, v] : e["args"].items()) EXPECT_TRUE(v.is_number()) << k;
    }
    if (ph == "M") {
      EXPECT_TRUE(e["args"].is_object());
    }
  }
}

TEST(Trace, OneProcessPerScenarioNamedAfterIt) {
  json result = load_fixture();
  json trace = render_trace(testing_reports::typed(result));
  auto names = events_where(trace, "M", "process_name");
  ASSERT_EQ(names.size(), result["scenarios"].size());
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(names[i]["pid"], static_cast<int>(i + 1));
    EXPECT_EQ(names[i]["args"]["name"], result["scenarios"][i]["name"]);
  }
}

TEST(Trace, OneNamedTrackPerJobProcess) {
  json result = load_fixture();
  json trace = render_trace(testing_reports::typed(result));
  auto thread_names = events_where(trace, "M", "thread_name");
  auto lives = events_where(trace, "X");
  for (size_t i = 0; i < result["scenarios"].size(); ++i) {
    const json& sc = result["scenarios"][i];
    int pid = static_cast<int>(i + 1);
    for (const auto& p : sc["processes"]) {
      long long tid = p["pid"];
      std::vector<json> named, life;
      for (const auto& e : thread_names) {
        if (e["pid"] == pid && e["tid"] == tid) named.push_back(e);
      }
      for (const auto& e : lives) {
        if (e["pid"] == pid && e["tid"] == tid && e["cat"] == "process") life.push_back(e);
      }
      ASSERT_EQ(named.size(), 1u) << sc["name"] << " " << tid;
      EXPECT_EQ(named[0]["args"]["name"], p["role"].get<std::string>() + " " + std::to_string(tid) +
                                              " " + p["comm"].get<std::string>());
      ASSERT_EQ(life.size(), 1u) << tid;
      // Microseconds: the process start in ms times 1000.
      EXPECT_NEAR(life[0]["ts"].get<double>(), p["started_ms"].get<double>() * 1000, 0.01);
    }
  }
}

// A pytest suite's tests: a slice each on the track of the process that ran
// it, a leaking one marked so.
TEST(Trace, PytestTestsAreSlicesOnTheirProcessTrack) {
  json result = load_fixture();
  json& sc = result["scenarios"][0];
  long long tid = sc["processes"][0]["pid"];
  sc["tests"] = json::array(
      {json{{"nodeid", "t.py::test_a"},
            {"pid", tid},
            {"start_ms", 10.0},
            {"end_ms", 20.0},
            {"outcome", "passed"},
            {"worker", ""},
            {"leaks", json::array()}},
       json{{"nodeid", "t.py::test_b"},
            {"pid", tid},
            {"start_ms", 30.0},
            {"end_ms", 45.5},
            {"outcome", "passed"},
            {"worker", "gw0"},
            {"leaks", json::array({json{{"kind", "zombie"}, {"what", "unknown 7 (true)"}}})}}});
  std::vector<json> tests;
  for (const auto& e : events_where(render_trace(testing_reports::typed(result)), "X"))
    if (e["cat"].get<std::string>().rfind("test", 0) == 0) tests.push_back(e);
  ASSERT_EQ(tests.size(), 2u);
  EXPECT_EQ(tests[0]["name"], "t.py::test_a");
  EXPECT_EQ(tests[0]["cat"], "test");
  EXPECT_EQ(tests[0]["pid"], 1);
  EXPECT_EQ(tests[0]["tid"], tid);
  EXPECT_NEAR(tests[0]["ts"].get<double>(), 10000, 0.01);
  EXPECT_NEAR(tests[0]["dur"].get<double>(), 10000, 0.01);
  EXPECT_EQ(tests[1]["cat"], "test,leak");
  EXPECT_EQ(tests[1]["args"]["left"], json::array({"zombie: unknown 7 (true)"}));
  EXPECT_EQ(tests[1]["args"]["worker"], "gw0");
}

TEST(Trace, TracksAreSortedByRole) {
  json result = load_fixture();
  json& sc = scenario(result, "clean-job");
  std::vector<std::string> roles = {"unknown", "worker", "launcher", "helper", "rank"};
  for (size_t i = 0; i < sc["processes"].size(); ++i) sc["processes"][i]["role"] = roles[i % 5];
  json trace = render_trace(testing_reports::typed(result));
  std::map<int, std::string> role_by_index;
  std::map<long long, std::string> role_of;
  for (const auto& p : sc["processes"]) role_of[p["pid"]] = p["role"];
  for (const auto& e : events_where(trace, "M", "thread_sort_index")) {
    if (e["pid"] != 1 || e["tid"] == kTraceHarnessTid) continue;
    role_by_index[e["args"]["sort_index"]] = role_of[e["tid"]];
  }
  std::vector<std::string> order;
  for (const auto& [index, role] : role_by_index) order.push_back(role);
  EXPECT_EQ(order, (std::vector<std::string>{"launcher", "rank", "worker", "helper", "unknown"}));
}

TEST(Trace, ExitsSignalsPhasesAndCounters) {
  json result = load_fixture();
  json trace = render_trace(testing_reports::typed(result));
  std::map<int, int> signals, phases, samples, counters;
  for (size_t i = 0; i < result["scenarios"].size(); ++i) {
    for (const auto& e : result["scenarios"][i]["timeline"]) {
      if (e["kind"] == "signal") ++signals[static_cast<int>(i + 1)];
      if (e["kind"] == "phase") ++phases[static_cast<int>(i + 1)];
      if (e["kind"] == "sample") ++samples[static_cast<int>(i + 1)];
    }
  }
  std::map<int, int> got_signals, got_phases;
  int exits_killed = 0;
  for (const auto& e : trace["traceEvents"]) {
    int pid = e["pid"];
    if (e["ph"] == "i" && e["cat"] == "signal") {
      ++got_signals[pid];
      EXPECT_EQ(e["s"], "t");
      EXPECT_NE(e["tid"], kTraceHarnessTid);  // on the target's own track
    }
    if (e["ph"] == "i" && e["cat"] == "phase") {
      ++got_phases[pid];
      EXPECT_EQ(e["s"], "p");
    }
    if (e["ph"] == "i" && e["cat"] == "exit" && e["name"] == "killed(SIGKILL)") ++exits_killed;
    if (e["ph"] == "C") ++counters[pid];
  }
  EXPECT_EQ(got_signals, signals);
  EXPECT_EQ(got_phases, phases);
  for (const auto& [pid, n] : samples) EXPECT_EQ(counters[pid], 2 * n) << pid;  // two series
  EXPECT_EQ(exits_killed, 3);  // hang: every process SIGKILLed
}

TEST(Trace, OrphanNestsInsideTheLifeAndZombieFollowsIt) {
  json result = load_fixture();
  json trace = render_trace(testing_reports::typed(result));
  std::vector<json> orphans, zombies;
  std::map<std::pair<int, long long>, json> life;
  for (const auto& e : events_where(trace, "X")) {
    std::pair<int, long long> key{e["pid"], e["tid"]};
    if (e["cat"] == "process") life[key] = e;
    if (e["cat"] == "orphan") orphans.push_back(e);
    if (e["cat"] == "zombie") zombies.push_back(e);
  }
  ASSERT_FALSE(orphans.empty());
  ASSERT_FALSE(zombies.empty());
  auto end = [](const json& e) { return e["ts"].get<double>() + e["dur"].get<double>(); };
  for (const auto& o : orphans) {
    const json& l = life[{o["pid"], o["tid"]}];
    EXPECT_GE(o["ts"].get<double>(), l["ts"].get<double>());
    EXPECT_NEAR(end(o), end(l), 1e-6);
  }
  for (const auto& z : zombies) {
    const json& l = life[{z["pid"], z["tid"]}];
    EXPECT_GE(z["ts"].get<double>(), end(l) - 1e-6);
  }
}

TEST(Trace, ABareRunAndABareProcess) {
  RunResult run;
  ScenarioResult& sc = run.scenarios.emplace_back();
  sc.processes.emplace_back().pid = 5;
  sc.timeline.observations.push_back(obs::sample(kMilli, 1, 0));
  json trace = render_trace(run);
  EXPECT_EQ(events_where(trace, "X").size(), 1u);
  EXPECT_EQ(events_where(trace, "C", "job processes").size(), 1u);
  EXPECT_TRUE(render_trace(RunResult{})["traceEvents"].empty());
}

}  // namespace
}  // namespace aftermath

namespace aftermath {
namespace {

TEST(Trace, DeviceMemoryCounterPerGpu) {
  json result = testing_reports::load_fixture();
  result["scenarios"][0]["device"] = {{"unavailable", ""},
                                      {"samples",
                                       {{{"t_ms", 0}, {"index", 0}, {"used_bytes", 100}},
                                        {{"t_ms", 10}, {"index", 0}, {"used_bytes", 900}},
                                        {{"t_ms", 10}, {"index", 1}, {"used_bytes", 5}}}}};
  json trace = render_trace(testing_reports::typed(result));
  std::map<std::string, std::vector<double>> counters;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "C" && e["name"].get<std::string>().rfind("GPU ", 0) == 0)
      counters[e["name"]].push_back(e["args"]["bytes"].get<double>());
  EXPECT_EQ(counters["GPU 0 memory used"], (std::vector<double>{100, 900}));
  EXPECT_EQ(counters["GPU 1 memory used"], (std::vector<double>{5}));
  // Without a GPU, no such track.
  result["scenarios"][0]["device"] = {{"unavailable", "no NVIDIA driver"}};
  json without = render_trace(testing_reports::typed(result));
  for (const auto& e : without["traceEvents"])
    EXPECT_NE(e["name"].get<std::string>().rfind("GPU ", 0), 0u) << e.dump();
}

}  // namespace
}  // namespace aftermath

namespace aftermath {
namespace {

TEST(Trace, JobMemoryIsACounterTrack) {
  json result = testing_reports::load_fixture();
  json& tl = result["scenarios"][0]["timeline"];
  tl.push_back({{"kind", "memory"}, {"t_ms", 1.0}, {"rss_bytes", 1 << 20}, {"procs", 2}});
  tl.push_back({{"kind", "memory"}, {"t_ms", 2.0}, {"rss_bytes", 3 << 20}, {"procs", 2}});
  std::vector<double> rss;
  json trace = render_trace(testing_reports::typed(result));
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "C" && e["name"] == "job RSS bytes")
      rss.push_back(e["args"]["bytes"].get<double>());
  EXPECT_EQ(rss, (std::vector<double>{1 << 20, 3 << 20}));
}

}  // namespace
}  // namespace aftermath
