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
std::map<long long, bool> add_process_tracks(json& events, const ScenarioResult& sc, int pid,
                                             double end) {
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
                 {"ppid", p.history->first_ppid},
                 {"last_ppid", p.history->last_ppid},
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
                                {{"parent_pid", p.history->first_ppid}}));
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

// A /dev/shm change on the harness track: "shm_add torch_1_2", with its bytes.
void add_shm(json& events, const Observation& o, int pid, const std::string& name,
             std::optional<std::int64_t> bytes) {
  json args = {{"name", name}};
  if (bytes) args["bytes"] = *bytes;
  events.push_back(instant(std::string(o.word()) + " " + name, "shm", "t", pid, kTraceHarnessTid,
                           to_ms(o.t), std::move(args)));
}

// The timeline's phases, signals, faults, samples and /dev/shm changes.
void add_observations(json& events, const ScenarioResult& sc, int pid,
                      const std::map<long long, bool>& is_job) {
  // A process's own track where it has one, else the harness's.
  auto track = [&](const Observation& o, int target) {
    long long key = aftermath::process_key(o.node, target);
    return is_job.count(key) ? key : kTraceHarnessTid;
  };
  for (const Observation& o : sc.timeline.observations) {
    const double t = to_ms(o.t);
    if (const auto* ph = o.as<obs::Phase>()) {
      events.push_back(
          instant(std::string(to_string(ph->name)), "phase", "p", pid, kTraceHarnessTid, t));
    } else if (const auto* sig = o.as<obs::Signal>()) {
      events.push_back(instant(signal_name(sig->signo), "signal", "t", pid, track(o, sig->pid), t,
                               {{"pid", sig->pid}, {"why", sig->why}}));
    } else if (const auto* f = o.as<obs::Fault>()) {
      events.push_back(instant("fault " + std::string(to_string(f->action)), "fault", "t", pid,
                               track(o, f->pid), t,
                               {{"pid", f->pid}, {"index", f->index}, {"what", f->what}}));
    } else if (const auto* oom = o.as<obs::OomKill>()) {
      events.push_back(instant("oom_kill", "fault", "t", pid, track(o, oom->pid), t,
                               {{"pid", oom->pid},
                                {"index", oom->index},
                                {"kills", oom->kills},
                                {"cgroup", oom->cgroup}}));
    } else if (const auto* sample = o.as<obs::Sample>()) {
      events.push_back(counter("job processes", pid, t, {{"processes", sample->procs}}));
      events.push_back(counter("/dev/shm bytes", pid, t, {{"bytes", sample->shm_bytes}}));
    } else if (const auto* mem = o.as<obs::Memory>()) {
      events.push_back(counter("job RSS bytes", pid, t, {{"bytes", mem->rss_bytes}}));
    } else if (const auto* add = o.as<obs::ShmAdd>()) {
      if (!add->baseline) add_shm(events, o, pid, add->name, add->bytes);
    } else if (const auto* resize = o.as<obs::ShmResize>()) {
      add_shm(events, o, pid, resize->name, resize->bytes);
    } else if (const auto* remove = o.as<obs::ShmRemove>()) {
      add_shm(events, o, pid, remove->name, std::nullopt);
    } else if (const auto* reclaim = o.as<obs::ShmReclaim>()) {
      add_shm(events, o, pid, reclaim->name, reclaim->bytes);
    } else if (const auto* held = o.as<obs::ShmHeld>()) {
      add_shm(events, o, pid, held->path, held->bytes);
    }
  }
}

void add_scenario(json& events, const ScenarioResult& sc, int pid) {
  const double end = report::scenario_end_ms(sc);
  // One of several runs is named with its number ("hang run 2/5").
  std::string name = sc.name.empty() ? "scenario " + std::to_string(pid) : report::run_label(sc);
  const std::string verdict(to_string(sc.verdict));

  events.push_back(metadata("process_name", pid, kTraceHarnessTid, {{"name", name}}));
  events.push_back(metadata("process_labels", pid, kTraceHarnessTid, {{"labels", verdict}}));
  events.push_back(metadata("process_sort_index", pid, kTraceHarnessTid, {{"sort_index", pid}}));
  events.push_back(metadata("thread_name", pid, kTraceHarnessTid, {{"name", "harness"}}));
  events.push_back(metadata("thread_sort_index", pid, kTraceHarnessTid, {{"sort_index", -1}}));

  add_observations(events, sc, pid, add_process_tracks(events, sc, pid, end));

  // A pytest suite's tests: a slice per test on the track of the process
  // that ran it, nested in its life, with what the test left behind.
  for (const TestResult& t : sc.tests) {
    json left = json::array();
    for (const TestLeak& l : t.leaks)
      left.push_back(std::string(to_string(l.kind)) + ": " + l.what);
    events.push_back(complete(
        t.nodeid.empty() ? "test" : t.nodeid, left.empty() ? "test" : "test,leak", pid, t.pid,
        to_ms(t.started), t.ended ? to_ms(*t.ended) : end,
        {{"outcome", std::string(to_string(t.outcome))}, {"worker", t.worker}, {"left", left}}));
  }

  // Device memory in use, one counter track per GPU (none without a GPU).
  if (sc.timeline.device.unavailable.empty())
    for (const GpuSample& g : sc.timeline.device.samples)
      events.push_back(counter("GPU " + std::to_string(g.index) + " memory used", pid, to_ms(g.t),
                               {{"bytes", g.used}}));

  // The verdict at the end of the scenario, carrying what a reader wants
  // next to the picture: the reason, the failed checks, the timings.
  json failed = json::array();
  for (const auto& c : report::failed_checks(sc)) failed.push_back(c);
  json timings = json::object();
  for (const auto& [key, value] : sc.timings_ms) timings[key] = opt(value);
  events.push_back(instant("verdict: " + verdict, "verdict", "p", pid, kTraceHarnessTid, end,
                           {{"verdict", verdict},
                            {"reason", sc.verdict_reason},
                            {"failed_checks", failed},
                            {"timings_ms", timings},
                            {"repro", sc.repro}}));
}

}  // namespace

json render_trace(const RunResult& run) {
  json events = json::array();
  int pid = 0;
  for (const ScenarioResult& sc : run.scenarios) add_scenario(events, sc, ++pid);
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ms"},
          {"otherData",
           {{"generator", "aftermath"},
            {"tool_version", run.tool_version},
            {"command_line", run.command_line}}}};
}

}  // namespace aftermath
