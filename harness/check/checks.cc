#include "harness/check/checks.h"

#include <algorithm>
#include <functional>
#include <regex>
#include <set>

#include "harness/check/check_params.h"
#include "harness/check/data_checks.h"
#include "harness/check/device_checks.h"
#include "harness/check/memory_checks.h"
#include "harness/check/per_test_checks.h"
#include "harness/check/shm_story.h"
#include "harness/check/tmp_checks.h"
#include "harness/observe/python_stack.h"
#include "harness/observe/roles.h"

namespace aftermath {

using nlohmann::json;

namespace {

json process_json(const ProcessHistory& p) {
  return json{{"pid", p.pid},
              {"role", std::string(to_string(p.role))},
              {"comm", p.comm},
              {"cmdline", p.cmdline.size() > 200 ? p.cmdline.substr(0, 200) + "..." : p.cmdline}};
}

std::string first_lines(const std::vector<std::string>& items, size_t n) {
  std::string s;
  for (size_t i = 0; i < items.size() && i < n; ++i) s += (i ? ", " : "") + items[i];
  if (items.size() > n) s += ", ... (" + std::to_string(items.size()) + " in all)";
  return s;
}

std::string describe(const ProcessHistory& p) {
  return std::string(to_string(p.role)) + " " + std::to_string(p.pid) + " (" +
         (p.comm.empty() ? p.cmdline : p.comm) + ")";
}

std::optional<Nanos> top_exit(const CheckInput& in) {
  for (const auto& p : in.processes)
    if (p.is_top && p.end()) return p.end();
  return std::nullopt;
}

CheckResult all_exited(const CheckInput& in) {
  CheckResult r;
  json survivors = json::array();
  std::vector<std::string> names;
  Nanos last_end = 0;
  for (const auto& p : in.processes) {
    auto end = p.end();
    if (!end || *end > in.teardown_at) {
      json j = process_json(p);
      j["gone_ms"] = end ? json(to_ms(*end)) : json(nullptr);
      survivors.push_back(j);
      names.push_back(describe(p));
    } else {
      last_end = std::max(last_end, *end);
    }
  }
  r.measured["survivors"] = survivors;
  r.measured["processes"] = in.processes.size();
  auto top = top_exit(in);
  r.measured["last_exit_after_top_ms"] =
      (top && survivors.empty()) ? json(to_ms(std::max<Nanos>(0, last_end - *top))) : json(nullptr);
  if (survivors.empty()) {
    r.status = CheckStatus::Pass;
    r.reason = std::to_string(in.processes.size()) + " processes, all exited by themselves";
  } else {
    r.status = CheckStatus::Fail;
    r.reason = std::to_string(survivors.size()) +
               " process(es) still alive at teardown: " + first_lines(names, 4);
  }
  return r;
}

// A grace per role, or one for all: what measured values and reasons say.
json grace_json(const CheckInput& in, const std::string& check) {
  json g = json::object();
  g["default"] = to_ms(in.grace(check));
  for (Role r : {Role::Launcher, Role::Rank, Role::Worker, Role::Helper, Role::Unknown})
    if (in.grace(check, r) != in.grace(check))
      g[std::string(to_string(r))] = to_ms(in.grace(check, r));
  return g;
}

CheckResult no_orphans(const CheckInput& in) {
  CheckResult r;
  json orphans = json::array();
  std::vector<std::string> bad;
  std::map<Role, int> by_role;
  for (const auto& p : in.processes) {
    if (!p.orphaned_at || p.is_top) continue;
    // Orphaned by the harness's own teardown (a parent killed a moment
    // before its child): not the job's doing.
    if (*p.orphaned_at >= in.teardown_at) continue;
    Nanos grace = in.grace("no_orphans", p.role);
    auto end = p.end();
    bool survived = !end || *end > in.teardown_at;
    Nanos until = survived ? in.teardown_at : *end;
    Nanos life = std::max<Nanos>(0, until - *p.orphaned_at);
    json j = process_json(p);
    j["parent_pid"] = p.first_ppid;
    j["orphaned_ms"] = to_ms(*p.orphaned_at);
    j["orphan_lifetime_ms"] = to_ms(life);
    // Alive when the teardown began: the lifetime is only a lower bound, cut
    // short by the harness.
    j["lifetime_is_lower_bound"] = survived;
    j["alive_at_teardown"] = survived;
    j["grace_ms"] = to_ms(grace);
    j["over_grace"] = life > grace || survived;
    orphans.push_back(j);
    ++by_role[p.role];
    if (life > grace || survived)
      bad.push_back(
          describe(p) + " outlived its parent by " +
          (survived ? "≥ " + format_duration(life) + ", cut by teardown" : format_duration(life)));
  }
  r.measured["grace_ms"] = to_ms(in.grace("no_orphans"));
  r.measured["grace_by_role_ms"] = grace_json(in, "no_orphans");
  r.measured["orphans"] = orphans;
  r.measured["max_orphan_lifetime_ms"] = 0.0;
  bool max_is_bound = false;
  for (const auto& o : orphans) {
    double ms = o["orphan_lifetime_ms"].get<double>();
    if (ms >= r.measured["max_orphan_lifetime_ms"].get<double>()) {
      max_is_bound = ms > r.measured["max_orphan_lifetime_ms"].get<double>()
                         ? o["lifetime_is_lower_bound"].get<bool>()
                         : max_is_bound || o["lifetime_is_lower_bound"].get<bool>();
      r.measured["max_orphan_lifetime_ms"] = ms;
    }
  }
  r.measured["max_orphan_lifetime_is_lower_bound"] = max_is_bound;
  std::string counts;
  for (const auto& [role, n] : by_role)
    counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " +
              std::string(to_string(role)) + (n == 1 ? "" : "s");
  if (bad.empty()) {
    r.status = CheckStatus::Pass;
    r.reason = orphans.empty() ? "no process outlived its parent"
                               : std::to_string(orphans.size()) + " orphan(s) (" + counts +
                                     "), all gone within their grace";
  } else {
    r.status = CheckStatus::Fail;
    r.reason = std::to_string(bad.size()) + " orphan(s) over their grace (" + counts +
               " orphaned): " + first_lines(bad, 3);
  }
  return r;
}

// How long a launcher may leave its exited children unreaped: the poll
// interval of a launcher that reaps on a timer (torchrun's monitor interval,
// read from its command line, or the check's `launcher_poll`).
std::optional<Nanos> parent_poll(const CheckInput& in, const ProcessHistory& zombie) {
  const ProcessHistory* parent = nullptr;
  for (const auto& p : in.processes)
    if (p.pid == zombie.last_ppid && p.started <= zombie.started) parent = &p;
  if (!parent) return std::nullopt;
  std::optional<Nanos> poll = check_params<NoZombiesParams>(in.scenario).launcher_poll;
  if (poll && parent->role == Role::Launcher) return *poll;
  return launcher_poll_interval(parent->cmdline,
                                in.timeline.facts.python.torchrun_monitor_interval);
}

CheckResult no_zombies(const CheckInput& in) {
  CheckResult r;
  json zombies = json::array();
  std::vector<std::string> bad;
  for (const auto& p : in.processes) {
    if (!p.zombie_since) continue;
    Nanos grace = in.grace("no_zombies", p.role);
    auto poll = parent_poll(in, p);
    Nanos allowed = grace + poll.value_or(0);
    // Unreaped for as long as it was seen so: a scan that found it gone
    // tells only that it was reaped since the scan before, which still
    // found it (a loaded machine stretches that gap; the job did not).
    Nanos until = p.gone_at ? *p.gone_at : in.end_at;
    if (p.gone_at && p.last_present) until = std::max(*p.zombie_since, *p.last_present);
    Nanos life = std::max<Nanos>(0, until - *p.zombie_since);
    if (life <= allowed) continue;
    json j = process_json(p);
    j["parent_pid"] = p.last_ppid;
    j["zombie_since_ms"] = to_ms(*p.zombie_since);
    j["zombie_lifetime_ms"] = to_ms(life);
    j["reaped_ms"] = p.gone_at ? json(to_ms(*p.gone_at)) : json(nullptr);
    j["last_seen_unreaped_ms"] = p.last_present ? json(to_ms(*p.last_present)) : json(nullptr);
    j["allowed_ms"] = to_ms(allowed);
    j["parent_poll_ms"] = poll ? json(to_ms(*poll)) : json(nullptr);
    zombies.push_back(j);
    bad.push_back(describe(p) + " unreaped for " + format_duration(life) + " (parent " +
                  std::to_string(p.last_ppid) +
                  (poll ? ", which reaps every " + format_duration(*poll) : std::string()) + ")");
  }
  r.measured["grace_ms"] = to_ms(in.grace("no_zombies"));
  r.measured["grace_by_role_ms"] = grace_json(in, "no_zombies");
  r.measured["zombies"] = zombies;
  if (bad.empty()) {
    r.status = CheckStatus::Pass;
    r.reason =
        "every exited process was reaped within its grace (and its launcher's poll interval)";
  } else {
    r.status = CheckStatus::Fail;
    r.reason = std::to_string(bad.size()) + " zombie(s): " + first_lines(bad, 3);
  }
  return r;
}

// A process alive when the teardown began that is itself a leftover: an
// orphan already past its no_orphans grace then (an escaped daemon, a
// worker that never noticed its dead parent). What it holds is the job's
// leak, not something the teardown cut short. The reason it is one, or "".
std::string leftover_at_teardown(const CheckInput& in, const ProcessHistory& p) {
  if (!p.orphaned_at || *p.orphaned_at > in.teardown_at) return "";
  Nanos orphaned_for = in.teardown_at - *p.orphaned_at;
  Nanos grace = in.grace("no_orphans", p.role);
  if (orphaned_for <= grace) return "";
  return "pid " + std::to_string(p.pid) + " (" + std::string(to_string(p.role)) + ", " + p.comm +
         "), orphaned " + format_duration(orphaned_for) + " when the teardown began, past its " +
         format_duration(grace) + " grace";
}

// Who owned a /dev/shm entry when the teardown began: a live job process
// mapping or holding it, or (a torch_* segment) a live torch_shm_manager of
// the job, which unlinks what it tracked once its clients are gone. Such an
// entry was cut short by the harness, not left behind by the job, as long as
// its owner was itself within its grace (a manager in its designed linger);
// an owner that is a leftover (leftover_at_teardown) makes it a leak, named
// in `leftover_holders`.
std::map<std::string, std::string> owned_at_teardown(
    const CheckInput& in, std::map<std::string, std::string>* leftover_holders) {
  std::map<std::string, std::string> owner;
  std::map<int, const ProcessHistory*> by_pid;
  for (const auto& p : in.processes) by_pid[p.pid] = &p;
  for (const auto& o : in.timeline.observations) {
    const auto* h = o.as<obs::ShmHeld>();
    if (!h || o.t < in.teardown_at) continue;
    if (h->path.rfind("/dev/shm/", 0) != 0) continue;
    std::string name = h->path.substr(9);
    auto it = by_pid.find(h->pid);
    std::string leftover = it == by_pid.end() ? "" : leftover_at_teardown(in, *it->second);
    std::string& who = leftover.empty() ? owner[name] : (*leftover_holders)[name];
    who += (who.empty() ? "" : ", ") +
           (leftover.empty() ? std::string("pid ") + std::to_string(h->pid) + " (" + h->how + ")"
                             : leftover);
  }
  std::string managers;
  for (const auto& p : in.processes) {
    bool manager =
        p.comm == "torch_shm_manag" || p.cmdline.find("torch_shm_manager") != std::string::npos;
    auto end = p.end();
    if (manager && p.started <= in.teardown_at && (!end || *end > in.teardown_at) &&
        leftover_at_teardown(in, p).empty())
      managers += (managers.empty() ? "" : ", ") + std::to_string(p.pid);
  }
  if (!managers.empty()) owner["torch_*"] = "torch_shm_manager " + managers;
  return owner;
}

CheckResult shm_clean(const CheckInput& in) {
  CheckResult r;
  auto s = shm_story(in.timeline);
  if (s.unavailable) {
    r.status = CheckStatus::Skipped;
    r.reason = "/dev/shm could not be read on this machine";
    return r;
  }
  std::map<std::string, std::string> leftover_holders;
  auto owners = owned_at_teardown(in, &leftover_holders);
  json leaked = json::array(), held = json::array();
  std::int64_t bytes = 0, held_bytes = 0;
  std::vector<std::string> names;
  for (const auto& [name, b] : s.leaked) {
    auto it = owners.find(name);
    if (it == owners.end() && name.rfind("torch_", 0) == 0) it = owners.find("torch_*");
    if (it != owners.end()) {
      held.push_back(json{{"name", name}, {"bytes", b}, {"owner", it->second}});
      held_bytes += b;
      continue;
    }
    json l = {{"name", name}, {"bytes", b}};
    std::string shown = "/dev/shm/" + name;
    if (auto h = leftover_holders.find(name); h != leftover_holders.end()) {
      l["held_by_leftover"] = h->second;
      shown += " (held by " + h->second + ")";
    }
    leaked.push_back(l);
    bytes += b;
    names.push_back(shown);
  }
  // Shared memory orphans and survivors kept after the top exited, unlinked
  // or not (file_descriptor segments, memfds): by process, until it let go.
  json kept = json::array();
  auto exited_at = phase_time(in.timeline, RunPhase::JobExited);
  std::map<int, const ProcessHistory*> by_pid;
  for (const auto& p : in.processes) by_pid[p.pid] = &p;
  std::int64_t kept_bytes = 0;
  for (const auto& o : in.timeline.observations) {
    const auto* h = o.as<obs::ShmHeld>();
    if (!h || !exited_at || o.t < *exited_at || o.t >= in.teardown_at) continue;
    json k = {{"pid", h->pid},
              {"path", h->path},
              {"bytes", h->bytes},
              {"how", h->how},
              {"deleted", h->deleted}};
    auto it = by_pid.find(h->pid);
    std::optional<Nanos> end = it == by_pid.end() ? std::nullopt : it->second->end();
    bool cut = !end || *end > in.teardown_at;
    k["role"] = it == by_pid.end() ? "unknown" : std::string(to_string(it->second->role));
    k["released_after_top_exit_ms"] =
        cut ? json(nullptr) : json(to_ms(std::max<Nanos>(0, *end - *exited_at)));
    k["held_at_teardown"] = cut;
    kept.push_back(k);
    kept_bytes += h->bytes;
  }
  const bool reclaimed = std::ranges::any_of(
      in.timeline.observations, [](const Observation& o) { return o.is<obs::ShmReclaim>(); });
  r.measured["created"] = s.created;
  r.measured["leaked"] = leaked;
  r.measured["leaked_bytes"] = bytes;
  r.measured["held_at_teardown"] = held;
  r.measured["held_at_teardown_bytes"] = held_bytes;
  r.measured["held_after_top_exit"] = kept;
  r.measured["held_after_top_exit_bytes"] = kept_bytes;
  r.measured["reclaimed_by_harness"] = reclaimed;
  std::string also;
  if (!held.empty())
    also += "; " + std::to_string(held.size()) +
            " still owned by live job processes when the teardown "
            "began (cut by teardown, not judged)";
  if (!kept.empty())
    also += "; " + std::to_string(kept.size()) + " shared-memory mapping(s)/fd(s), " +
            std::to_string(kept_bytes) + " bytes, held by processes that outlived the top";
  if (leaked.empty()) {
    r.status = CheckStatus::Pass;
    r.reason = std::to_string(s.created) + " entr" + (s.created == 1 ? "y" : "ies") +
               " created, none left" + also;
  } else {
    r.status = CheckStatus::Fail;
    r.reason = std::to_string(leaked.size()) + " /dev/shm entr" +
               (leaked.size() == 1 ? "y" : "ies") + " left behind with no live owner" +
               std::string(leftover_holders.empty() ? "" : " but a leftover") + " (" +
               std::to_string(bytes) + " bytes): " + first_lines(names, 3) + also;
  }
  return r;
}

std::string last_lines(const std::string& text, int n) {
  int count = 0;
  size_t pos = text.size();
  if (pos && text[pos - 1] == '\n') --pos;
  while (pos > 0) {
    size_t nl = text.rfind('\n', pos - 1);
    if (nl == std::string::npos) return text;
    if (++count == n) return text.substr(nl + 1);
    pos = nl;
  }
  return text;
}

CheckResult job_exit(const CheckInput& in) {
  CheckResult r;
  const auto& f = in.timeline.facts;
  const auto& cfg = check_params<JobExitParams>(in.scenario.checks.at("job_exit"));
  r.measured["outcome"] = f.top_outcome ? json(f.top_outcome->to_string()) : json(nullptr);
  r.measured["stderr_tail"] = last_lines(f.stderr_text, 20);
  std::vector<std::string> problems;
  std::string expected;
  auto top_end = top_exit(in);
  bool by_itself = top_end && *top_end <= in.teardown_at;
  r.measured["exited_by_itself"] = by_itself;
  if (!f.top_outcome || !by_itself) {
    problems.push_back(
        std::string("the top process did not exit by itself") +
        (f.top_outcome ? " (teardown ended it: " + f.top_outcome->to_string() + ")" : ""));
  } else if (cfg.signal) {
    expected = "killed(" + signal_name(*cfg.signal) + ")";
    if (!f.top_outcome->is_killed() || f.top_outcome->signal() != *cfg.signal)
      problems.push_back(f.top_outcome->to_string() + ", expected " + expected);
  } else {
    int code = cfg.code.value_or(0);
    expected = "exited(" + std::to_string(code) + ")";
    if (!f.top_outcome->is_exited() || f.top_outcome->exit_code() != code)
      problems.push_back(f.top_outcome->to_string() + ", expected " + expected);
  }
  if (cfg.output_regex) {
    std::regex re(*cfg.output_regex, std::regex::ECMAScript);
    bool found = std::regex_search(f.stdout_text, re) || std::regex_search(f.stderr_text, re);
    r.measured["output_regex"] = *cfg.output_regex;
    r.measured["output_matched"] = found;
    if (!found) problems.push_back("output does not match /" + *cfg.output_regex + "/");
  }
  r.measured["expected"] = expected;
  if (problems.empty()) {
    r.status = CheckStatus::Pass;
    r.reason = f.top_outcome->to_string();
  } else {
    r.status = CheckStatus::Fail;
    r.reason = first_lines(problems, 2);
  }
  return r;
}

CheckResult no_hang(const CheckInput& in) {
  CheckResult r;
  const auto& f = in.timeline.facts;
  r.measured["deadline_ms"] = to_ms(in.scenario.timeouts.job);
  if (!f.deadline_hit) {
    r.status = CheckStatus::Pass;
    r.reason =
        "the job ended before its " + format_duration(in.scenario.timeouts.job) + " deadline";
    return r;
  }
  json live = json::array();
  std::vector<std::string> names;
  // The state at the deadline: from the diagnosis taken then, else the last
  // sample before the teardown.
  std::map<int, char> at_deadline;
  for (const auto& d : f.diagnosis) at_deadline[d.pid] = d.state;
  for (const auto& p : in.processes) {
    auto end = p.end();
    if (end && *end <= in.teardown_at) continue;
    char st = at_deadline.count(p.pid) ? at_deadline[p.pid] : p.last_state;
    std::string state = st ? std::string(1, st) : std::string("?");
    json j = process_json(p);
    j["state"] = state;
    live.push_back(j);
    names.push_back(describe(p) + " state " + state);
  }
  r.measured["live_at_deadline"] = live;
  json diag = json::array();
  // Where each process is: the collective it waits in (from the job's
  // events) and the Python code it is in (from the diagnosis). Those that
  // wait in a collective first, and in each group the ranks, then the
  // launcher, then the rest (the reason names three: the diagnoses come in
  // pid order, and pids wrap, so a worker may come before its rank).
  std::vector<std::pair<int, std::string>> waiting, elsewhere;
  auto first = [](Role role) { return role == Role::Rank ? 0 : role == Role::Launcher ? 1 : 2; };
  for (const auto& d : f.diagnosis) {
    std::string where = python_where(d.python_frames);
    diag.push_back(json{{"pid", d.pid},
                        {"role", std::string(to_string(d.role))},
                        {"rank", d.rank},
                        {"state", std::string(1, d.state)},
                        {"wchan", d.wchan},
                        {"waiting_in", d.waiting_in},
                        {"python_where", where}});
    std::string who = std::string(to_string(d.role)) +
                      (d.rank >= 0 ? " " + std::to_string(d.rank) : "") + " (pid " +
                      std::to_string(d.pid) + ")";
    if (!d.waiting_in.empty())
      waiting.emplace_back(first(d.role), who + " waits in " + d.waiting_in +
                                              (where.empty() ? "" : ", in " + where));
    else if (!where.empty())
      elsewhere.emplace_back(first(d.role), who + " is in " + where);
  }
  auto by_role = [](const auto& a, const auto& b) { return a.first < b.first; };
  std::stable_sort(waiting.begin(), waiting.end(), by_role);
  std::stable_sort(elsewhere.begin(), elsewhere.end(), by_role);
  waiting.insert(waiting.end(), elsewhere.begin(), elsewhere.end());
  r.measured["diagnosis"] = diag;
  r.status = CheckStatus::Fail;
  if (auto verdict = stall_verdict_at(f)) {
    r.measured["progress_stopped_ms"] = to_ms(*f.stalled_since);
    r.measured["stall_ms"] = to_ms(f.stall_window);
    r.measured["cpu_wait_ms"] = to_ms(f.stall_cpu_wait);
    r.measured["verdict_ms"] = to_ms(*verdict);
    r.reason = "hang: progress stopped at " + format_duration(*f.stalled_since) + ", verdict at " +
               format_duration(*verdict) + " (no progress for " + stall_window_words(f) +
               "); live: " + first_lines(names, 4);
  } else {
    r.reason = "hang: still running at the " + format_duration(in.scenario.timeouts.job) +
               " deadline; live: " + first_lines(names, 4);
  }
  for (size_t i = 0; i < waiting.size() && i < 3; ++i) r.reason += "; " + waiting[i].second;
  if (waiting.size() > 3) r.reason += "; ... (" + std::to_string(waiting.size()) + " located)";
  return r;
}

CheckResult memory_growth_configured(const CheckInput& in) {
  return memory_growth(in, check_params<MemoryGrowthParams>(in.scenario));
}

CheckResult device_memory_configured(const CheckInput& in) {
  return device_memory_released(in.timeline.device, device_memory_params(in.scenario));
}

using CheckFn = std::function<CheckResult(const CheckInput&)>;
const std::map<std::string, CheckFn>& catalogue() {
  static const std::map<std::string, CheckFn> c = {
      {"all_exited", all_exited},
      {"no_orphans", no_orphans},
      {"no_zombies", no_zombies},
      {"shm_clean", shm_clean},
      {"job_exit", job_exit},
      {"no_hang", no_hang},
      {"tmp_clean", tmp_clean},
      {"data_partition", data_partition},
      {"collectives_matched", collectives_matched},
      {"memory_growth", memory_growth_configured},
      {kDiedWithAgent,
       [](const CheckInput&) {
         CheckResult r;
         r.status = CheckStatus::Skipped;
         r.reason =
             "a one-node run has no agent: only a multi-node run (nodes: 2 or more) judges this";
         return r;
       }},
      {kDeviceMemoryReleased, device_memory_configured},
      {kNoDeviceHolders,
       [](const CheckInput& in) { return no_device_holders(in.timeline.device); }},
      {kDeviceAllocProbe,
       [](const CheckInput& in) { return device_alloc_probe(in.timeline.device); }},
      {kTestsClean, tests_clean},
  };
  return c;
}

}  // namespace

Nanos CheckInput::grace(const std::string& check) const {
  auto it = scenario.checks.find(check);
  if (it != scenario.checks.end() && it->second.grace) return *it->second.grace;
  return scenario.grace;
}

Nanos CheckInput::grace(const std::string& check, Role role) const {
  auto it = scenario.checks.find(check);
  if (it != scenario.checks.end()) {
    if (auto r = it->second.role_grace.find(role); r != it->second.role_grace.end())
      return r->second;
  }
  if (auto r = scenario.role_grace.find(role); r != scenario.role_grace.end()) return r->second;
  // A helper designed to linger (torch_shm_manager's wait, from the job's
  // PyTorch) must not fail a stricter general grace; a more lenient one
  // raises it too.
  if (check == "no_orphans" && role == Role::Helper)
    return std::max(helper_grace(timeline.facts.python), grace(check));
  return grace(check);
}

CheckInput make_check_input(const Scenario& sc, const Timeline& tl,
                            const std::vector<ProcessHistory>& procs) {
  CheckInput in{sc, tl, procs};
  in.end_at = tl.observations.empty() ? 0 : tl.observations.back().t;
  for (const auto& o : tl.observations) in.end_at = std::max(in.end_at, o.t);
  in.teardown_at = phase_time(tl, RunPhase::Teardown).value_or(in.end_at);
  return in;
}

CheckResult run_check(const std::string& name, const CheckInput& in) {
  CheckResult r;
  auto it = catalogue().find(name);
  if (it == catalogue().end()) {
    r.name = name;
    r.status = CheckStatus::Error;
    r.reason = "unknown check";
    return r;
  }
  try {
    r = it->second(in);
  } catch (const std::exception& e) {
    r = CheckResult{};
    r.status = CheckStatus::Error;
    r.reason = std::string("check failed to evaluate: ") + e.what();
  }
  r.name = name;
  return r;
}

std::vector<CheckResult> run_checks(const Scenario& sc, const Timeline& tl,
                                    const std::vector<ProcessHistory>& procs) {
  auto in = make_check_input(sc, tl, procs);
  std::vector<CheckResult> out;
  for (const auto& name : known_checks()) {
    // Only what the scenario enabled: every default, plus opt-in checks it named.
    auto it = sc.checks.find(name);
    if (it == sc.checks.end() || !it->second.enabled) continue;
    // Per-test judgement applies only to a job that reported tests.
    if (name == kTestsClean && !saw_tests(tl)) continue;
    auto r = run_check(name, in);
    r.expected_to_fail = sc.expect.failing.count(name) > 0;
    r.may_fail = sc.expect.may_fail.count(name) > 0;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace aftermath
