// RunResult: what a run produced, the source of truth every report renders
// from. Built from the scenario, the timeline and the check results.
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/fields.h"
#include "harness/core/timeline.h"
#include "harness/core/types.h"

namespace aftermath {

constexpr int kResultSchemaVersion = 1;
// result.json's "schema".
constexpr const char* kResultSchema = "aftermath/result";

struct CheckResult {
  std::string name;
  CheckStatus status = CheckStatus::Error;
  std::string reason;  // why it failed / was skipped / errored; a one-line summary on pass
  nlohmann::json measured =
      nlohmann::json::object();   // measured values (ms for times, bytes, lists)
  bool expected_to_fail = false;  // named in the scenario's expectation
  bool may_fail = false;          // named under expect.may_fail: a failure leaves the verdict

  static constexpr auto fields() {
    return std::tuple{needed("name", &CheckResult::name),
                      needed("status", &CheckResult::status),
                      field("reason", &CheckResult::reason),
                      field("expected_to_fail", &CheckResult::expected_to_fail),
                      field("may_fail", &CheckResult::may_fail, Shown::IfSet),
                      field("measured", &CheckResult::measured)};
  }
};

// A job process's key in a run's result: its pid, made unique across the
// nodes of a multi-node run, whose pids each come from a machine of its own
// (node N's offset by (N + 1) << 32; node -1, one machine: the pid itself).
constexpr long long process_key(long long node, long long pid) {
  return node < 0 ? pid : ((node + 1) << 32) | pid;
}

// One node of a multi-node run: its agent, its clock, its own checks.
struct NodeResult {
  int index = 0;
  std::string host;     // as the node names itself
  std::string address;  // its agent's address, as the coordinator saw it
  // done: the agent reported to the end; lost: its connection ended first
  // (at lost_at); absent: it never connected.
  AgentState agent = AgentState::Absent;
  std::optional<Nanos> lost_at;  // coordinator run time
  // The node's monotonic clock minus the coordinator's, within ±uncertainty
  // (round-trip estimation over `clock_samples` exchanges).
  Nanos clock_offset = 0;
  Nanos clock_uncertainty = 0;
  Nanos round_trip = 0;
  int clock_samples = 0;
  Nanos started = 0;                 // its run's time 0 on the coordinator's run clock
  Verdict verdict = Verdict::Error;  // the node's part judged on its own
  std::string verdict_reason;
  std::vector<CheckResult> checks;
  std::string out_dir;  // its stdout.log, stderr.log, logs/
  int processes = 0;
};

// What one pytest test left behind, judged at its end.
struct TestLeak {
  LeakKind kind = LeakKind::Process;
  int pid = 0;             // all but shm: the process
  std::string name;        // shm: the /dev/shm entry; device: "GPU N"
  std::int64_t bytes = 0;  // shm: its size; device: what the process held there
  std::string what;  // one line for people: "worker 812 (python3) outlived its parent by 4.9s"
  bool operator==(const TestLeak&) const = default;
};

// One test of a pytest suite run as the job, as the suite reported it
// (fixtures/points/aftermath_pytest.py), with what is attributed to it.
struct TestResult {
  std::string nodeid;  // pytest's node id: tests/test_x.py::test_y[param]
  std::string worker;  // pytest-xdist's worker id (gw0); "" without xdist
  int pid = 0;         // the process that ran it (host pid)
  Nanos started = 0;
  std::optional<Nanos> ended;  // nullopt: the run ended during the test
  TestOutcome outcome = TestOutcome::NotEnded;
  std::vector<int> processes;   // the job processes it started (directly or below)
  std::vector<TestLeak> leaks;  // empty: it left nothing behind

  static constexpr auto fields() {
    return std::tuple{needed("nodeid", &TestResult::nodeid),
                      field("worker", &TestResult::worker),
                      field("pid", &TestResult::pid),
                      field("start_ms", &TestResult::started, Shown::Millis),
                      field("end_ms", &TestResult::ended, Shown::Millis),
                      field("outcome", &TestResult::outcome),
                      field("processes", &TestResult::processes),
                      field("leaks", &TestResult::leaks)};
  }
};

struct ScenarioResult {
  std::string name;
  std::string file;
  std::string description;
  std::vector<std::string> tags;
  std::string scenario_text;
  std::string scenario_hash;  // FNV-1a 64 of scenario_text, hex
  std::uint64_t seed = 0;
  ExpectedChecks expect;
  std::string torch_range;  // the scenario's `torch:` range that applied ("" when none)
  Verdict verdict = Verdict::Error;
  std::string verdict_reason;
  std::string error;  // set when verdict is error because the run itself failed
  std::vector<CheckResult> checks;
  // Named timings in milliseconds; nullopt = not reached / not applicable.
  // Keys: job_ms (launch to top exit), to_all_exited_ms, to_shm_baseline_ms, total_ms.
  std::map<std::string, std::optional<double>> timings_ms;
  TimingsOrigin timings_origin = TimingsOrigin::None;
  std::vector<ProcessHistory> processes;
  Timeline timeline;
  std::string out_dir;  // this scenario's report folder
  std::string stdout_path, stderr_path;
  std::string repro;       // one-line command that reruns it
  std::string started_at;  // wall clock, ISO-8601 UTC
  int run_index = 0;       // with --repeat N: 0..N-1
  int runs = 1;
  // Per-process logs (AFTERMATH_LOG_DIR): by process_key(node, pid), the
  // files that exist, relative to out_dir (absolute when outside it); empty:
  // none.
  struct ProcessLogs {
    std::string stdout_path, stderr_path;
  };
  std::map<long long, ProcessLogs> process_logs;
  // What the job reported about itself in "torch_config" events
  // (sharing_strategy, start_method, torch_version, backend, ...); a key that
  // processes reported differently holds the distinct values, ", "-joined.
  std::map<std::string, std::string> job_environment;
  // A pytest suite's tests, in the order they started (empty: the job
  // reported none); judged per test by tests_clean.
  std::vector<TestResult> tests;
  // A multi-node run (`nodes:`): each node's part; empty for one node. The
  // timeline, processes and checks above are then every node's, merged.
  std::vector<NodeResult> nodes;
};

// One scenario over its repeated runs.
struct Aggregate {
  std::string name;
  int runs = 0;
  std::map<Verdict, int> verdicts;  // verdict -> count (only those that occurred)
  // The runs differ in their verdict or in their set of failed checks (run 1
  // fails shm_clean, run 2 no_orphans: both fail, yet the bug is not one).
  bool flaky = false;
  bool expects_failure = false;  // the scenario reproduces a known bug
  int reproduced = 0;            // runs whose verdict was xfail
  int failed = 0;                // runs whose verdict was fail, xpass or error
  int skipped = 0;               // runs not judged (requirements, a mechanism unavailable)
  // The rate a person repeats a scenario for, over the judged (not skipped)
  // runs: how often a known bug reproduced (`reproduced`) when the scenario
  // expects failure, else how often it failed (`failed`).
  int judged = 0;
  double rate = 0;
  double rate_low = 0, rate_high = 0;  // 95% Wilson interval
  // Each distinct outcome (verdict and failed checks) and the runs that had
  // it, in the order first seen; more than one makes the scenario flaky.
  struct Outcome {
    Verdict verdict = Verdict::Error;
    std::vector<std::string> failed_checks;  // fail or error, in the run's check order
    std::vector<int> runs;                   // 1-based run numbers

    static constexpr auto fields() {
      return std::tuple{field("verdict", &Outcome::verdict),
                        field("failed_checks", &Outcome::failed_checks),
                        field("runs", &Outcome::runs)};
    }
  };
  std::vector<Outcome> outcomes;
  struct Dist {
    int n = 0;
    double min = 0, median = 0, p95 = 0, max = 0;

    static constexpr auto fields() {
      return std::tuple{field("n", &Dist::n), field("min", &Dist::min),
                        field("median", &Dist::median), field("p95", &Dist::p95),
                        field("max", &Dist::max)};
    }
  };
  std::map<std::string, Dist> timings_ms;
};

// `run --shard I/N`: which slice of the run's scenarios a result holds, so
// that `aftermath merge` can put the shards back in the suite's order and
// tell a missing shard from a complete run.
struct ShardInfo {
  Shard slice;                         // I/N
  std::size_t total = 0;               // scenarios before slicing
  std::vector<std::size_t> positions;  // each sliced scenario's position (from 0) in the whole list
  std::vector<std::string> names;      // those scenarios' names, aligned with `positions`
};

// `aftermath merge`: the runs a merged result was made of and, when they are
// the shards of one run, whether they make it whole.
struct MergeRecord {
  struct Input {
    std::string path;  // its result.json, relative to the merged report's folder where inside it
    std::size_t scenarios = 0;
    std::optional<Shard> shard;  // nullopt: not a shard
    std::string command_line;
    std::string tool_version;
  };
  std::vector<Input> inputs;
  // Shards of one run only: which positions (0-based) nothing covered, which
  // two inputs covered, which shards are missing, and why, in sentences.
  struct Coverage {
    long long count = 0, total = 0;
    bool complete = false;
    std::vector<long long> missing_shards;
    std::vector<std::size_t> missing_positions, repeated_positions;
    std::vector<std::string> incomplete;
  };
  std::optional<Coverage> shards;
};

struct RunResult {
  int schema_version = kResultSchemaVersion;
  std::string tool_version;
  std::string command_line;
  std::map<std::string, std::string> environment;  // kernel, glibc, compiler, shm size, ...
  std::vector<ScenarioResult> scenarios;
  std::vector<Aggregate> aggregates;  // with --repeat N > 1
  std::optional<ShardInfo> shard;     // with --shard I/N
  std::optional<MergeRecord> merge;   // written by `aftermath merge`
};

}  // namespace aftermath
