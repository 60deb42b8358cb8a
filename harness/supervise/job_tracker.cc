#include "harness/supervise/job_tracker.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "harness/observe/roles.h"

namespace aftermath {

namespace asio = boost::asio;

Role role_by_rule(const std::string& comm, const std::string& cmdline, bool is_top) {
  if (is_top) return Role::Launcher;
  if (comm == "torch_shm_manag" || cmdline.find("torch_shm_manager") != std::string::npos)
    return Role::Helper;
  return Role::Unknown;
}

JobTracker::JobTracker(asio::io_context& ctx, const std::string& proc_root, JobTrackerHooks hooks,
                       std::unique_ptr<ProcEvents> events)
    : ctx_(ctx),
      reader_(proc_root),
      stats_(proc_root),
      hooks_(std::move(hooks)),
      events_(std::move(events)) {}

std::unique_ptr<ProcEvents> JobTracker::open_events(const std::string& proc_root) {
  // Forks, execs and renames pushed by the kernel, where it lets us listen
  // (root in the initial namespaces) and /proc is the host's; else the tick
  // polls /proc/loadavg. AFTERMATH_PROC_EVENTS=0 forces the fallback.
  const char* pe = ::getenv("AFTERMATH_PROC_EVENTS");
  if (proc_root != "/proc" || (pe && std::string(pe) == "0")) return nullptr;
  auto events = ProcEvents::open();
  return events ? std::move(*events) : nullptr;
}

void JobTracker::set_containment(int reaper_pid, bool pid_namespace) {
  reaper_pid_ = reaper_pid;
  pid_ns_ = pid_namespace;
}

void JobTracker::add_top(Nanos t, int pid, int inner_pid, std::string comm, std::string cmdline) {
  top_pid_ = pid;
  inner_to_host_[inner_pid] = pid;
  record(obs::proc_start(t, pid, init_pid_, std::move(comm), cmdline, Role::Launcher, 0, 0, 'R',
                         inner_pid != pid ? inner_pid : 0));
  TrackedProcess tr;
  tr.pid = pid;
  tr.ppid = init_pid_;
  tr.state = 'R';
  tr.role = Role::Launcher;
  tr.is_top = true;
  tr.cmdline = std::move(cmdline);
  if (inner_pid != pid) tr.inner_pid = inner_pid;  // its pid in the job's namespace
  // Not yet reaped (only the reaper reaps it, and it reports that), so the
  // pid cannot have been reused: the pidfd names the top.
  watch_exit(tr);
  procs_[pid] = std::move(tr);
}

void JobTracker::reaped(Nanos t, int reaper_pid, const Outcome& out, bool top,
                        const std::string& argv0) {
  int host = top ? top_pid_ : host_pid_for(reaper_pid);
  if (top && host && !procs_.count(host)) {
    // Too short-lived for any sample: its life is still known exactly.
    record(obs::proc_start(t, host, init_pid_, "", argv0, Role::Launcher, 0));
    TrackedProcess tr;
    tr.pid = host;
    tr.is_top = true;
    procs_.emplace(host, std::move(tr));
  }
  auto it = procs_.find(host);
  if (host == 0 || it == procs_.end()) {
    record(obs::note(t, "reaped an unobserved process (pid " + std::to_string(reaper_pid) +
                            " in the job): " + out.to_string()));
    return;
  }
  record(obs::proc_exit(t, host, out));
  it->second.alive = false;
  dirty_ = true;
  if (!top && !(out.is_exited() && out.exit_code() == 0) && hooks_.on_failed_exit)
    hooks_.on_failed_exit(host);
  // Reaped is gone, at the reaper's exact time, even if a sample that ran
  // before this record arrived already saw it gone (the timeline is sorted
  // by time at the end, so the earlier stamp wins).
  it->second.gone = true;
  waits_.erase(host);
  record(obs::proc_gone(t, host));
}

void JobTracker::read_cpu_wait(int pid, const ProcStat& st, Nanos t) {
  auto now = reader_.schedstat(pid);
  // All zeros: the kernel keeps the file but counts nothing (schedstats off
  // before 5.14), or it never ran yet.
  if (!now || (now->ran_ns == 0 && now->slices == 0)) return;
  auto [it, first] = waits_.try_emplace(pid);
  CpuWait& w = it->second;
  if (!first && w.starttime == st.starttime) {
    const Nanos added =
        now->waited_ns > w.last.waited_ns ? Nanos(now->waited_ns - w.last.waited_ns) : 0;
    w.counted += added;
    // Runnable at both reads without running between them: it waited on a
    // runqueue all along (to sleep it would have had to run). Of that, what
    // the kernel did not add yet (it adds a wait when it ends, or part of it
    // when the waiting process moves to another CPU) is going on.
    if (w.runnable && st.state == 'R' && now->ran_ns == w.last.ran_ns &&
        now->slices == w.last.slices)
      w.going_on = std::max<Nanos>(0, w.going_on + (t - std::max(w.read_at, reset_at_)) - added);
    else
      w.going_on = 0;
    // Never more than the time since the last progress: a wait that began
    // before it is counted from it.
    cpu_wait_ = std::max(cpu_wait_, std::min(w.counted + w.going_on, t - reset_at_));
  } else {
    w = CpuWait{};
    w.starttime = st.starttime;
  }
  w.last = *now;
  w.runnable = st.state == 'R';
  w.read_at = t;
}

std::int64_t JobTracker::work_ticks_beyond(std::int64_t allowance) const {
  std::int64_t sum = 0;
  for (const auto& [pid, ticks] : work_ticks_) sum += std::max<std::int64_t>(0, ticks - allowance);
  return sum;
}

int JobTracker::host_pid_for(int reaper_pid) const {
  if (!pid_ns_) return reaper_pid;
  auto it = inner_to_host_.find(reaper_pid);
  return it == inner_to_host_.end() ? 0 : it->second;
}

void JobTracker::track_new(int pid, const ProcStat& st, int depth) {
  TrackedProcess tr;
  tr.pid = pid;
  tr.starttime = st.starttime;
  tr.ppid = st.ppid;
  // Its parent not tracked: already reparented to the job's init (its
  // parent forked it and exited before any look: a daemon's double fork), or
  // a parent alive but not looked at yet. The fork events say where it came
  // from: its first tracked ancestor is its parent for the timeline, and the
  // moment the chain left that ancestor its start, so the histories (and a
  // pytest test's attribution) see it there.
  int born_of = st.ppid;
  Nanos born_at = now();
  // Its own fork event, where one was read: it was born then, not when a
  // look found it (a child found after a grandchild whose fork came later
  // must not start after it: ancestry and a pytest test's attribution go by
  // who was there first).
  if (auto self = forked_.find(pid); self != forked_.end() && pid != top_pid_)
    born_at = std::min(born_at, self->second.t);
  const bool reparented =
      pid != top_pid_ && (st.ppid == reaper_pid_ || st.ppid == init_pid_ || st.ppid == 1);
  if (pid != top_pid_ && !procs_.count(st.ppid)) {
    int child = pid;
    for (int hops = 0; hops < 64; ++hops) {
      auto f = forked_.find(child);
      if (f == forked_.end()) break;
      // A tracked ancestor, alive or already gone (a parent seen before it
      // exited is still the one the histories know).
      auto anc = procs_.find(f->second.parent);
      if (anc != procs_.end()) {
        born_of = f->second.parent;
        born_at = f->second.t;
        break;
      }
      child = f->second.parent;
    }
  }

  // Seen first as an exiting leader: its threads still run.
  tr.state = leader_exiting(st) ? 'R' : st.state;
  tr.depth = depth;
  tr.comm = st.comm;
  execd_.erase(pid);  // read fresh here
  std::string cmd = reader_.cmdline(pid);
  tr.is_top = pid == top_pid_;
  tr.role = role_by_rule(st.comm, cmd, tr.is_top);
  tr.cmdline = cmd;
  if (pid_ns_) {
    auto ns = reader_.nspid(pid);
    if (!ns.empty()) {
      tr.inner_pid = ns.back();
      inner_to_host_[ns.back()] = pid;
    }
  }
  record(obs::proc_start(born_at, pid, born_of, st.comm, cmd, tr.role, depth,
                         static_cast<std::int64_t>(st.starttime), tr.state,
                         tr.inner_pid != pid ? tr.inner_pid : 0));
  if (born_of != st.ppid && reparented)
    record(obs::proc_parent(now(), pid, st.ppid));  // reparented since
  // Watch its exit through a pidfd, then prove the pidfd names the process we
  // scanned (same start time), not a successor that reused the pid.
  UniqueFd fd;
  if (!pidfd_open(pid, fd)) {
    auto again = reader_.stat(pid);
    if (again && again->starttime == st.starttime) {
      tr.pidfd = std::move(fd);
      watch_exit(tr);
    }
  }
  tr.first_ppid = born_of;
  tr.seen_at = tr.present_at = now();
  auto& stored = procs_[pid] = std::move(tr);
  classify(stored);
}

void JobTracker::classify(TrackedProcess& tr) {
  if (tr.announced || tr.role_final || !tr.alive || tr.gone) return;
  RoleEvidence ev;
  ev.comm = tr.comm;
  ev.cmdline = tr.cmdline;
  ev.is_top = tr.pid == top_pid_;
  if (!tr.env_read) {
    // The environment it was exec'd with; read once per exec.
    tr.env_rank = parse_rank_value(reader_.environ_value(tr.pid, "RANK").value_or(""));
    tr.env_read = true;
  }
  ev.env_rank = tr.env_rank;
  ev.caught = reader_.caught_signals(tr.pid);
  RoleParent parent;
  const RoleParent* pp = nullptr;
  if (auto it = procs_.find(tr.first_ppid);
      it != procs_.end() && it->second.starttime <= tr.starttime) {
    parent.role = it->second.role;
    parent.rank = it->second.rank;
    parent.env_rank = it->second.env_rank;
    parent.cmdline = it->second.cmdline;
    parent.is_top = it->first == top_pid_;
    pp = &parent;
  }
  InferredRole inf = infer_role(ev, pp);
  if (inf.role == Role::Unknown) return;
  tr.role_final = inf.final;
  // Numbers that come from the order of siblings: a DataLoader starts worker
  // i i-th; mp.spawn starts rank i i-th.
  auto earlier_siblings = [&](auto pred) {
    int n = 0;
    for (const auto& [pid, s] : procs_) {
      if (pid == tr.pid || s.first_ppid != tr.first_ppid || !pred(s)) continue;
      if (std::make_pair(s.starttime, pid) < std::make_pair(tr.starttime, tr.pid)) ++n;
    }
    return n;
  };
  int rank = inf.rank, worker = inf.worker;
  if (inf.role == Role::Worker)
    worker = earlier_siblings([](const TrackedProcess& s) {
      return s.role != Role::Helper && s.role != Role::Launcher && s.role != Role::Rank;
    });
  if (inf.rank_by_spawn_order)
    rank = earlier_siblings([](const TrackedProcess& s) {
      return s.role != Role::Helper && is_spawn_child(s.cmdline);
    });
  if (inf.role == tr.role && rank == tr.rank && worker == tr.worker) return;
  tr.role = inf.role;
  tr.rank = rank;
  tr.worker = worker;
  record(obs::role_inferred(now(), tr.pid, tr.role, rank, worker, inf.why));
  hooks_.on_role_change();  // a fault may wait for exactly this process
}

void JobTracker::classify_pending() {
  // A worker shows its handlers once it reaches its loop, seconds after its
  // birth under load; after 30 s a process that showed nothing stays as is.
  // Each look costs a status (and, without process events, a command line)
  // read, so a process is looked at again after 100 ms, then 200, 400 ...
  // up to 2 s apart: 20 looks at most rather than 150 at the refresh rate.
  // A fault waiting for a role sees it at most 2 s late.
  constexpr Nanos kLookFor = 30 * kSecond;
  constexpr Nanos kFirstGap = 100 * kMilli, kMaxGap = 2 * kSecond;
  Nanos t = now();
  for (auto& [pid, tr] : procs_) {
    if (tr.announced || tr.role_final || !tr.alive || tr.gone || t - tr.seen_at >= kLookFor)
      continue;
    if (t < tr.next_look) continue;
    tr.look_gap = std::min(kMaxGap, tr.look_gap ? 2 * tr.look_gap : kFirstGap);
    tr.next_look = t + tr.look_gap;
    // An exec that changed neither comm nor anything announced (python3 ->
    // python3, without process events) shows in the command line only; with
    // them, the exec event said so already.
    if (!events_) {
      if (std::string cmd = reader_.cmdline(pid); !cmd.empty() && cmd != tr.cmdline) {
        execd_.insert(pid);
        continue;  // refresh_commands() re-reads and classifies it
      }
    }
    classify(tr);
  }
}

void JobTracker::watch_exit(TrackedProcess& tr) {
  if (!tr.pidfd) {
    UniqueFd fd;
    if (pidfd_open(tr.pid, fd)) return;
    tr.pidfd = std::move(fd);
  }
  int pid = tr.pid;
  tr.watch = std::make_unique<asio::posix::stream_descriptor>(ctx_, ::dup(tr.pidfd.get()));
  tr.watch->async_wait(asio::posix::stream_descriptor::wait_read,
                       [this, pid](boost::system::error_code ec) {
                         if (!ec) on_pidfd(pid);
                       });
}

void JobTracker::on_pidfd(int pid) {
  auto it = procs_.find(pid);
  if (it == procs_.end() || !it->second.alive) return;
  it->second.alive = false;
  ++records_;           // live_count() counts again, even inside on_exit
  dirty_ = true;        // it may be a zombie now, its children orphans
  hooks_.on_exit(pid);  // e.g. an OOM kill comes before the exit it causes
  record(obs::proc_exit(now(), pid, std::nullopt));
}

void JobTracker::drain_events(bool* forked) {
  // A job process: tracked (a fork event read after its maker exited is
  // still its fork), announced by an earlier fork event and not yet looked
  // at, or known only by its fork (it exited before any look).
  auto in_job = [&](int pid) {
    if (pid == reaper_pid_ || pid == init_pid_) return true;
    if (procs_.count(pid) || forked_.count(pid)) return true;
    return std::find(born_.begin(), born_.end(), pid) != born_.end();
  };
  bool complete = events_->drain([&](const ProcEvent& e) {
    if (e.pid != e.tgid) return;  // a thread's own event
    if (e.kind == ProcEvent::Kind::Fork) {
      if (in_job(e.parent_tgid)) {
        born_.push_back(e.tgid);
        // Bounded: a job that forks without end must not grow this forever.
        if (forked_.size() >= 4096) forked_.erase(forked_.begin());
        forked_[e.tgid] = Forked{e.parent_tgid, now()};
      }
    } else if (e.kind == ProcEvent::Kind::Exec || e.kind == ProcEvent::Kind::Comm) {
      if (procs_.count(e.tgid)) execd_.insert(e.tgid);
    } else if (e.kind == ProcEvent::Kind::Exit) {
      // The status its parent reaps: the only way to know it for a process
      // reaped by a parent of the job (a DataLoader reaping its workers).
      if (procs_.count(e.tgid)) {
        exit_status_[e.tgid] = e.exit_status;
        if (e.exit_status != 0 && e.tgid != top_pid_ && hooks_.on_failed_exit)
          hooks_.on_failed_exit(e.tgid);
      }
    }
  });
  if (!complete) dirty_ = lost_events_ = true;  // events were lost: look at everything
  *forked = !born_.empty();
}

void JobTracker::tick() {
  // Most ticks of an idle job read nothing from /proc. What changes the tree
  // is announced: a fork of a job process by the kernel's process events (or,
  // without them, any fork on the machine: the last pid in /proc/loadavg
  // moved), an exit by its pidfd, a reap by the reaper, an unknown sender by
  // its message. A fork costs a look at the new pids only; the rest a full
  // refresh, as does the passing of refresh_every(), for the state changes
  // nothing announces (a stop, D) and the CPU time.
  bool forked = false;
  if (events_) {
    drain_events(&forked);
  } else if (reaper_forks_) {
    forked = reaper_forked_;
    reaper_forked_ = false;
  } else {
    auto lp = reader_.last_pid();
    forked = !lp || *lp != last_pid_seen_;
    if (lp) last_pid_seen_ = *lp;
  }
  if (dirty_ || now() - last_refresh_ >= refresh_every_) {
    // With births announced (process events, or the reaper's word), a
    // refresh re-reads the tracked processes and looks for newcomers only
    // when a birth was announced: the announcement read above is consumed
    // here, or that newcomer waited for the next one. The table (or the
    // children files) is read only every kDiscoverEvery-th refresh (~5 s),
    // as a safety net.
    constexpr int kDiscoverEvery = 25;
    if (forks_announced() && !lost_events_ && ++refreshes_ % kDiscoverEvery != 0) {
      const bool all = dirty_;
      dirty_ = false;
      last_refresh_ = now();
      refresh_tracked(all);
      if (forked) sample_new();
      if (!execd_.empty()) refresh_commands();
    } else {
      lost_events_ = false;
      walk();
    }
    return;
  }
  if (forked) sample_new();
  if (!execd_.empty()) refresh_commands();
}

std::map<int, int> JobTracker::known_levels() const {
  // Levels below reaper_pid_: (pid namespace) init 1, top 2; (subreaper) top 1.
  std::map<int, int> known;
  if (init_pid_ && init_pid_ != reaper_pid_) known[init_pid_] = 1;
  for (const auto& [pid, tr] : procs_)
    if (!tr.gone) known[pid] = tr.depth + base();
  return known;
}

void JobTracker::adopt(std::map<int, std::pair<ProcStat, int>> fresh) {
  for (auto& [pid, entry] : fresh) {
    if (!top_started()) break;  // the reaper's own fork, before exec
    auto it = procs_.find(pid);
    if (it != procs_.end()) {
      if (!it->second.gone && it->second.starttime == entry.first.starttime) continue;
      // The pid was reused inside the job: the old one is gone.
      if (!it->second.gone) {
        if (it->second.alive) record(obs::proc_exit(now(), pid, std::nullopt));
        record(obs::proc_gone(now(), pid, it->second.present_at));
      }
      stats_.forget(pid);
      procs_.erase(it);
    }
    track_new(pid, entry.first, std::max(0, entry.second - base()));
  }
}

void JobTracker::sample_new() {
  std::vector<int> born;
  born.swap(born_);
  adopt(reader_.newcomers(reaper_pid_, known_levels(), &foreign_, events_ ? &born : nullptr));
}

void JobTracker::refresh_commands() {
  std::set<int> pids;
  pids.swap(execd_);
  for (int pid : pids) {
    auto it = procs_.find(pid);
    if (it == procs_.end() || it->second.gone) continue;
    TrackedProcess& tr = it->second;
    auto st = reader_.stat(pid);
    if (!st || (tr.starttime && st->starttime != tr.starttime)) continue;  // the next walk says
    std::string cmd = reader_.cmdline(pid);
    tr.comm = st->comm;
    if (cmd.empty() || cmd == tr.cmdline) continue;  // a zombie has none; a rename keeps it
    tr.cmdline = cmd;
    // Seen between fork and exec, it carried its parent's command line (and
    // environment): role rules and match: targets need the new one.
    if (tr.role == Role::Unknown) tr.role = role_by_rule(tr.comm, cmd, pid == top_pid_);
    record(obs::proc_exec(now(), pid, tr.comm, cmd, tr.role));
    tr.env_read = false;
    if (!tr.announced) tr.role_final = false;
    classify(tr);
  }
}

void JobTracker::walk() {
  // The fork events read first: a process the walk finds already
  // re-parented gets its ancestry from them (track_new).
  if (events_) {
    bool forked = false;
    drain_events(&forked);
  }
  dirty_ = false;
  last_refresh_ = now();
  born_.clear();  // the walk below finds them
  auto known = refresh_tracked(true);
  // Then the processes born since, from the children files or the table
  // (never from events: this is the walk that does not depend on them).
  adopt(reader_.newcomers(reaper_pid_, known, &foreign_));
  if (!execd_.empty()) refresh_commands();
}

// Long: one pass over the tracked processes that reads each once and
// derives every change (exit, parent, state, exec, CPU, RSS) from that read.
std::map<int, int> JobTracker::refresh_tracked(bool all) {
  // Every tracked process, re-read (`all`), or those due: gone, state,
  // parent, name. The reads cost the job's size, never the machine's.
  auto known = known_levels();
  std::int64_t rss_pages = 0, summed = 0;
  std::set<int> parents;  // of the live job processes: who has children now
  for (const auto& [pid, tr] : procs_)
    if (!tr.gone && tr.alive) parents.insert(tr.ppid);
  const Nanos t = now();
  for (auto& [pid, tr] : procs_) {
    if (tr.gone) continue;
    if (!all && t < tr.next_read) {
      // Quiet since its last reads: read less often (below).
      if (tr.rss_counted) rss_pages += tr.rss_pages, ++summed;
      continue;
    }
    auto st = stats_.read(pid);
    tr.rss_counted = false;
    if (st && (!tr.starttime || st->starttime == tr.starttime)) tr.present_at = t;
    if (st && st->state != 'Z' && (!tr.starttime || st->starttime == tr.starttime)) {
      rss_pages += st->rss_pages;
      ++summed;
      // A process whose stat did not move (state, parent, CPU time, memory)
      // is read again after 2, 4 ... refresh periods, at most a second
      // apart; any change, or anything announced (a dirty tick reads all),
      // brings it back to every refresh.
      const std::uint64_t cpu = st->utime + st->stime;
      const bool first = !tr.stat_seen;
      const std::uint64_t cpu_before = tr.cpu_read;
      const bool quiet = !first && st->state == tr.state && st->ppid == tr.ppid &&
                         st->rss_pages == tr.rss_pages && cpu == cpu_before;
      tr.read_gap =
          quiet ? std::min<Nanos>(kSecond, tr.read_gap ? 2 * tr.read_gap : 2 * refresh_every_) : 0;
      tr.next_read = t + tr.read_gap;
      tr.stat_seen = true;
      tr.rss_pages = st->rss_pages;
      tr.rss_counted = true;
      tr.cpu_read = cpu;
      // Housekeeping is no progress: torchrun's agent polling the ranks it
      // started (every 0.1 s since PyTorch 2.4; before it has any, it
      // imports torch and takes part in the rendezvous: work) or a helper's
      // (torch_shm_manager, multiprocessing's trackers). Any other process's
      // CPU time is work.
      const bool counts = work_of_ == 0 || work_of_ == pid;  // after a failure, the launcher
      bool works = tr.role != Role::Helper &&
                   !(is_torchrun_agent(tr.cmdline) && parents.count(pid)) && counts;
      if (!first && cpu > cpu_before && works)
        work_ticks_[pid] += static_cast<std::int64_t>(cpu - cpu_before);
      if (watch_work_ && works) {
        if (auto io = reader_.io_bytes(pid)) {
          auto [seen, first] = io_seen_.try_emplace(pid, *io);
          if (!first && *io > seen->second)
            io_bytes_ += static_cast<std::int64_t>(*io - seen->second);
          seen->second = *io;
        }
      }
      if (watch_work_ && counts) read_cpu_wait(pid, *st, t);
    }
    if (!st || (tr.starttime && st->starttime != tr.starttime)) {
      if (tr.alive) {
        tr.alive = false;
        record(obs::proc_exit(now(), pid, std::nullopt));
      }
      tr.gone = true;
      stats_.forget(pid);
      waits_.erase(pid);
      record(obs::proc_gone(now(), pid, tr.present_at));
      known.erase(pid);
      continue;
    }
    if (tr.starttime == 0) tr.starttime = st->starttime;
    if (st->ppid != tr.ppid) {
      tr.ppid = st->ppid;
      // Reparented to the job's init (the reaper, or a subreaper's 1): its
      // parent is gone while it lives on.
      if (!tr.is_top && (st->ppid == reaper_pid_ || st->ppid == init_pid_ || st->ppid == 1))
        tr.orphaned = true;
      record(obs::proc_parent(now(), pid, st->ppid));
      int parent = st->ppid == reaper_pid_ ? 0 : known.count(st->ppid) ? known[st->ppid] : -1;
      if (parent >= 0) {
        tr.depth = std::max(0, parent + 1 - base());
        known[pid] = tr.depth + base();
      }
    }
    // An exiting leader keeps the state it had: its zombie time starts when
    // the last thread is gone (the exit a pidfd reports), not at its own end.
    if (const char state = leader_exiting(*st) ? tr.state : st->state; state != tr.state) {
      tr.state = state;
      record(obs::proc_state(now(), pid, state));
    }
    if (tr.comm.empty()) {
      tr.comm = st->comm;
    } else if (st->comm != tr.comm) {
      execd_.insert(pid);  // exec'd (or renamed) since: read its command line again
    }
  }
  classify_pending();
  hooks_.on_refreshed();
  // The job's resident memory, from the same reads: recorded when it moved
  // by 1 MiB or more (RSS counts shared pages once per process: an upper
  // bound on what the job holds, and what an OOM killer weighs).
  static const std::int64_t kPage = ::sysconf(_SC_PAGESIZE);
  std::int64_t rss = rss_pages * kPage;
  if (last_rss_ < 0 || std::llabs(rss - last_rss_) >= (1 << 20) ||
      (summed == 0) != (last_rss_procs_ == 0)) {
    record(obs::memory(now(), rss, summed));
    last_rss_ = rss;
    last_rss_procs_ = summed;
  }
  return known;
}

void JobTracker::announce(int pid, Role role, int rank, int worker) {
  auto it = procs_.find(pid);
  if (it == procs_.end()) return;
  it->second.announced = true;
  it->second.role = role;
  it->second.rank = rank;
  it->second.worker = worker;
}

void JobTracker::signal_live(int sig, const char* why) {
  // Children before parents: deepest first, so a parent cannot react to its
  // children's deaths (respawn, re-parent) before they are gone.
  std::vector<TrackedProcess*> live;
  for (auto& [pid, tr] : procs_)
    if (tr.alive && !tr.gone && tr.pidfd) live.push_back(&tr);
  std::stable_sort(live.begin(), live.end(), [](const TrackedProcess* a, const TrackedProcess* b) {
    return a->depth > b->depth;
  });
  for (TrackedProcess* tr : live) {
    if (!pidfd_signal(tr->pidfd.get(), sig)) record(obs::signal(now(), tr->pid, sig, why));
    if (sig == SIGTERM && (tr->state == 'T' || tr->state == 't'))
      (void)pidfd_signal(tr->pidfd.get(), SIGCONT);
  }
}

std::optional<std::string> JobTracker::fill_exit_statuses(std::vector<Observation>& events) {
  if (events_) {
    // The last exits may still be queued.
    (void)events_->drain([&](const ProcEvent& e) {
      if (e.pid == e.tgid && e.kind == ProcEvent::Kind::Exit && procs_.count(e.tgid))
        exit_status_[e.tgid] = e.exit_status;
    });
  }
  // Per pid, its last exit without a status (a reused pid's earlier life
  // keeps what it had).
  std::map<int, obs::ProcExit*> last_exit;
  std::set<int> known;
  for (auto& o : events) {
    auto* x = o.as<obs::ProcExit>();
    if (!x) continue;
    if (x->outcome) {
      known.insert(x->pid);
      last_exit.erase(x->pid);
    } else if (!known.count(x->pid)) {
      last_exit[x->pid] = x;
    }
  }
  std::vector<int> unknown;
  for (auto& [pid, o] : last_exit) {
    if (auto it = exit_status_.find(pid); it != exit_status_.end())
      o->outcome = Outcome::from_wait_status(it->second);
    else
      unknown.push_back(pid);
  }
  if (unknown.empty()) return std::nullopt;
  std::string pids;
  for (int p : unknown) pids += (pids.empty() ? "" : ", ") + std::to_string(p);
  return "reaped by their parent, exit status unknown" +
         std::string(events_ ? "" : " (no process events here: not root)") + ": pid " + pids;
}

std::vector<int> JobTracker::still_running() const {
  std::vector<int> out;
  for (const auto& [pid, tr] : procs_) {
    if (tr.gone) continue;
    auto st = reader_.stat(pid);
    if (st && st->starttime == tr.starttime) out.push_back(pid);
  }
  return out;
}

const TrackedProcess* JobTracker::find(int pid) const {
  auto it = procs_.find(pid);
  return it == procs_.end() ? nullptr : &it->second;
}

bool JobTracker::had(int pid) const {
  return pid == reaper_pid_ || pid == init_pid_ || procs_.count(pid) > 0 || forked_.count(pid) > 0;
}

int JobTracker::live_count() const {
  // Asked every sample: counted again only after a recorded change.
  if (live_at_ == records_) return live_;
  int n = 0;
  for (const auto& [pid, p] : procs_)
    if (p.alive && !p.gone) ++n;
  live_ = n;
  live_at_ = records_;
  return n;
}

int JobTracker::present_count() const {
  int n = 0;
  for (const auto& [pid, p] : procs_)
    if (!p.gone) ++n;
  return n;
}

std::vector<int> JobTracker::live_pids() const {
  std::vector<int> out;
  for (const auto& [pid, p] : procs_)
    if (p.alive && !p.gone) out.push_back(pid);
  return out;
}

std::vector<int> JobTracker::present_pids() const {
  std::vector<int> out;
  for (const auto& [pid, p] : procs_)
    if (!p.gone) out.push_back(pid);
  return out;
}

std::vector<JobProcess> JobTracker::view() const {
  std::vector<JobProcess> v;
  for (const auto& [pid, tr] : procs_)
    if (!tr.gone) v.push_back(static_cast<const JobProcess&>(tr));
  return v;
}

JobRef JobTracker::ref() const {
  JobRef j;
  for (const auto& [pid, tr] : procs_) j.pids.insert(pid);
  j.orphan_parents = {1};
  if (reaper_pid_) j.orphan_parents.insert(reaper_pid_);
  if (init_pid_) j.orphan_parents.insert(init_pid_);
  return j;
}

}  // namespace aftermath
