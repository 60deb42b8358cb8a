// Tests for reading result.json back into a RunResult (reports/result_read):
// every field this version writes comes back (the document written again is
// the same document), an earlier release's document reads, and a document
// that is not one is refused naming the field.
#include "reports/result_read.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "harness/core/result.h"
#include "reports/json.h"
#include "tests/unit/full_values.h"
#include "tests/unit/writer_fixture.h"

namespace aftermath {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using namespace testing_full;

// Every kind with every field set, its times whole nanoseconds of a run's
// length (result.json shows them as milliseconds).
std::vector<Observation> every_kind_for_the_report() {
  std::vector<Observation> out = every_kind_full();
  for (auto& o : out)
    std::visit(
        [](auto& p) {
          using P = std::remove_cvref_t<decltype(p)>;
          for_each_field<P>([&](const auto& f) {
            using M = std::remove_cvref_t<decltype(p.*f.member)>;
            if constexpr (std::is_integral_v<M>)
              if (f.shown == Shown::Millis || f.shown == Shown::MillisIfSet)
                p.*f.member = static_cast<M>(1'234'567'891);
          });
        },
        o.what);
  return out;
}

// sample_run() and a scenario with every part result.json has: the full
// facts, device, every observation kind, a pytest suite's tests, a node, logs,
// repeated runs; with aggregates and a shard.
RunResult full_run() {
  RunResult run = testing_writers::sample_run();
  ScenarioResult s = run.scenarios.front();
  s.name = "full";
  s.error = "the reaper could not run";
  s.torch_range = ">=2.2";
  s.timeline.observations = every_kind_for_the_report();
  s.timeline.facts = full_facts();
  s.timeline.facts.forks_from = ForkSource::ProcessEvents;
  s.timeline.facts.python.interpreter = "/work/.venv/bin/python";
  s.timeline.facts.python.python = "3.11.7";
  s.timeline.facts.python.torch = parse_torch_version("2.13.0+cpu");
  s.timeline.facts.python.torch_cuda = "none";
  s.timeline.facts.python.source = "probe";
  s.timeline.facts.python.torchrun_monitor_interval = 100'000'000;
  s.timeline.facts.python.torchrun_signals_sessions = true;
  s.timeline.device = full_device();
  s.timings_origin = TimingsOrigin::FirstFault;
  s.timings_ms["to_all_gone_ms"] = std::nullopt;
  s.process_logs[process_key(s.processes.front().node, s.processes.front().pid)] = {"logs/1.out",
                                                                                    "/abs/1.err"};
  s.job_environment = {{"sharing_strategy", "file_system"}, {"torch_version", "2.13.0"}};
  TestResult t;
  t.nodeid = "tests/test_x.py::test_y[1]";
  t.worker = "gw0";
  t.pid = 4242;
  t.started = 10'000'001;
  t.ended = 20'000'003;
  t.outcome = TestOutcome::Failed;
  t.processes = {4243, 4244};
  t.leaks = {TestLeak{LeakKind::Orphan, 4243, "", 0, "worker 4243 outlived its parent"},
             TestLeak{LeakKind::Shm, 0, "torch_1_2", 4096, "torch_1_2 left"},
             TestLeak{LeakKind::Device, 4244, "GPU 0", 1 << 20, "held 1 MiB"}};
  TestResult unended;
  unended.nodeid = "tests/test_x.py::test_z";
  s.tests = {t, unended};
  NodeResult n;
  n.index = 1;
  n.host = "node1";
  n.address = "10.200.0.2:7000";
  n.agent = AgentState::Lost;
  n.lost_at = 3'000'000'001;
  n.clock_offset = -1'500'001;
  n.clock_uncertainty = 250'001;
  n.round_trip = 500'003;
  n.clock_samples = 8;
  n.started = 1'000'007;
  n.verdict = Verdict::XFail;
  n.verdict_reason = "expected: no_orphans";
  n.checks = s.checks;
  n.out_dir = "node1";
  n.processes = 5;
  s.nodes = {n};
  s.run_index = 1;
  s.runs = 2;
  ScenarioResult unavailable = s;
  unavailable.name = "no-gpu";
  unavailable.timeline.device = DeviceTimeline{};
  unavailable.timeline.device.unavailable = "no NVIDIA driver";
  unavailable.run_index = 0;
  run.scenarios.push_back(std::move(s));
  run.scenarios.push_back(std::move(unavailable));
  Aggregate a;
  a.name = "full";
  a.runs = 2;
  a.verdicts = {{Verdict::XFail, 1}, {Verdict::Fail, 1}};
  a.flaky = true;
  a.expects_failure = true;
  a.reproduced = 1;
  a.failed = 1;
  a.judged = 2;
  a.rate = 0.5;
  a.rate_low = 0.09;
  a.rate_high = 0.91;
  a.outcomes = {{Verdict::XFail, {"no_orphans"}, {1}},
                {Verdict::Fail, {"no_orphans", "shm_clean"}, {2}}};
  a.timings_ms["job_ms"] = {2, 10.5, 11.25, 12, 12};
  run.aggregates = {a};
  run.shard = ShardInfo{{2, 3}, 7, {1, 4}, {"a", "b"}};
  run.environment = {{"kernel", "6.1"}, {"glibc", "2.36"}};
  MergeRecord m;
  m.inputs = {{"shard-1/result.json", 2, Shard{1, 3}, "aftermath run --shard 1/3", "0.1.0"},
              {"/abs/other/result.json", 1, std::nullopt, "aftermath run x.yaml", "0.1.0"}};
  m.shards = MergeRecord::Coverage{3, 7, false, {3}, {2, 5}, {4}, {"shard 3/3 is missing"}};
  run.merge = m;
  return run;
}

json parse_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return json::parse(ss.str());
}

TEST(ResultRead, EveryFieldThisVersionWritesComesBack) {
  const json doc = to_json(full_run());
  auto back = read_result(doc);
  ASSERT_TRUE(back.ok()) << back.error().what;
  const json again = to_json(*back);
  EXPECT_EQ(again, doc) << "written again:\n" << json::diff(doc, again).dump(1);
  // Typed, not echoed: values the renderers read come back as values.
  const ScenarioResult& s = back->scenarios.at(back->scenarios.size() - 2);
  ASSERT_EQ(s.name, "full");
  EXPECT_EQ(s.verdict, full_run().scenarios.at(back->scenarios.size() - 2).verdict);
  EXPECT_EQ(s.timeline.observations.size(), std::variant_size_v<ObsPayload>);
  EXPECT_EQ(s.timeline.facts.faults.at(1).effect, full_fault(1).effect);
  EXPECT_EQ(s.timeline.facts.top_outcome, Outcome::exited(3));
  EXPECT_EQ(s.tests.at(0).leaks.at(2).kind, LeakKind::Device);
  EXPECT_EQ(s.nodes.at(0).agent, AgentState::Lost);
  EXPECT_EQ(s.run_index, 1);
  ASSERT_TRUE(back->merge.has_value());
  EXPECT_EQ(back->merge->inputs.at(0).shard, (Shard{1, 3}));
  EXPECT_EQ(back->merge->inputs.at(1).shard, std::nullopt);
  ASSERT_TRUE(back->shard.has_value());
  EXPECT_EQ(back->shard->positions, (std::vector<std::size_t>{1, 4}));
}

TEST(ResultRead, TheSampleRunsDocumentsReadBackTheSame) {
  const json doc = to_json(testing_writers::sample_run());
  auto back = read_result(doc);
  ASSERT_TRUE(back.ok()) << back.error().what;
  EXPECT_EQ(to_json(*back), doc);
}

// Written by an earlier release (no "python", "device", "job_pid"...): every
// field it has reads, the rest are defaults.
TEST(ResultRead, AnEarlierReleasesDocumentReads) {
  for (const char* file :
       {"tests/data/reports/result.json", "tests/data/reports/result-rerun.json"}) {
    const json doc = parse_file(std::string(AFTERMATH_SOURCE_DIR) + "/" + file);
    auto back = read_result(doc);
    ASSERT_TRUE(back.ok()) << file << ": " << back.error().what;
    ASSERT_EQ(back->scenarios.size(), doc["scenarios"].size()) << file;
    for (std::size_t i = 0; i < doc["scenarios"].size(); ++i) {
      const json& sc = doc["scenarios"][i];
      EXPECT_EQ(to_string(back->scenarios[i].verdict), sc["verdict"].get<std::string>()) << file;
      EXPECT_EQ(to_string(back->scenarios[i].expect), sc["expect"].get<std::string>()) << file;
      EXPECT_EQ(back->scenarios[i].checks.size(), sc["checks"].size()) << file;
      EXPECT_EQ(back->scenarios[i].timeline.observations.size(), sc["timeline"].size()) << file;
      EXPECT_EQ(back->scenarios[i].processes.size(), sc["processes"].size()) << file;
    }
  }
}

std::string error_of(json doc) {
  auto r = read_result(doc);
  return r.ok() ? "(read)" : r.error().what;
}

TEST(ResultRead, ADocumentThatIsNotOneIsRefusedNamingTheField) {
  const json good = to_json(testing_writers::sample_run());
  {
    json d = good;
    d["scenarios"][0]["verdict"] = "maybe";
    EXPECT_EQ(error_of(d), "scenarios[0].verdict has an unknown value \"maybe\"");
  }
  {
    json d = good;
    d["scenarios"][0]["expect"] = "fail";
    EXPECT_EQ(error_of(d), "scenarios[0].expect has an unknown value \"fail\"");
  }
  {
    json d = good;
    d["scenarios"][0]["checks"][1]["status"] = 3;
    EXPECT_EQ(error_of(d), "scenarios[0].checks[1].status should be a string, not number");
  }
  {
    json d = good;
    d["scenarios"][0]["timeline"][0]["kind"] = "teleport";
    EXPECT_EQ(error_of(d), "scenarios[0].timeline[0].kind has an unknown value \"teleport\"");
  }
  {
    // A phase is one of the run's phases, by its word.
    json d = good;
    json& timeline = d["scenarios"][0]["timeline"];
    auto phase = std::find_if(timeline.begin(), timeline.end(),
                              [](const json& e) { return e["kind"] == "phase"; });
    ASSERT_NE(phase, timeline.end());
    (*phase)["name"] = "lunch";
    EXPECT_EQ(error_of(d), "scenarios[0].timeline[" + std::to_string(phase - timeline.begin()) +
                               "].name has an unknown value \"lunch\"");
  }
  {
    json d = good;
    d["scenarios"][0]["processes"][0]["outcome"] = {{"kind", "killed"}, {"signal", "SIGNOPE"}};
    EXPECT_EQ(error_of(d),
              "scenarios[0].processes[0].outcome.signal has an unknown value \"SIGNOPE\"");
  }
  {
    json d = good;
    d["schema_version"] = kResultSchemaVersion + 1;
    EXPECT_THAT(error_of(d), HasSubstr("is newer than this build reads"));
  }
  {
    json d = good;
    d.erase("scenarios");
    EXPECT_EQ(error_of(d), "scenarios is missing");
  }
  {
    json d = good;  // a field its list marks as needed (fields.h)
    d["scenarios"][0]["checks"][1].erase("name");
    EXPECT_EQ(error_of(d), "scenarios[0].checks[1].name is missing");
  }
  {
    json d = good;
    d["scenarios"][0]["checks"][1].erase("reason");  // not needed: its default
    EXPECT_TRUE(read_result(d).ok());
  }
  EXPECT_THAT(error_of(json::array()), HasSubstr("should be a JSON object"));
}

}  // namespace
}  // namespace aftermath
