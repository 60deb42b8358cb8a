#include "harness/core/timeline.h"

#include <map>

#include "harness/core/enum_words.h"

namespace aftermath {

std::string_view to_string(ObsKind k) {
  switch (k) {
    case ObsKind::Phase:
      return "phase";
    case ObsKind::ProcStart:
      return "proc_start";
    case ObsKind::ProcParent:
      return "proc_parent";
    case ObsKind::ProcState:
      return "proc_state";
    case ObsKind::ProcExit:
      return "proc_exit";
    case ObsKind::ProcGone:
      return "proc_gone";
    case ObsKind::ShmAdd:
      return "shm_add";
    case ObsKind::ShmResize:
      return "shm_resize";
    case ObsKind::ShmRemove:
      return "shm_remove";
    case ObsKind::ShmReclaim:
      return "shm_reclaim";
    case ObsKind::Signal:
      return "signal";
    case ObsKind::Sample:
      return "sample";
    case ObsKind::Announce:
      return "announce";
    case ObsKind::Event:
      return "event";
    case ObsKind::Point:
      return "point";
    case ObsKind::Fault:
      return "fault";
    case ObsKind::Memory:
      return "memory";
    case ObsKind::ProcExec:
      return "proc_exec";
    case ObsKind::OomKill:
      return "oom_kill";
    case ObsKind::RoleInferred:
      return "role_inferred";
    case ObsKind::ShmHeld:
      return "shm_held";
    case ObsKind::TmpLeft:
      return "tmp_left";
    case ObsKind::TmpReclaim:
      return "tmp_reclaim";
    case ObsKind::HarnessFailure:
      return "harness_failure";
    case ObsKind::SamplePeriod:
      return "sample_period";
    case ObsKind::Note:
      break;
  }
  return "note";
}

namespace {

constexpr EnumWords<JobContainment, 4> kContainments{{
    {JobContainment::Unknown, ""},
    {JobContainment::PidNamespace, "pid-namespace"},
    {JobContainment::UserPidNamespace, "user+pid-namespace"},
    {JobContainment::Subreaper, "subreaper"},
}};

constexpr EnumWords<ShmPlace, 3> kShmPlaces{{
    {ShmPlace::Unknown, ""},
    {ShmPlace::Private, "private"},
    {ShmPlace::Host, "host"},
}};

constexpr EnumWords<ForkSource, 4> kForkSources{{
    {ForkSource::Unknown, ""},
    {ForkSource::ProcessEvents, "process events"},
    {ForkSource::Reaper, "reaper"},
    {ForkSource::Machine, "machine"},
}};

}  // namespace

std::string_view to_string(JobContainment c) { return text_of(kContainments, c); }
std::optional<JobContainment> parse_job_containment(std::string_view s) {
  return value_of(kContainments, s);
}
std::string_view to_string(ShmPlace p) { return text_of(kShmPlaces, p); }
std::optional<ShmPlace> parse_shm_place(std::string_view s) { return value_of(kShmPlaces, s); }
std::string_view to_string(ForkSource f) { return text_of(kForkSources, f); }

std::string_view to_string(HarnessPart p) {
  switch (p) {
    case HarnessPart::Teardown:
      return "teardown";
    case HarnessPart::TmpDir:
      return "tmp";
    case HarnessPart::ShmDir:
      return "shm";
  }
  return "teardown";
}

bool harness_failed(const Observation& o, HarnessPart part) {
  return o.kind == ObsKind::HarnessFailure && o.value == static_cast<std::int64_t>(part);
}

namespace obs {
namespace {
Observation make(Nanos t, ObsKind k) {
  Observation o;
  o.t = t;
  o.kind = k;
  return o;
}
}  // namespace

Observation phase(Nanos t, std::string name) {
  auto o = make(t, ObsKind::Phase);
  o.name = std::move(name);
  return o;
}
Observation proc_start(Nanos t, int pid, int ppid, std::string comm, std::string cmdline, Role role,
                       int depth, std::int64_t start_ticks, char state, int job_pid) {
  auto o = make(t, ObsKind::ProcStart);
  o.pid = pid;
  o.ppid = ppid;
  o.name = std::move(comm);
  o.text = std::move(cmdline);
  o.role = role;
  o.depth = depth;
  o.value = start_ticks;
  o.value2 = job_pid;
  o.state = state;
  return o;
}
Observation proc_parent(Nanos t, int pid, int new_ppid) {
  auto o = make(t, ObsKind::ProcParent);
  o.pid = pid;
  o.ppid = new_ppid;
  return o;
}
Observation role_inferred(Nanos t, int pid, Role role, int rank, int worker, std::string why) {
  auto o = make(t, ObsKind::RoleInferred);
  o.pid = pid;
  o.role = role;
  o.value = rank;
  o.value2 = worker;
  o.text = std::move(why);
  return o;
}
Observation shm_held(Nanos t, int pid, std::string path, std::int64_t bytes, std::string how,
                     bool deleted) {
  auto o = make(t, ObsKind::ShmHeld);
  o.pid = pid;
  o.name = std::move(path);
  o.value = bytes;
  o.text = std::move(how);
  o.baseline = deleted;
  return o;
}
Observation proc_exec(Nanos t, int pid, std::string comm, std::string cmdline, Role role) {
  auto o = make(t, ObsKind::ProcExec);
  o.pid = pid;
  o.name = std::move(comm);
  o.text = std::move(cmdline);
  o.role = role;
  return o;
}
Observation proc_state(Nanos t, int pid, char state) {
  auto o = make(t, ObsKind::ProcState);
  o.pid = pid;
  o.state = state;
  return o;
}
Observation proc_exit(Nanos t, int pid, std::optional<Outcome> outcome) {
  auto o = make(t, ObsKind::ProcExit);
  o.pid = pid;
  o.outcome = outcome;
  return o;
}
Observation proc_gone(Nanos t, int pid) {
  auto o = make(t, ObsKind::ProcGone);
  o.pid = pid;
  return o;
}
Observation shm_add(Nanos t, std::string name, std::int64_t bytes, bool baseline) {
  auto o = make(t, ObsKind::ShmAdd);
  o.name = std::move(name);
  o.value = bytes;
  o.baseline = baseline;
  return o;
}
Observation shm_resize(Nanos t, std::string name, std::int64_t bytes) {
  auto o = make(t, ObsKind::ShmResize);
  o.name = std::move(name);
  o.value = bytes;
  return o;
}
Observation shm_remove(Nanos t, std::string name) {
  auto o = make(t, ObsKind::ShmRemove);
  o.name = std::move(name);
  return o;
}
Observation shm_reclaim(Nanos t, std::string name, std::int64_t bytes) {
  auto o = make(t, ObsKind::ShmReclaim);
  o.name = std::move(name);
  o.value = bytes;
  return o;
}
Observation signal(Nanos t, int pid, int sig, std::string why) {
  auto o = make(t, ObsKind::Signal);
  o.pid = pid;
  o.value = sig;
  o.text = std::move(why);
  return o;
}
Observation sample(Nanos t, std::int64_t procs, std::int64_t shm_bytes) {
  auto o = make(t, ObsKind::Sample);
  o.value = procs;
  o.value2 = shm_bytes;
  return o;
}
Observation memory(Nanos t, std::int64_t rss_bytes, std::int64_t processes) {
  auto o = make(t, ObsKind::Memory);
  o.value = rss_bytes;
  o.value2 = processes;
  return o;
}
Observation note(Nanos t, std::string text) {
  auto o = make(t, ObsKind::Note);
  o.text = std::move(text);
  return o;
}
Observation announce(Nanos t, int pid, Role role, int rank, int worker, std::string labels) {
  auto o = make(t, ObsKind::Announce);
  o.pid = pid;
  o.role = role;
  o.value = rank;
  o.value2 = worker;
  o.text = std::move(labels);
  return o;
}
Observation event(Nanos t, int pid, std::string name, std::string fields) {
  auto o = make(t, ObsKind::Event);
  o.pid = pid;
  o.name = std::move(name);
  o.text = std::move(fields);
  return o;
}
Observation point(Nanos t, int pid, std::string name, long long hit, std::string labels) {
  auto o = make(t, ObsKind::Point);
  o.pid = pid;
  o.name = std::move(name);
  o.value = hit;
  o.text = std::move(labels);
  return o;
}
Observation fault(Nanos t, int index, int pid, std::string action, std::string what) {
  auto o = make(t, ObsKind::Fault);
  o.value = index;
  o.pid = pid;
  o.name = std::move(action);
  o.text = std::move(what);
  return o;
}
Observation oom_kill(Nanos t, int index, int pid, long long kills, std::string cgroup,
                     std::string kernel_line) {
  auto o = make(t, ObsKind::OomKill);
  o.value = index;
  o.pid = pid;
  o.value2 = kills;
  o.text = std::move(cgroup);
  o.name = std::move(kernel_line);
  return o;
}
Observation tmp_left(Nanos t, std::string path, std::int64_t bytes, unsigned owner,
                     std::string kind, int outside_holder) {
  auto o = make(t, ObsKind::TmpLeft);
  o.name = std::move(path);
  o.value = bytes;
  o.value2 = owner;
  o.text = std::move(kind);
  o.pid = outside_holder;
  return o;
}
Observation tmp_reclaim(Nanos t, std::string path, std::int64_t bytes, std::string moved_to) {
  auto o = make(t, ObsKind::TmpReclaim);
  o.name = std::move(path);
  o.value = bytes;
  o.text = std::move(moved_to);
  return o;
}
Observation harness_failure(Nanos t, HarnessPart part, std::string why, int pid) {
  auto o = make(t, ObsKind::HarnessFailure);
  o.value = static_cast<std::int64_t>(part);
  o.name = std::string(to_string(part));
  o.text = std::move(why);
  o.pid = pid;
  return o;
}
Observation sample_period(Nanos t, Nanos period, Nanos sample_took) {
  auto o = make(t, ObsKind::SamplePeriod);
  o.value = period;
  o.value2 = sample_took;
  return o;
}
}  // namespace obs

namespace {

// Replays the process observations into one history per process life (a
// reused pid starts a new one). Long: one case per process observation kind.
std::vector<ProcessHistory> replay_histories(const Timeline& tl) {
  std::vector<ProcessHistory> out;
  std::map<int, size_t> live;  // pid -> index of its current (latest) history
  // pid -> its latest history, gone or not: the reaper stamps a reap after
  // waitpid returned, so a scan may already have seen the pid gone.
  std::map<int, size_t> latest;
  auto find = [&](int pid) -> ProcessHistory* {
    auto it = live.find(pid);
    return it == live.end() ? nullptr : &out[it->second];
  };
  for (const auto& o : tl.observations) {
    switch (o.kind) {
      case ObsKind::ProcStart: {
        ProcessHistory h;
        h.pid = o.pid;
        h.job_pid = static_cast<int>(o.value2);
        h.first_ppid = h.last_ppid = o.ppid;
        h.depth = o.depth;
        h.comm = o.name;
        h.cmdline = o.text;
        h.role = o.role;
        h.started = o.t;
        h.last_state = o.state;
        h.is_top = (o.pid == tl.facts.top_pid);
        // First seen already re-parented to the reaper: its parent died before
        // any sample saw it (a double fork, a parent that exits at once).
        if (!h.is_top && tl.facts.init_pid != 0 && o.ppid == tl.facts.init_pid) h.orphaned_at = o.t;
        live[o.pid] = latest[o.pid] = out.size();  // a reused pid starts a new history
        out.push_back(std::move(h));
        break;
      }
      case ObsKind::Announce:
      case ObsKind::RoleInferred:  // the supervisor never infers over an announcement
        if (auto* h = find(o.pid)) {
          h->role = o.role;
          h->rank = static_cast<int>(o.value);
          h->worker = static_cast<int>(o.value2);
        }
        break;
      case ObsKind::ProcParent:
        if (auto* h = find(o.pid)) {
          h->last_ppid = o.ppid;
          if (!h->orphaned_at) h->orphaned_at = o.t;
        }
        break;
      case ObsKind::ProcExec:
        // What it is now: a process seen between fork and exec carried its
        // parent's command line until here.
        if (auto* h = find(o.pid)) {
          if (!o.name.empty()) h->comm = o.name;
          if (!o.text.empty()) h->cmdline = o.text;
          if (h->role == Role::Unknown) h->role = o.role;
        }
        break;
      case ObsKind::ProcState:
        if (auto* h = find(o.pid)) {
          h->last_state = o.state;
          if (o.state == 'Z' && !h->zombie_since) h->zombie_since = o.t;
          if (o.state == 'T' || o.state == 't') {
            h->stopped_since = o.t;
          } else {
            h->stopped_since.reset();
          }
        }
        break;
      case ObsKind::ProcExit:
        if (auto* h = find(o.pid)) {
          if (!h->exited_at) h->exited_at = o.t;
          if (o.outcome) h->outcome = o.outcome;
          // Exited but not yet reaped is what a zombie is; the exit time is exact
          // (pidfd), the sampled 'Z' may come later.
          if (!h->zombie_since) h->zombie_since = o.t;
        } else if (auto it = latest.find(o.pid);
                   it != latest.end() && o.outcome && !out[it->second].outcome) {
          // The reaper's status for a pid a scan saw gone a moment before.
          out[it->second].outcome = o.outcome;
        }
        break;
      case ObsKind::ProcGone:
        if (auto* h = find(o.pid)) {
          if (!h->gone_at) h->gone_at = o.t;
          if (!h->exited_at) h->exited_at = o.t;
          live.erase(o.pid);
        }
        break;
      default:
        break;
    }
  }
  return out;
}

// Orphaned: the parent's life ended while the child still lived, even if no
// re-parent was sampled in between (e.g. the parent's pidfd fired first).
// With pid reuse a pid has several histories: the parent is the latest one
// that started before the child.
void mark_orphans_by_parent_end(std::vector<ProcessHistory>& out) {
  std::vector<int> parents = parent_indices(out);
  for (size_t i = 0; i < out.size(); ++i) {
    ProcessHistory& h = out[i];
    if (parents[i] < 0) continue;
    const ProcessHistory& parent = out[parents[i]];
    auto pend = parent.end();
    if (!pend) continue;
    auto hend = h.end();
    if (!hend || *hend > *pend) {
      if (!h.orphaned_at || *h.orphaned_at > *pend) h.orphaned_at = *pend;
    }
  }
}

}  // namespace

std::vector<int> parent_indices(const std::vector<ProcessHistory>& procs) {
  std::multimap<int, size_t> by_pid;
  for (size_t i = 0; i < procs.size(); ++i) by_pid.emplace(procs[i].pid, i);
  std::vector<int> out(procs.size(), -1);
  for (size_t i = 0; i < procs.size(); ++i) {
    const ProcessHistory& h = procs[i];
    auto [b, e] = by_pid.equal_range(h.first_ppid);
    for (auto it = b; it != e; ++it) {
      const ProcessHistory& cand = procs[it->second];
      if (it->second == i || cand.started > h.started) continue;
      if (out[i] < 0 || cand.started > procs[out[i]].started) out[i] = static_cast<int>(it->second);
    }
  }
  return out;
}

std::vector<ProcessHistory> build_histories(const Timeline& tl) {
  std::vector<ProcessHistory> out = replay_histories(tl);
  mark_orphans_by_parent_end(out);
  // zombie_since only matters if the process was gone later than it exited.
  for (auto& h : out) {
    if (h.zombie_since && h.gone_at && *h.gone_at <= *h.zombie_since) h.zombie_since.reset();
  }
  return out;
}

std::optional<Nanos> phase_time(const Timeline& tl, std::string_view name) {
  for (const auto& o : tl.observations)
    if (o.kind == ObsKind::Phase && o.name == name) return o.t;
  return std::nullopt;
}

}  // namespace aftermath
