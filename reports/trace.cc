#include "reports/trace.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "harness/core/result.h"
#include "reports/repeat_view.h"
#include "reports/view.h"

namespace aftermath {

namespace {

using nlohmann::json;
using report::format_ms;
using report::items;
using report::member;
using report::num;
using report::str;

// Trace timestamps are microseconds; result.json has milliseconds with
// nanosecond digits. Rounded to the nanosecond so floating noise does not
// show up as 0.30000000000000004.
double us(double ms) { return std::round(ms * 1e6) / 1e3; }

json metadata(const char* name, int pid, long long tid, json args) {
  return {{"ph", "M"},  {"name", name}, {"pid", pid},
          {"tid", tid}, {"ts", 0},      {"args", std::move(args)}};
}

json instant(std::string name, const char* cat, const char* scope, int pid, long long tid,
             double t_ms, json args = json::object()) {
  return {{"ph", "i"},  {"s", scope}, {"name", std::move(name)}, {"cat", cat},
          {"pid", pid}, {"tid", tid}, {"ts", us(t_ms)},          {"args", std::move(args)}};
}

json complete(std::string name, const char* cat, int pid, long long tid, double t0_ms, double t1_ms,
              json args) {
  return {{"ph", "X"},
          {"name", std::move(name)},
          {"cat", cat},
          {"pid", pid},
          {"tid", tid},
          {"ts", us(t0_ms)},
          {"dur", std::max(0.0, us(t1_ms) - us(t0_ms))},
          {"args", std::move(args)}};
}

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// A counter sample on the harness track.
json counter(const std::string& name, int pid, double t_ms, json args) {
  return {{"ph", "C"},      {"name", name},           {"pid", pid}, {"tid", kTraceHarnessTid},
          {"ts", us(t_ms)}, {"args", std::move(args)}};
}

// One track per job process: its life, orphan and zombie spans, its exit.
// Returns the pids that have a track.
std::map<long long, bool> add_process_tracks(json& events, const json& sc, int pid, double end) {
  auto procs = report::processes_by_role(sc);
  std::map<long long, bool> is_job;
  int order = 0;
  for (const auto& p : procs) {
    // The track: the pid, unique across the nodes of a multi-node run.
    const long long tid = aftermath::process_key(p.node.value_or(-1), p.pid);
    is_job[tid] = true;
    std::string track = (p.node ? "node" + std::to_string(*p.node) + " " : std::string()) + p.role +
                        " " + std::to_string(p.pid) + " " + p.comm;
    json track_args = {{"name", track}};
    // The process's own log files (result.json's processes[].logs, under its out_dir).
    json logs = json::object();
    if (!p.log_stdout.empty()) logs["stdout"] = report::scenario_file(sc, p.log_stdout);
    if (!p.log_stderr.empty()) logs["stderr"] = report::scenario_file(sc, p.log_stderr);
    if (!logs.empty()) track_args["logs"] = logs;
    events.push_back(metadata("thread_name", pid, tid, std::move(track_args)));
    // processes_by_role already groups by role, so its order is the sort key.
    events.push_back(metadata("thread_sort_index", pid, tid, {{"sort_index", ++order}}));

    double life_end = p.life_end_ms.value_or(end);
    json args = {{"pid", p.pid},
                 {"ppid", member(*p.src, "ppid")},
                 {"last_ppid", member(*p.src, "last_ppid")},
                 {"role", p.role},
                 {"cmdline", p.cmdline},
                 {"top", p.top},
                 {"outcome", p.outcome.empty() ? json(nullptr) : json(p.outcome)},
                 {"started_ms", p.start_ms},
                 {"exited_ms", opt(p.exited_ms)},
                 {"gone_ms", opt(p.gone_ms)},
                 {"orphaned_ms", opt(p.orphaned_ms)},
                 {"zombie_since_ms", opt(p.zombie_since_ms)},
                 {"alive_at_end", !p.life_end_ms.has_value()}};
    if (p.rank) args["rank"] = *p.rank;
    if (p.worker) args["worker"] = *p.worker;
    if (!logs.empty()) args["logs"] = logs;
    events.push_back(complete(p.comm.empty() ? "pid " + std::to_string(p.pid) : p.comm, "process",
                              pid, tid, p.start_ms, life_end, std::move(args)));
    // Nested inside the life slice: same end, later or equal start, so
    // viewers stack it under the life rather than beside it.
    if (p.orphaned_ms) {
      double from = std::clamp(*p.orphaned_ms, p.start_ms, life_end);
      events.push_back(complete("orphaned", "orphan", pid, tid, from, life_end,
                                {{"parent_pid", member(*p.src, "ppid")}}));
    }
    // After the life slice: exited but not yet reaped.
    if (p.zombie_since_ms) {
      double from = std::max(*p.zombie_since_ms, life_end);
      double to = p.gone_ms.value_or(end);
      if (to > from) {
        events.push_back(
            complete("zombie", "zombie", pid, tid, from, to, {{"reaped_ms", opt(p.gone_ms)}}));
      }
    }
    if (p.life_end_ms) {
      std::string label = !p.outcome.empty() ? p.outcome : p.exited_ms ? "exited" : "gone";
      events.push_back(instant(label, "exit", "t", pid, tid, *p.life_end_ms));
    }
  }
  return is_job;
}

// The timeline's phases, signals, faults, samples and /dev/shm changes.
void add_observations(json& events, const json& sc, int pid,
                      const std::map<long long, bool>& is_job) {
  for (const json* e : items(sc, "timeline")) {
    auto t = num(*e, "t_ms");
    if (!t) continue;
    std::string kind = str(*e, "kind");
    if (kind == "phase") {
      events.push_back(instant(str(*e, "name", "phase"), "phase", "p", pid, kTraceHarnessTid, *t));
    } else if (kind == "signal" || kind == "fault") {
      long long target = static_cast<long long>(num(*e, "pid").value_or(0));
      long long key = report::process_key(*e);
      long long tid = is_job.count(key) ? key : kTraceHarnessTid;
      if (kind == "signal") {
        events.push_back(instant(str(*e, "signal", "signal"), "signal", "t", pid, tid, *t,
                                 {{"pid", target}, {"why", str(*e, "why")}}));
      } else {
        events.push_back(
            instant("fault " + str(*e, "action"), "fault", "t", pid, tid, *t,
                    {{"pid", target}, {"index", member(*e, "index")}, {"what", str(*e, "what")}}));
      }
    } else if (kind == "oom_kill") {
      long long target = static_cast<long long>(num(*e, "pid").value_or(0));
      long long key = report::process_key(*e);
      long long tid = is_job.count(key) ? key : kTraceHarnessTid;
      events.push_back(instant("oom_kill", "fault", "t", pid, tid, *t,
                               {{"pid", target},
                                {"index", member(*e, "index")},
                                {"kills", member(*e, "kills")},
                                {"cgroup", str(*e, "cgroup")}}));
    } else if (kind == "sample") {
      events.push_back(
          counter("job processes", pid, *t, {{"processes", num(*e, "procs").value_or(0)}}));
      events.push_back(
          counter("/dev/shm bytes", pid, *t, {{"bytes", num(*e, "shm_bytes").value_or(0)}}));
    } else if (kind == "memory") {
      events.push_back(
          counter("job RSS bytes", pid, *t, {{"bytes", num(*e, "rss_bytes").value_or(0)}}));
    } else if (kind.rfind("shm_", 0) == 0) {
      const json& baseline = member(*e, "baseline");
      if (baseline.is_boolean() && baseline.get<bool>()) continue;
      json args = {{"name", str(*e, "name")}};
      if (auto b = num(*e, "bytes")) args["bytes"] = *b;
      events.push_back(instant(kind + " " + str(*e, "name"), "shm", "t", pid, kTraceHarnessTid, *t,
                               std::move(args)));
    }
  }
}

void add_scenario(json& events, const json& sc, int pid) {
  const double end = report::scenario_end_ms(sc);
  // One of several runs is named with its number ("hang run 2/5").
  std::string name =
      str(sc, "name").empty() ? "scenario " + std::to_string(pid) : report::run_label(sc);
  std::string verdict = str(sc, "verdict", "unknown");

  events.push_back(metadata("process_name", pid, kTraceHarnessTid, {{"name", name}}));
  events.push_back(metadata("process_labels", pid, kTraceHarnessTid, {{"labels", verdict}}));
  events.push_back(metadata("process_sort_index", pid, kTraceHarnessTid, {{"sort_index", pid}}));
  events.push_back(metadata("thread_name", pid, kTraceHarnessTid, {{"name", "harness"}}));
  events.push_back(metadata("thread_sort_index", pid, kTraceHarnessTid, {{"sort_index", -1}}));

  add_observations(events, sc, pid, add_process_tracks(events, sc, pid, end));

  // A pytest suite's tests: a slice per test on the track of the process
  // that ran it, nested in its life, with what the test left behind.
  for (const json* t : items(sc, "tests")) {
    auto t0 = num(*t, "start_ms");
    auto tpid = report::opt_int(*t, "pid");
    if (!t0 || !tpid) continue;
    json left = json::array();
    for (const json* l : items(*t, "leaks"))
      left.push_back(str(*l, "kind") + ": " + str(*l, "what"));
    events.push_back(
        complete(str(*t, "nodeid", "test"), left.empty() ? "test" : "test,leak", pid, *tpid, *t0,
                 num(*t, "end_ms").value_or(end),
                 {{"outcome", str(*t, "outcome")}, {"worker", str(*t, "worker")}, {"left", left}}));
  }

  // Device memory in use, one counter track per GPU (none without a GPU).
  for (const json* g : items(member(sc, "device"), "samples")) {
    auto t = num(*g, "t_ms");
    auto used = num(*g, "used_bytes");
    auto index = num(*g, "index");
    if (!t || !used || !index) continue;
    events.push_back(
        counter("GPU " + std::to_string(static_cast<long long>(*index)) + " memory used", pid, *t,
                {{"bytes", *used}}));
  }

  // The verdict at the end of the scenario, carrying what a reader wants
  // next to the picture: the reason, the failed checks, the timings.
  json failed = json::array();
  for (const auto& c : report::failed_checks(sc)) failed.push_back(c);
  json timings = member(sc, "timings_ms").is_object() ? member(sc, "timings_ms") : json::object();
  events.push_back(instant("verdict: " + verdict, "verdict", "p", pid, kTraceHarnessTid, end,
                           {{"verdict", verdict},
                            {"reason", str(sc, "verdict_reason")},
                            {"failed_checks", failed},
                            {"timings_ms", timings},
                            {"repro", str(sc, "repro")}}));
}

}  // namespace

json render_trace(const json& result) {
  json events = json::array();
  int pid = 0;
  for (const json* sc : items(result, "scenarios")) add_scenario(events, *sc, ++pid);
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ms"},
          {"otherData",
           {{"generator", "aftermath"},
            {"tool_version", str(result, "tool_version")},
            {"command_line", str(result, "command_line")}}}};
}

}  // namespace aftermath
