#include "reports/result_read.h"

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/json_read.h"
#include "harness/core/python_facts.h"

namespace aftermath {

namespace {

using json_read::fail;
using json_read::Integer;
using json_read::ReadError;
using json_read::shown;
using json_read::wrong_type;
using nlohmann::json;

// Times: milliseconds in the document, nanoseconds in the result.
struct Ms {
  Nanos& out;
};
struct OptMs {
  std::optional<Nanos>& out;
};

using json_read::from;

void from(const json& v, const std::string& path, Ms out) {
  out.out = json_read::millis_to_nanos(v, path);
}
void from(const json& v, const std::string& path, OptMs out) {
  if (v.is_null())
    out.out.reset();
  else
    out.out = json_read::millis_to_nanos(v, path);
}
// A merge input's slice, "I/N".
void from(const json& v, const std::string& path, Shard& out) {
  out = json_read::word<Shard>(v, path, parse_shard_text);
}
// A JSON value kept as it is (a check's measured values).
void from(const json& v, const std::string&, json& out) { out = v; }
// A /proc state letter as a one-character string; "" is none (0).
void from(const json& v, const std::string& path, char& out) {
  const std::string& s = json_read::text(v, path);
  if (s.size() > 1) fail(path, "should be one character, not " + shown(s));
  out = s.empty() ? 0 : s[0];
}
template <HasFields S>
void from(const json& v, const std::string& path, S& out);
void from(const json& v, const std::string& path, Observation& out);
void from(const json& v, const std::string& path, NodeResult& out);
void from(const json& v, const std::string& path, TestLeak& out);
void from(const json& v, const std::string& path, Aggregate& out);
void from(const json& v, const std::string& path, ScenarioResult& out);
// result.json's values, for the shared readers (json_read.h).
struct Doc {
  template <typename T>
  static void one(const json& v, const std::string& path, T&& out) {
    from(v, path, std::forward<T>(out));
  }
};
using Fields = json_read::Fields<Doc>;

// {t_ms, index, used_bytes, free_bytes, error?, processes?}
void sample_from(const json& v, const std::string& path, GpuSample& out) {
  Fields f(v, path);
  f.read("t_ms", Ms{out.t});
  f.read("index", out.index);
  f.read("used_bytes", out.used);
  f.read("free_bytes", out.free);
  f.read("error", out.error);
  f.read("processes", out.processes);
}

void device_from(const json& v, const std::string& path, DeviceTimeline& out) {
  Fields f(v, path);
  f.read("unavailable", out.unavailable);
  if (!out.unavailable.empty()) return;
  f.read("gpus", out.gpus);
  f.read("job_gpus", out.job_gpus);
  f.read("origin_ms", Ms{out.origin});
  auto samples = [&](std::string_view key, std::vector<GpuSample>& into) {
    const json* a = f.find(key);
    if (!a) return;
    if (!a->is_array()) wrong_type(f.at(key), "an array", *a);
    for (std::size_t i = 0; i < a->size(); ++i) {
      GpuSample s;
      sample_from((*a)[i], json_read::item_path(f.at(key), i), s);
      into.push_back(std::move(s));
    }
  };
  samples("baseline", out.baseline);
  samples("samples", out.samples);
  // Each GPU's processes at its last sample.
  std::map<std::string, std::vector<GpuProcess>> last;
  f.read("last_processes", last);
  for (auto& [index, procs] : last) {
    GpuSample* at = nullptr;
    for (auto& s : out.samples)
      if (std::to_string(s.index) == index) at = &s;
    if (!at) fail(f.at("last_processes") + "." + index, "names a GPU with no sample");
    at->processes = std::move(procs);
  }
  f.read("holders_after", out.holders_after);
  f.read("holders_unavailable", out.holders_unavailable);
  if (const json* p = f.find("probe_after"); p && !p->is_null()) {
    Fields pf(*p, f.at("probe_after"));
    ProbeReport r;
    pf.read("unavailable", r.unavailable);
    pf.read("gpus", r.gpus);
    out.probe_after = std::move(r);
  }
}

// A member as the report shows it (fields_json.h's show_field).
template <typename P, typename M>
void read_field(const Fields& f, P& p, const Field<P, M>& field) {
  M& m = p.*field.member;
  const json* v = f.find(field.key);
  if (field.shown == Shown::WireOnly || field.shown == Shown::SignalName) return;
  if (!v) {
    if (field.required) fail(f.at(field.key), "is missing");
    return;
  }
  const std::string path = f.at(field.key);
  if constexpr (std::is_same_v<M, std::string>) {
    if (field.shown == Shown::Json) {
      m = v->is_string() ? v->get<std::string>() : v->dump();
      return;
    }
  }
  if constexpr (std::is_integral_v<M> && !std::is_same_v<M, bool> && !std::is_same_v<M, char>) {
    if (field.shown == Shown::Millis || field.shown == Shown::MillisIfSet) {
      m = static_cast<M>(json_read::millis_to_nanos(*v, path));
      return;
    }
  }
  if constexpr (std::is_same_v<M, std::optional<Nanos>>) {
    if (field.shown == Shown::Millis) {
      from(*v, path, OptMs{m});
      return;
    }
  }
  json_read::read<Doc>(*v, path, m);
}

// A value of a type that lists its fields, each as the report shows it.
template <HasFields S>
void from(const json& v, const std::string& path, S& out) {
  Fields f(v, path);
  for_each_field<S>([&](const auto& field) { read_field(f, out, field); });
}

void from(const json& v, const std::string& path, Observation& out) {
  Fields f(v, path);
  f.need("t_ms", Ms{out.t});
  std::string kind;
  f.need("kind", kind);
  f.read("node", out.node);
  const bool known = for_each_kind([&]<typename P>(std::type_identity<P>) {
    if (P::word != kind) return false;
    P p{};
    for_each_field<P>([&](const auto& field) { read_field(f, p, field); });
    out.what = std::move(p);
    return true;
  });
  if (!known) fail(f.at("kind"), "has an unknown value " + shown(kind));
}

void from(const json& v, const std::string& path, NodeResult& out) {
  Fields f(v, path);
  f.read("index", out.index);
  f.read("host", out.host);
  f.read("address", out.address);
  f.read("agent", out.agent);
  f.read("lost_ms", OptMs{out.lost_at});
  Fields clock = f.object("clock");
  clock.read("offset_ms", Ms{out.clock_offset});
  clock.read("uncertainty_ms", Ms{out.clock_uncertainty});
  clock.read("round_trip_ms", Ms{out.round_trip});
  clock.read("samples", out.clock_samples);
  f.read("started_ms", Ms{out.started});
  f.read("verdict", out.verdict);
  f.read("verdict_reason", out.verdict_reason);
  f.read("processes", out.processes);
  f.read("out_dir", out.out_dir);
  f.read("checks", out.checks);
}

void from(const json& v, const std::string& path, TestLeak& out) {
  Fields f(v, path);
  f.need("kind", out.kind);
  f.read("what", out.what);
  f.read("pid", out.pid);
  f.read("name", out.name);
  f.read("bytes", out.bytes);
}

void from(const json& v, const std::string& path, Aggregate& out) {
  Fields f(v, path);
  f.need("name", out.name);
  f.read("runs", out.runs);
  std::map<std::string, int> verdicts;
  f.read("verdicts", verdicts);
  for (const auto& [word, n] : verdicts) {
    auto v = parse_verdict(word);
    if (!v) fail(f.at("verdicts") + "." + word, "is not a verdict");
    out.verdicts[*v] = n;
  }
  f.read("flaky", out.flaky);
  f.read("expects_failure", out.expects_failure);
  // A count an earlier release did not write comes from the verdict counts.
  auto count = [&](std::initializer_list<Verdict> vs) {
    int n = 0;
    for (Verdict v : vs)
      if (auto it = out.verdicts.find(v); it != out.verdicts.end()) n += it->second;
    return n;
  };
  out.reproduced = count({Verdict::XFail});
  out.failed = count({Verdict::Fail, Verdict::XPass, Verdict::Error});
  out.skipped = count({Verdict::Skipped});
  f.read("reproduced", out.reproduced);
  f.read("failed", out.failed);
  f.read("skipped", out.skipped);
  out.judged = out.runs - out.skipped;
  f.read("judged", out.judged);
  f.read("reproduction_rate", out.rate);
  out.rate_high = 1;  // no interval written: all rates are possible
  if (const json* ci = f.find("rate_ci95")) {
    std::vector<double> lh;
    json_read::read<Doc>(*ci, f.at("rate_ci95"), lh);
    if (lh.size() != 2) fail(f.at("rate_ci95"), "should hold two numbers");
    out.rate_low = lh[0];
    out.rate_high = lh[1];
  }
  f.read("outcomes", out.outcomes);
  f.read("timings_ms", out.timings_ms);
}

void python_from(const Fields& f, PythonFacts& out) {
  f.read("interpreter", out.interpreter);
  f.read("python", out.python);
  if (const json* t = f.find("torch"); t && !t->is_null()) {
    const std::string& text = json_read::text(*t, f.at("torch"));
    out.torch = parse_torch_version(text);
    if (!out.torch) out.torch = TorchVersion{.text = text};
  }
  f.read("torch_cuda", out.torch_cuda);
  f.read("torch_error", out.torch_error);
  f.read("probe_error", out.probe_error);
  f.read("source", out.source);
  f.read("loader_status_interval_ms", Ms{out.loader_status_interval});
  f.read("torchrun_monitor_interval_ms", Ms{out.torchrun_monitor_interval});
  f.read("shm_manager_linger_ms", Ms{out.shm_manager_linger});
  f.read("torchrun_signals_sessions", out.torchrun_signals_sessions);
}

void from(const json& v, const std::string& path, ScenarioResult& out) {
  Fields f(v, path);
  RunFacts& facts = out.timeline.facts;
  f.need("name", out.name);
  f.read("file", out.file);
  f.read("description", out.description);
  f.read("tags", out.tags);
  f.read("seed", out.seed);
  f.read("expect", out.expect);
  f.need("verdict", out.verdict);
  f.read("verdict_reason", out.verdict_reason);
  Fields scenario = f.object("scenario");
  scenario.read("text", out.scenario_text);
  scenario.read("hash", out.scenario_hash);
  f.read("repro", out.repro);
  f.read("started_at", out.started_at);
  f.read("out_dir", out.out_dir);
  f.read("stdout_path", out.stdout_path);
  f.read("stderr_path", out.stderr_path);
  Fields containment = f.object("containment");
  containment.read("mode", facts.containment);
  containment.read("note", facts.containment_note);
  containment.read("shm", facts.shm);
  containment.read("forks", facts.forks_from);
  Fields top = f.object("top");
  top.read("pid", facts.top_pid);
  top.read("outcome", facts.top_outcome);
  top.read("deadline_hit", facts.deadline_hit);
  top.read("stalled_since_ms", OptMs{facts.stalled_since});
  top.read("stderr_tail", facts.stderr_text);
  f.read("timings_origin", out.timings_origin);
  f.read("faults", facts.faults);
  Fields hang = f.object("hang_diagnosis");
  hang.read("processes", facts.diagnosis);
  hang.read("note", facts.diagnosis_note);
  hang.read("took_ms", Ms{facts.diagnosis_took});
  f.read("error", out.error);
  if (f.has("python")) python_from(f.object("python"), facts.python);
  f.read("torch_range", out.torch_range);
  f.read("checks", out.checks);
  if (const json* t = f.find("timings_ms")) {
    Fields timings(*t, f.at("timings_ms"));
    for (const auto& [key, value] : t->items()) {
      std::optional<double> ms;
      json_read::read<Doc>(value, timings.at(key), ms);
      out.timings_ms[key] = ms;
    }
  }
  if (const json* ps = f.find("processes")) {
    if (!ps->is_array()) wrong_type(f.at("processes"), "an array", *ps);
    for (std::size_t i = 0; i < ps->size(); ++i) {
      Fields p((*ps)[i], json_read::item_path(f.at("processes"), i));
      ProcessHistory h;
      p.need("pid", h.pid);
      if (const json* j = p.find("job_pid"); j && !j->is_null())
        json_read::read<Doc>(*j, p.at("job_pid"), h.job_pid);
      p.read("ppid", h.first_ppid);
      p.read("last_ppid", h.last_ppid);
      p.read("depth", h.depth);
      p.read("comm", h.comm);
      p.read("cmdline", h.cmdline);
      p.read("role", h.role);
      p.read("rank", h.rank);
      p.read("worker", h.worker);
      p.read("started_ms", Ms{h.started});
      p.read("exited_ms", OptMs{h.exited_at});
      p.read("gone_ms", OptMs{h.gone_at});
      p.read("orphaned_ms", OptMs{h.orphaned_at});
      p.read("zombie_since_ms", OptMs{h.zombie_since});
      p.read("outcome", h.outcome);
      p.read("top", h.is_top);
      p.read("node", h.node);
      if (p.has("logs")) {
        Fields logs = p.object("logs");
        ScenarioResult::ProcessLogs l;
        logs.read("stdout", l.stdout_path);
        logs.read("stderr", l.stderr_path);
        out.process_logs[process_key(h.node, h.pid)] = std::move(l);
      }
      out.processes.push_back(std::move(h));
    }
  }
  if (const json* d = f.find("device")) device_from(*d, f.at("device"), out.timeline.device);
  f.read("job_environment", out.job_environment);
  f.read("tests", out.tests);
  f.read("timeline", out.timeline.observations);
  if (f.has("run")) {
    f.need("run", out.run_index);
    if (out.run_index < 1) fail(f.at("run"), "should be 1 or more");
    --out.run_index;
  }
  f.read("runs", out.runs);
  f.read("nodes", out.nodes);
}

void read_run(const json& doc, RunResult& out) {
  Fields f(doc, "");
  if (const json* s = f.find("schema")) {
    if (!s->is_string() || s->get<std::string>() != kResultSchema)
      fail("schema", "should be \"" + std::string(kResultSchema) + "\"");
  }
  f.need("schema_version", out.schema_version);
  if (out.schema_version > kResultSchemaVersion)
    fail("schema_version", std::to_string(out.schema_version) +
                               " is newer than this build reads (" +
                               std::to_string(kResultSchemaVersion) + ")");
  f.read("tool_version", out.tool_version);
  f.read("command_line", out.command_line);
  f.read("environment", out.environment);
  f.need("scenarios", out.scenarios);
  f.read("aggregates", out.aggregates);
  if (f.has("shard")) {
    Fields s = f.object("shard");
    ShardInfo shard;
    s.need("index", shard.slice.index);
    s.need("count", shard.slice.count);
    s.read("total", shard.total);
    s.read("positions", shard.positions);
    s.read("names", shard.names);
    out.shard = std::move(shard);
  }
  if (f.has("merge")) {
    Fields m = f.object("merge");
    MergeRecord merge;
    if (const json* ins = m.find("inputs")) {
      if (!ins->is_array()) wrong_type(m.at("inputs"), "an array", *ins);
      for (std::size_t i = 0; i < ins->size(); ++i) {
        Fields in((*ins)[i], json_read::item_path(m.at("inputs"), i));
        MergeRecord::Input input;
        in.read("path", input.path);
        in.read("scenarios", input.scenarios);
        in.read("shard", input.shard);
        in.read("command_line", input.command_line);
        in.read("tool_version", input.tool_version);
        merge.inputs.push_back(std::move(input));
      }
    }
    if (m.has("shards")) {
      MergeRecord::Coverage c;
      Fields shards = m.object("shards");
      shards.read("count", c.count);
      shards.read("total", c.total);
      m.read("complete", c.complete);
      m.read("missing_shards", c.missing_shards);
      m.read("missing_positions", c.missing_positions);
      m.read("repeated_positions", c.repeated_positions);
      m.read("incomplete", c.incomplete);
      merge.shards = std::move(c);
    }
    out.merge = std::move(merge);
  }
}

}  // namespace

Expected<RunResult> read_result(const json& doc) {
  if (!doc.is_object())
    return Error{std::string("result.json should be a JSON object, not ") + doc.type_name()};
  try {
    RunResult out;
    read_run(doc, out);
    return out;
  } catch (const ReadError& e) {
    if (e.path.starts_with("schema_version") && e.problem.find("newer") != std::string::npos)
      return Error{"schema_version " + e.problem};
    return Error{e.path + " " + e.problem};
  } catch (const json::exception& e) {
    return Error{e.what()};
  }
}

}  // namespace aftermath
