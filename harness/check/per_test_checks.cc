#include "harness/check/per_test_checks.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "harness/core/per_test_json.h"

namespace aftermath {

using nlohmann::json;

namespace {

constexpr std::string_view kStart = "pytest.test_start";
constexpr std::string_view kEnd = "pytest.test_end";
constexpr std::string_view kSessionEnd = "pytest.session_end";

std::string field(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The boundaries, paired per process: a start opens the process's window, the
// end of the same node id closes it.
std::vector<TestResult> windows(const Timeline& tl) {
  std::vector<TestResult> tests;
  std::map<int, size_t> open;  // pid -> index of its running test
  for (const auto& o : tl.observations) {
    const auto* e = o.as<obs::Event>();
    if (!e || (e->name != kStart && e->name != kEnd)) continue;
    json f = json::parse(e->fields_json, nullptr, false);
    if (!f.is_object()) continue;
    std::string nodeid = field(f, "nodeid");
    if (nodeid.empty()) continue;
    if (e->name == kStart) {
      TestResult t;
      t.nodeid = nodeid;
      t.worker = field(f, "worker");
      t.pid = e->pid;
      t.started = o.t;
      open[e->pid] = tests.size();
      tests.push_back(std::move(t));
      continue;
    }
    auto it = open.find(e->pid);
    if (it == open.end() || tests[it->second].nodeid != nodeid) continue;
    tests[it->second].ended = o.t;
    // A word pytest does not use is the plugin's bug: counted as an error.
    tests[it->second].outcome =
        parse_test_outcome(field(f, "outcome")).value_or(TestOutcome::Error);
    open.erase(it);
  }
  return tests;
}

// Whether test `w` was running at time t: after its start, up to and
// including its end.
bool running_at(const TestResult& w, Nanos t) {
  return w.started < t && (!w.ended || t <= *w.ended);
}

// The test running in pytest process `pid` at time t, if any.
std::optional<size_t> window_at(const std::vector<TestResult>& tests, int pid, Nanos t) {
  for (size_t i = 0; i < tests.size(); ++i)
    if (tests[i].pid == pid && running_at(tests[i], t)) return i;
  return std::nullopt;
}

// When each pytest process said its session was over (its last test and
// the session's fixtures done), by pid.
std::map<int, Nanos> session_ends(const Timeline& tl) {
  std::map<int, Nanos> out;
  for (const auto& o : tl.observations)
    if (const auto* e = event_named(o, kSessionEnd)) out[e->pid] = o.t;
  return out;
}

// The processes that ran tests (pytest itself, xdist workers).
std::set<int> pytest_pids(const std::vector<TestResult>& tests) {
  std::set<int> out;
  for (const auto& t : tests) out.insert(t.pid);
  return out;
}

// For each process, the index of the test it belongs to, or -1.
std::vector<int> attribute_processes(const std::vector<TestResult>& tests,
                                     const std::set<int>& pytest,
                                     const std::vector<ProcessHistory>& procs) {
  std::vector<int> parents = parent_indices(procs);
  std::vector<int> owner(procs.size(), -2);  // -2: not yet known
  std::function<int(size_t, int)> of = [&](size_t i, int depth) -> int {
    if (owner[i] != -2) return owner[i];
    int result = -1;
    int p = parents[i];
    if (pytest.count(procs[i].pid)) {
      result = -1;  // a pytest process is the suite's own, not a test's
    } else if (p >= 0 && depth < 4096) {
      if (pytest.count(procs[p].pid)) {
        auto w = window_at(tests, procs[p].pid, procs[i].started);
        result = w ? static_cast<int>(*w) : -1;
      } else {
        result = of(static_cast<size_t>(p), depth + 1);
      }
    }
    owner[i] = result;
    return result;
  };
  for (size_t i = 0; i < procs.size(); ++i) of(i, 0);
  return owner;
}

// The pid in a torch_<pid>_... name, if it has one.
std::optional<int> pid_in_name(const std::string& name) {
  if (name.rfind("torch_", 0) != 0) return std::nullopt;
  size_t b = 6, e = b;
  while (e < name.size() && name[e] >= '0' && name[e] <= '9') ++e;
  if (e == b || e - b > 9 || e >= name.size() || name[e] != '_') return std::nullopt;
  return std::atoi(name.substr(b, e - b).c_str());
}

// The process the job knew by `pid` at time t (the latest to start by then).
const ProcessHistory* job_process(const std::vector<ProcessHistory>& procs, int pid, Nanos t,
                                  size_t* index) {
  const ProcessHistory* found = nullptr;
  for (size_t i = 0; i < procs.size(); ++i) {
    const ProcessHistory& h = procs[i];
    int seen_as = h.job_pid != 0 ? h.job_pid : h.pid;
    if (seen_as != pid || h.started > t) continue;
    if (!found || h.started > found->started) {
      found = &h;
      *index = i;
    }
  }
  return found;
}

struct ShmLife {
  std::string name;
  Nanos added = 0;
  std::optional<Nanos> removed;
  std::int64_t bytes = 0;
};

std::vector<ShmLife> shm_lives(const Timeline& tl) {
  std::vector<ShmLife> out;
  std::map<std::string, size_t> open;
  for (const auto& o : tl.observations) {
    if (const auto* a = o.as<obs::ShmAdd>(); a && !a->baseline) {
      open[a->name] = out.size();
      out.push_back(ShmLife{a->name, o.t, std::nullopt, a->bytes});
    } else if (const auto* r = o.as<obs::ShmResize>()) {
      if (auto it = open.find(r->name); it != open.end()) out[it->second].bytes = r->bytes;
    } else if (const auto* x = o.as<obs::ShmRemove>()) {
      if (auto it = open.find(x->name); it != open.end()) {
        out[it->second].removed = o.t;
        open.erase(it);
      }
    }
  }
  return out;
}

std::string describe(const ProcessHistory& p) {
  return std::string(to_string(p.role)) + " " + std::to_string(p.pid) + " (" +
         (p.comm.empty() ? p.cmdline.substr(0, 60) : p.comm) + ")";
}

// Whether the pytest process itself still held process i at time S: i was
// running then, and so was every ancestor between it and a pytest process
// (its first parents), so that only the session's end would end it. A
// DataLoader worker of an iterator kept in a global is; a worker whose own
// parent was killed during the test is not (it is judged as an orphan).
bool held_by_pytest(const std::vector<ProcessHistory>& procs, const std::vector<int>& parents,
                    const std::set<int>& pytest, size_t i, Nanos S) {
  auto alive_at = [&](const ProcessHistory& h) {
    auto end = h.end();
    return (!end || *end > S) && !(h.orphaned_at && *h.orphaned_at <= S);
  };
  if (!alive_at(procs[i])) return false;
  for (int j = parents[i], depth = 0; j >= 0 && depth < 4096; j = parents[j], ++depth) {
    if (pytest.count(procs[j].pid)) return true;
    if (!alive_at(procs[j])) return false;
  }
  return false;
}

// What process `h` of a test that ended at T left behind, if anything; S:
// when the pytest process that ran the test ended its session, where it said
// so and still held `h` then (held_by_pytest).
std::optional<TestLeak> process_leak(const CheckInput& in, const ProcessHistory& h, Nanos T,
                                     std::optional<Nanos> S) {
  auto end = h.end();
  TestLeak l;
  l.pid = h.pid;
  // A zombie at the end, or one within the grace after it (a child that
  // exits as its test ends and that nobody reaps).
  Nanos zgrace = in.grace("no_zombies", h.role);
  if (h.zombie_since && *h.zombie_since <= T + zgrace) {
    Nanos from = std::max(*h.zombie_since, T);
    Nanos until = h.gone_at ? *h.gone_at : in.end_at;
    if (until - from > zgrace) {
      l.kind = LeakKind::Zombie;
      l.what = describe(h) + " a zombie " + (*h.zombie_since <= T ? "at" : "just after") +
               " the test's end, unreaped for " +
               (h.gone_at ? format_duration(until - from) : "the rest of the run");
      return l;
    }
    if (*h.zombie_since <= T) return std::nullopt;
  }
  bool alive_at_end = !end || *end > T;
  // Orphaned during the test (its tree broke before its end); one orphaned
  // later, by an ancestor's exit after the test, is judged as still running.
  if (h.orphaned_at && *h.orphaned_at <= T && *h.orphaned_at < in.teardown_at && alive_at_end) {
    Nanos grace = in.grace("no_orphans", h.role);
    bool survived = !end || *end > in.teardown_at;
    Nanos life = std::max<Nanos>(0, (survived ? in.teardown_at : *end) - *h.orphaned_at);
    if (survived || life > grace) {
      l.kind = LeakKind::Orphan;
      l.what =
          describe(h) + " outlived its parent by " +
          (survived ? "≥ " + format_duration(life) + ", cut by teardown" : format_duration(life));
      return l;
    }
  }
  Nanos grace = in.grace("all_exited", h.role);
  if (!end || *end > T + grace) {
    l.kind = LeakKind::Process;
    l.what = describe(h) + " still running " +
             (end ? format_duration(*end - T) + " after the test's end" : "when the run ended");
    return l;
  }
  // Alive at the test's end and still alive when the session was over: it
  // lived as long as the session (the workers of a DataLoader iterator kept
  // in a global end only at exit), however soon after the test that came.
  if (S && *S >= T && alive_at_end) {
    l.kind = LeakKind::Process;
    l.what = describe(h) + " still running when the session ended, " + format_duration(*S - T) +
             " after the test's end";
    return l;
  }
  return std::nullopt;
}

// Device memory a process of the test still held, by NVML, after the
// test's end and its grace: the most it held on each GPU then.
std::vector<TestLeak> device_leaks(const CheckInput& in, const ProcessHistory& h, Nanos T) {
  Nanos grace = in.grace("all_exited", h.role);
  std::map<int, std::int64_t> most;  // GPU index -> bytes
  for (const GpuSample& s : in.timeline.device.samples) {
    if (s.t <= T + grace || !s.error.empty()) continue;
    for (const GpuProcess& p : s.processes)
      if (p.pid == h.pid && p.used_bytes > 0) most[s.index] = std::max(most[s.index], p.used_bytes);
  }
  std::vector<TestLeak> out;
  for (const auto& [gpu, bytes] : most) {
    TestLeak l;
    l.kind = LeakKind::Device;
    l.pid = h.pid;
    l.bytes = bytes;
    l.name = "GPU " + std::to_string(gpu);
    l.what = describe(h) + " held " + format_bytes(bytes) + " on GPU " + std::to_string(gpu) +
             " after the test's end";
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace

bool saw_tests(const Timeline& tl) {
  for (const auto& o : tl.observations)
    if (event_named(o, kStart) || event_named(o, kEnd)) return true;
  return false;
}

std::vector<TestResult> judge_tests(const CheckInput& in) {
  std::vector<TestResult> tests = windows(in.timeline);
  if (tests.empty()) return tests;
  const auto& procs = in.processes;
  const std::set<int> pytest = pytest_pids(tests);
  std::vector<int> owner = attribute_processes(tests, pytest, procs);
  const std::map<int, Nanos> session_end = session_ends(in.timeline);
  const std::vector<int> parents = parent_indices(procs);
  for (size_t i = 0; i < procs.size(); ++i) {
    if (owner[i] < 0) continue;
    TestResult& t = tests[owner[i]];
    t.processes.push_back(procs[i].pid);
    if (!t.ended) continue;
    std::optional<Nanos> S;
    if (auto it = session_end.find(t.pid);
        it != session_end.end() && held_by_pytest(procs, parents, pytest, i, it->second))
      S = it->second;
    if (auto l = process_leak(in, procs[i], *t.ended, S)) t.leaks.push_back(std::move(*l));
    for (auto& l : device_leaks(in, procs[i], *t.ended)) t.leaks.push_back(std::move(l));
  }
  Nanos shm_grace = in.grace("shm_clean");
  for (const ShmLife& s : shm_lives(in.timeline)) {
    std::optional<size_t> test;
    if (auto pid = pid_in_name(s.name)) {
      size_t index = 0;
      if (const ProcessHistory* h = job_process(procs, *pid, s.added, &index)) {
        if (pytest.count(h->pid))
          test = window_at(tests, h->pid, s.added);
        else if (owner[index] >= 0)
          test = static_cast<size_t>(owner[index]);
      }
    } else {
      std::vector<size_t> running;
      for (size_t i = 0; i < tests.size(); ++i)
        if (running_at(tests[i], s.added)) running.push_back(i);
      if (running.size() == 1) test = running[0];
    }
    if (!test || !tests[*test].ended) continue;
    TestResult& t = tests[*test];
    if (s.removed && *s.removed <= *t.ended + shm_grace) continue;
    TestLeak l;
    l.kind = LeakKind::Shm;
    l.name = s.name;
    l.bytes = s.bytes;
    l.what = "/dev/shm/" + s.name + " (" + format_bytes(s.bytes) + ") " +
             (s.removed ? "removed only " + format_duration(*s.removed - *t.ended) +
                              " after the test's end"
                        : "left behind");
    t.leaks.push_back(std::move(l));
  }
  return tests;
}

CheckResult tests_clean(const CheckInput& in) {
  CheckResult r;
  std::vector<TestResult> tests = judge_tests(in);
  r.measured["tests"] = tests.size();
  json leaking = json::array(), unfinished = json::array();
  std::vector<std::string> lines;
  for (const auto& t : tests) {
    if (!t.ended) unfinished.push_back(t.nodeid);
    if (t.leaks.empty()) continue;
    json leaks = json::array();
    std::map<std::string, int> kinds;
    for (const auto& l : t.leaks) {
      leaks.push_back(to_json(l));
      ++kinds[std::string(to_string(l.kind))];
    }
    leaking.push_back(json{{"nodeid", t.nodeid}, {"worker", t.worker}, {"leaks", leaks}});
    std::string counts;
    for (const auto& [k, n] : kinds)
      counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + k;
    lines.push_back(t.nodeid + " (" + counts + ")");
  }
  r.measured["leaking"] = leaking;
  r.measured["unfinished"] = unfinished;
  std::string also;
  if (!unfinished.empty())
    also = "; " + std::to_string(unfinished.size()) +
           " test(s) still running when the run ended, not judged";
  if (tests.empty()) {
    r.status = CheckStatus::Skipped;
    r.reason = "the job reported no tests (run a pytest suite with -p aftermath_pytest)";
  } else if (lines.empty()) {
    r.status = CheckStatus::Pass;
    r.reason = std::to_string(tests.size()) + " test(s), none left anything behind" + also;
  } else {
    r.status = CheckStatus::Fail;
    std::string list;
    for (size_t i = 0; i < lines.size(); ++i) list += (i ? ", " : "") + lines[i];
    r.reason = std::to_string(lines.size()) + " of " + std::to_string(tests.size()) +
               " test(s) left something behind: " + list + also;
  }
  return r;
}

}  // namespace aftermath
