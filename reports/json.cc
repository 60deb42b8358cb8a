#include "reports/json.h"

#include <optional>
#include <string>

#include "harness/core/device_json.h"
#include "harness/core/fields_json.h"
#include "harness/core/per_test_json.h"
#include "harness/core/repeat_stats.h"
#include "reports/repeat_view.h"

namespace aftermath {

using nlohmann::json;

namespace {

// Absent optionals are written as null, not omitted, so every process entry
// has the same keys and consumers can tell "never happened" from "not
// recorded by this version".
json opt_ms(const std::optional<Nanos>& t) { return t ? json(to_ms(*t)) : json(nullptr); }

// "forks" (how the job's forks were learnt) only where it was recorded: a
// result written before it existed reads the same.
json containment_json(const RunFacts& facts) {
  json j = {{"mode", to_string(facts.containment)},
            {"note", facts.containment_note},
            {"shm", to_string(facts.shm)}};
  if (facts.forks_from != ForkSource::Unknown) j["forks"] = to_string(facts.forks_from);
  return j;
}

json opt_outcome(const std::optional<Outcome>& o) { return fields_json::shown_value(o); }

json check_json(const CheckResult& c) { return fields_json::shown_value(c); }

// The job's Python and PyTorch, and the values the rules took from them.
json python_facts_json(const PythonFacts& f) {
  json j = {
      {"interpreter", f.interpreter},
      {"python", f.python},
      {"torch", f.torch ? json(f.torch->text) : json(nullptr)},
      {"source", f.source},
      {"loader_status_interval_ms", to_ms(f.loader_status_interval)},
      {"torchrun_monitor_interval_ms", to_ms(f.torchrun_monitor_interval)},
      {"shm_manager_linger_ms", to_ms(f.shm_manager_linger)},
      {"torchrun_signals_sessions", f.torchrun_signals_sessions},
  };
  if (f.torch) j["torch_cuda"] = f.torch_cuda;
  if (!f.torch_error.empty()) j["torch_error"] = f.torch_error;
  if (!f.probe_error.empty()) j["probe_error"] = f.probe_error;
  return j;
}

json scenario_json(const ScenarioResult& s) {
  const RunFacts& facts = s.timeline.facts;
  json faults = json::array();
  for (const auto& f : facts.faults) faults.push_back(to_json(f));
  json diagnosis = json::array();
  for (const auto& d : facts.diagnosis) diagnosis.push_back(to_json(d));
  json j = {
      {"name", s.name},
      {"file", s.file},
      {"description", s.description},
      {"tags", s.tags},
      {"seed", s.seed},
      {"expect", to_string(s.expect)},
      {"verdict", to_string(s.verdict)},
      {"verdict_reason", s.verdict_reason},
      {"scenario", {{"text", s.scenario_text}, {"hash", s.scenario_hash}}},
      {"repro", s.repro},
      {"started_at", s.started_at},
      {"out_dir", s.out_dir},
      {"stdout_path", s.stdout_path},
      {"stderr_path", s.stderr_path},
      {"containment", containment_json(facts)},
      {"top",
       {
           {"pid", facts.top_pid},
           {"outcome", opt_outcome(facts.top_outcome)},
           {"deadline_hit", facts.deadline_hit},
           {"stalled_since_ms", opt_ms(facts.stalled_since)},
           {"stderr_tail", utf8_tail(facts.stderr_text)},
       }},
      {"timings_origin", to_string(s.timings_origin)},
      {"faults", faults},
      {"hang_diagnosis",
       {{"processes", diagnosis},
        {"note", facts.diagnosis_note},
        {"took_ms", to_ms(facts.diagnosis_took)}}},
  };
  // Present only on a failed run, so its presence alone means "the run broke".
  if (!s.error.empty()) j["error"] = s.error;
  j["python"] = python_facts_json(facts.python);
  // Present only where the scenario's `torch:` range applied.
  if (!s.torch_range.empty()) j["torch_range"] = s.torch_range;

  json checks = json::array();
  for (const auto& c : s.checks) checks.push_back(check_json(c));
  j["checks"] = std::move(checks);

  json timings = json::object();
  for (const auto& [key, value] : s.timings_ms) {
    timings[key] = value ? json(*value) : json(nullptr);
  }
  j["timings_ms"] = std::move(timings);

  json processes = json::array();
  for (const auto& p : s.processes) {
    json pj = to_json(p);
    // Only for a process with per-process log files (paths relative to
    // out_dir), so a run without them reads as before.
    auto logs = s.process_logs.find(process_key(p.node, p.pid));
    if (logs != s.process_logs.end()) {
      json l = json::object();
      if (!logs->second.stdout_path.empty()) l["stdout"] = logs->second.stdout_path;
      if (!logs->second.stderr_path.empty()) l["stderr"] = logs->second.stderr_path;
      if (!l.empty()) pj["logs"] = std::move(l);
    }
    processes.push_back(std::move(pj));
  }
  j["processes"] = std::move(processes);
  // The GPUs over the run; {"unavailable": why} where there are none.
  j["device"] = to_json(s.timeline.device);
  // What the job said about itself ("torch_config" events); absent when it said nothing.
  if (!s.job_environment.empty()) j["job_environment"] = s.job_environment;
  // A pytest suite's tests (fixtures/points/aftermath_pytest.py); absent when it reported none.
  if (!s.tests.empty()) {
    json tests = json::array();
    for (const auto& t : s.tests) tests.push_back(to_json(t));
    j["tests"] = std::move(tests);
  }

  json timeline = json::array();
  for (const auto& o : s.timeline.observations) timeline.push_back(to_json(o));
  j["timeline"] = std::move(timeline);
  if (s.runs > 1) {
    j["run"] = s.run_index + 1;
    j["runs"] = s.runs;
  }
  // A multi-node run: each node's agent, clock and own verdict.
  if (!s.nodes.empty()) {
    json nodes = json::array();
    for (const auto& n : s.nodes) nodes.push_back(to_json(n));
    j["nodes"] = std::move(nodes);
  }
  return j;
}

}  // namespace

json to_json(const TestResult& t) { return fields_json::shown_value(t); }

// Each kind shows the fields it defines (observation.h lists them), no more:
// the rest would read as facts ("pid": 0).
json to_json(const Observation& o) {
  json j = {{"t_ms", to_ms(o.t)}, {"kind", std::string(o.word())}};
  if (o.node >= 0) j["node"] = o.node;
  std::visit([&](const auto& p) { fields_json::show_fields(j, p); }, o.what);
  return j;
}

json to_json(const FaultRecord& f) { return fields_json::shown_value(f); }

json to_json(const ProcessDiagnosis& d) { return fields_json::shown_value(d); }

json to_json(const NodeResult& n) {
  json checks = json::array();
  for (const auto& c : n.checks) checks.push_back(check_json(c));
  return {
      {"index", n.index},
      {"host", n.host},
      {"address", n.address},
      {"agent", std::string(to_string(n.agent))},
      {"lost_ms", opt_ms(n.lost_at)},
      {"clock",
       {{"offset_ms", to_ms(n.clock_offset)},
        {"uncertainty_ms", to_ms(n.clock_uncertainty)},
        {"round_trip_ms", to_ms(n.round_trip)},
        {"samples", n.clock_samples}}},
      {"started_ms", to_ms(n.started)},
      {"verdict", to_string(n.verdict)},
      {"verdict_reason", n.verdict_reason},
      {"processes", n.processes},
      {"out_dir", n.out_dir},
      {"checks", checks},
  };
}

json to_json(const ProcessHistory& p) {
  json j = {
      {"pid", p.pid},
      {"job_pid", p.job_pid != 0 ? json(p.job_pid) : json(nullptr)},
      {"ppid", p.first_ppid},
      {"last_ppid", p.last_ppid},
      {"depth", p.depth},
      {"comm", p.comm},
      {"cmdline", p.cmdline},
      {"role", to_string(p.role)},
      {"rank", p.rank},
      {"worker", p.worker},
      {"started_ms", to_ms(p.started)},
      {"exited_ms", opt_ms(p.exited_at)},
      {"gone_ms", opt_ms(p.gone_at)},
      {"orphaned_ms", opt_ms(p.orphaned_at)},
      {"zombie_since_ms", opt_ms(p.zombie_since)},
      {"outcome", opt_outcome(p.outcome)},
      {"top", p.is_top},
  };
  if (p.node >= 0) j["node"] = p.node;
  return j;
}

namespace {

// {"xfail": 3, ...}: each verdict's count by its word.
json verdicts_json(const std::map<Verdict, int>& verdicts) {
  json out = json::object();
  for (const auto& [v, n] : verdicts) out[std::string(to_string(v))] = n;
  return out;
}

}  // namespace

json to_json(const Aggregate& a) {
  return {{"name", a.name},
          {"runs", a.runs},
          {"verdicts", verdicts_json(a.verdicts)},
          {"flaky", a.flaky},
          {"expects_failure", a.expects_failure},
          {"reproduced", a.reproduced},
          {"failed", a.failed},
          {"skipped", a.skipped},
          {"judged", a.judged},
          {"rate_counts", rate_counts(a)},
          {"reproduction_rate", a.rate},
          {"rate_ci95", {a.rate_low, a.rate_high}},
          {"outcomes", fields_json::shown_value(a.outcomes)},
          {"timings_ms", fields_json::shown_value(a.timings_ms)}};
}

json to_json(const MergeRecord& m) {
  json inputs = json::array();
  for (const auto& in : m.inputs)
    inputs.push_back({{"path", in.path},
                      {"scenarios", in.scenarios},
                      {"shard", in.shard ? json(to_string(*in.shard)) : json(nullptr)},
                      {"command_line", in.command_line},
                      {"tool_version", in.tool_version}});
  json j = {{"inputs", std::move(inputs)}};
  if (m.shards) {
    j["shards"] = {{"count", m.shards->count}, {"total", m.shards->total}};
    j["complete"] = m.shards->complete;
    j["missing_shards"] = m.shards->missing_shards;
    j["missing_positions"] = m.shards->missing_positions;
    j["repeated_positions"] = m.shards->repeated_positions;
    j["incomplete"] = m.shards->incomplete;
  }
  return j;
}

json summary_json(const RunResult& run) {
  json summary = {{"scenarios", run.scenarios.size()}};
  const auto counts = report::verdict_counts(run);
  for (Verdict v : report::kVerdictOrder) {
    auto n = counts.find(v);
    summary[std::string(to_string(v))] = n == counts.end() ? 0 : n->second;
  }
  return summary;
}

json to_json(const RunResult& run) {
  json scenarios = json::array();
  for (const auto& s : run.scenarios) scenarios.push_back(scenario_json(s));
  json environment = json::object();
  for (const auto& [key, value] : run.environment) environment[key] = value;
  json out = {
      {"schema", kResultSchema},
      {"schema_version", run.schema_version},
      {"tool_version", run.tool_version},
      {"command_line", run.command_line},
      {"environment", std::move(environment)},
      {"summary", summary_json(run)},
      {"scenarios", std::move(scenarios)},
  };
  // Only with --repeat: the statistics over each scenario's runs.
  if (!run.aggregates.empty()) {
    json aggs = json::array();
    for (const auto& a : run.aggregates) aggs.push_back(to_json(a));
    out["aggregates"] = std::move(aggs);
  }
  // Only with --shard: the slice, for `aftermath merge`.
  if (run.shard) {
    out["shard"] = {{"index", run.shard->slice.index},
                    {"count", run.shard->slice.count},
                    {"total", run.shard->total},
                    {"positions", run.shard->positions},
                    {"names", run.shard->names}};
  }
  // Only from `aftermath merge`: what it was made of.
  if (run.merge) out["merge"] = to_json(*run.merge);
  return out;
}

std::string write_json(const RunResult& run) {
  // Replace, not throw: captured stderr and cmdlines are arbitrary bytes, and
  // losing the whole report over one bad byte would be far worse.
  return to_json(run).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string utf8_tail(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::size_t start = text.size() - max_bytes;
  // A UTF-8 character is at most 4 bytes, so at most 3 continuation bytes to skip.
  for (int i = 0; i < 3 && start < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[start]) & 0xC0) != 0x80) break;
    ++start;
  }
  return std::string(text.substr(start));
}

}  // namespace aftermath
