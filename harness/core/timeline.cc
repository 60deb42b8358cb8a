#include "harness/core/timeline.h"

#include <map>

#include "harness/core/enum_words.h"

namespace aftermath {

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
std::optional<ForkSource> parse_fork_source(std::string_view s) {
  return value_of(kForkSources, s);
}

namespace {

// Replays the process observations into one history per process life (a
// reused pid starts a new one): one overload per process observation kind.
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
  auto set_role = [&](int pid, Role role, int rank, int worker) {
    if (auto* h = find(pid)) {
      h->role = role;
      h->rank = rank;
      h->worker = worker;
    }
  };
  for (const auto& o : tl.observations) {
    const Nanos t = o.t;
    std::visit(Overloaded{
                   [&](const obs::ProcStart& p) {
                     ProcessHistory h;
                     h.pid = p.pid;
                     h.job_pid = p.job_pid;
                     h.first_ppid = h.last_ppid = p.ppid;
                     h.depth = p.depth;
                     h.comm = p.comm;
                     h.cmdline = p.cmdline;
                     h.role = p.role;
                     h.started = t;
                     h.last_state = p.state;
                     h.is_top = (p.pid == tl.facts.top_pid);
                     // First seen already re-parented to the reaper: its parent died
                     // before any sample saw it (a double fork, a parent that exits at once).
                     if (!h.is_top && tl.facts.init_pid != 0 && p.ppid == tl.facts.init_pid)
                       h.orphaned_at = t;
                     live[p.pid] = latest[p.pid] = out.size();  // a reused pid starts a new history
                     out.push_back(std::move(h));
                   },
                   [&](const obs::Announce& a) { set_role(a.pid, a.role, a.rank, a.worker); },
                   // The supervisor never infers over an announcement.
                   [&](const obs::RoleInferred& r) { set_role(r.pid, r.role, r.rank, r.worker); },
                   [&](const obs::ProcParent& p) {
                     if (auto* h = find(p.pid)) {
                       h->last_ppid = p.ppid;
                       if (!h->orphaned_at) h->orphaned_at = t;
                     }
                   },
                   [&](const obs::ProcExec& e) {
                     // What it is now: a process seen between fork and exec carried
                     // its parent's command line until here.
                     if (auto* h = find(e.pid)) {
                       if (!e.comm.empty()) h->comm = e.comm;
                       if (!e.cmdline.empty()) h->cmdline = e.cmdline;
                       if (h->role == Role::Unknown) h->role = e.role;
                     }
                   },
                   [&](const obs::ProcState& s) {
                     if (auto* h = find(s.pid)) {
                       h->last_state = s.state;
                       if (s.state == 'Z' && !h->zombie_since) h->zombie_since = t;
                       if (s.state == 'T' || s.state == 't') {
                         h->stopped_since = t;
                       } else {
                         h->stopped_since.reset();
                       }
                     }
                   },
                   [&](const obs::ProcExit& x) {
                     if (auto* h = find(x.pid)) {
                       if (!h->exited_at) h->exited_at = t;
                       if (x.outcome) h->outcome = x.outcome;
                       // Exited but not yet reaped is what a zombie is; the exit time
                       // is exact (pidfd), the sampled 'Z' may come later.
                       if (!h->zombie_since) h->zombie_since = t;
                     } else if (auto it = latest.find(x.pid);
                                it != latest.end() && x.outcome && !out[it->second].outcome) {
                       // The reaper's status for a pid a scan saw gone a moment before.
                       out[it->second].outcome = x.outcome;
                     }
                   },
                   [&](const obs::ProcGone& g) {
                     if (auto* h = find(g.pid)) {
                       if (!h->gone_at) {
                         h->gone_at = t;
                         if (g.last_seen) h->last_present = g.last_seen;
                       }
                       if (!h->exited_at) h->exited_at = t;
                       live.erase(g.pid);
                     }
                   },
                   [](const auto&) {},
               },
               o.what);
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

std::optional<Nanos> stall_verdict_at(const RunFacts& f) {
  if (!f.stalled_since) return std::nullopt;
  return *f.stalled_since + f.stall_window + f.stall_cpu_wait;
}

std::string stall_window_words(const RunFacts& f) {
  std::string s = "the " + format_duration(f.stall_window) + " stall window";
  if (f.stall_cpu_wait > 0)
    s += ", not counting " + format_duration(f.stall_cpu_wait) + " a job process waited for a CPU";
  return s;
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

std::optional<Nanos> phase_time(const Timeline& tl, RunPhase name) {
  for (const auto& o : tl.observations)
    if (const auto* p = o.as<obs::Phase>(); p && p->name == name) return o.t;
  return std::nullopt;
}

}  // namespace aftermath
