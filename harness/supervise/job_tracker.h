// The job tracker: which processes are the job, what each is, and what
// became of it, kept up to date from /proc at the cost of the job's size.
//
// The job is the reaper's descendants. A newcomer is found by the kernel's
// process events (fork, exec, exit) where this process may listen, else by a
// moved /proc/loadavg last pid; every tracked process is re-read (state,
// parent, name, CPU time, RSS) when anything may have changed and every
// 200 ms regardless, for what nothing announces (a stop, D). Each is
// watched through a pidfd proven to name the process scanned (same start
// time), so its exit is seen when it happens and a reused pid is never taken
// for it. A process that did not announce its role gets one inferred from
// what the kernel shows (observe/roles.h).
//
// Everything seen is recorded through the hooks as observations; the tracker
// never judges. Single-threaded: the supervisor's loop drives it.
#pragma once

#include <boost/asio.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/core/timeline.h"
#include "harness/inject/select.h"
#include "harness/observe/proc.h"
#include "harness/observe/proc_events.h"
#include "harness/observe/process_index.h"
#include "harness/os/pidfd.h"

namespace aftermath {

// A job process as the tracker follows it: what the injector sees of it (the
// JobProcess it is) and the bookkeeping that keeps that true.
struct TrackedProcess : JobProcess {
  TrackedProcess() { state = 0; }  // unknown until read
  std::uint64_t starttime = 0;     // clock ticks since boot (0: not read yet)
  int inner_pid = 0;               // its pid in the job's namespace (0: same, or unknown)
  int first_ppid = 0;
  Nanos seen_at = 0;
  Nanos present_at = 0;     // the last read that found it in /proc
  bool announced = false;   // it said who it is: no inference over that
  bool role_final = false;  // inferred, and no later evidence can change it
  bool env_read = false;    // RANK read from its environment (again after an exec)
  std::optional<int> env_rank;
  std::string comm;        // as last read; a change means an exec (or a rename)
  Nanos next_read = 0;     // when a refresh reads its stat again (a dirty one reads all)
  Nanos read_gap = 0;      // 0: every refresh; doubling while its stat does not move
  bool stat_seen = false;  // its stat was read once (the fields below are its)
  std::int64_t rss_pages = 0;
  bool rss_counted = false;    // alive at the last read: its RSS is the job's
  std::uint64_t cpu_read = 0;  // utime + stime at the last read
  Nanos next_look = 0;         // when classify_pending() looks at it again
  Nanos look_gap = 0;          // and the gap after that (doubling, up to 2 s)
  bool gone = false;           // reaped (no longer in /proc)
  UniqueFd pidfd;
  std::unique_ptr<boost::asio::posix::stream_descriptor> watch;
};

struct JobTrackerHooks {
  std::function<Nanos()> now;               // run time
  std::function<void(Observation)> record;  // every observation the tracker makes
  std::function<void()> on_role_change;     // a role or number changed (a fault may wait for it)
  std::function<void(int pid)> on_exit;     // a pidfd said exit, before its ProcExit is recorded
  std::function<void()> on_refreshed;       // after each re-read of the tracked processes
  std::function<void(int pid)>
      on_failed_exit;  // a job process (not the top) exited non-zero or by a signal (from the
                       // kernel's exit events, or the reaper's reap)
};

class JobTracker {
 public:
  // `events`: the kernel's process events (null: /proc/loadavg is watched).
  JobTracker(boost::asio::io_context& ctx, const std::string& proc_root, JobTrackerHooks hooks,
             std::unique_ptr<ProcEvents> events = nullptr);

  // The kernel's process events for a tracker of `proc_root`'s processes,
  // where they work; null where the tick must poll /proc/loadavg instead.
  static std::unique_ptr<ProcEvents> open_events(const std::string& proc_root);

  // What the reaper said: its pid (the tracked processes' root), whether the
  // job has a PID namespace, and the job's init (== the reaper without one).
  void set_containment(int reaper_pid, bool pid_namespace);
  void set_init_pid(int pid) { init_pid_ = pid; }

  // The top process started (pid as seen here, and in its namespace): its
  // start is recorded exactly, its pidfd watched; comm and start time come
  // with the next walk.
  void add_top(Nanos t, int pid, int inner_pid, std::string comm, std::string cmdline);
  // The reaper reaped `reaper_pid` (its pid in the job), or the top exited
  // (`top`): recorded as exited and gone at the reaper's time.
  void reaped(Nanos t, int reaper_pid, const Outcome& outcome, bool top, const std::string& argv0);

  // Walks the job's tree: every tracked process re-read, newcomers from the
  // children files or the table (never from events).
  void walk();
  // One sample tick: a walk when something may have changed, else only what
  // the process events (or /proc/loadavg) announced.
  void tick();
  // Something happened that the next tick must look at (an exit, a message).
  void mark_dirty() { dirty_ = true; }
  // How often the tracked processes are re-read regardless (default 200 ms:
  // ten of the default sampling periods).
  void refresh_every(Nanos d) { refresh_every_ = d; }
  Nanos next_refresh() const { return last_refresh_ + refresh_every_; }
  // The kernel's process events' socket (-1: none): readable when a tick
  // has something to read.
  int events_fd() const { return events_ ? events_->fd() : -1; }
  // Without process events: the reaper watches the job's PID namespace and
  // says when it forked (note_fork), so the tick looks only then, not after
  // every fork on the machine (/proc/loadavg).
  void forks_from_reaper() { reaper_forks_ = true; }
  bool forks_announced() const { return events_ != nullptr || reaper_forks_; }
  void note_fork() { reaper_forked_ = true; }

  // A process said who it is.
  void announce(int pid, Role role, int rank, int worker);
  // SIGNAL to every live process with a pidfd, deepest first, each recorded;
  // stopped ones also get SIGCONT with a SIGTERM.
  void signal_live(int sig, const char* why);
  // Outcomes the reaper never saw (a process reaped by its own parent), from
  // the kernel's exit events, filled into `events`; a note for the rest.
  std::optional<std::string> fill_exit_statuses(std::vector<Observation>& events);
  // Processes once seen that still run (the same start time): a failed teardown.
  std::vector<int> still_running() const;

  const TrackedProcess* find(int pid) const;
  // Whether `pid` is or was one of the job's processes as far as known: tracked,
  // or announced by the kernel's fork event (one that exited before any look).
  bool had(int pid) const;
  int host_pid_for(int reaper_pid) const;  // 0: unknown
  int live_count() const;                  // not yet exited
  int present_count() const;               // not yet reaped (zombies included)
  std::vector<int> live_pids() const;      // not exited
  std::vector<int> present_pids() const;   // not reaped
  std::vector<JobProcess> view() const;    // not reaped, as the injector sees them
  JobRef ref() const;                      // the job, for device and hygiene checks
  bool top_started() const { return top_pid_ != 0; }
  int top_pid() const { return top_pid_; }
  int reaper_pid() const { return reaper_pid_; }
  int init_pid() const { return init_pid_; }
  bool has_process_events() const { return events_ != nullptr; }

  // What the job's working processes (all but helpers and torchrun's agent,
  // whose polling is housekeeping) did since reset_work(): no_hang's stall
  // rule. CPU time is counted per process, so that a hung job's many
  // pollers (gloo's network loop wakes 100 times a second in every rank)
  // cannot add up to work: work_ticks_beyond(A) sums what each process used
  // beyond an allowance of A clock ticks. io_bytes(): bytes read and written
  // (/proc/PID/io rchar + wchar, pipes and files included). cpu_wait(): the
  // most one job process (helpers and the agent included: a job held up by a
  // helper that cannot start is held up) was runnable but waited for a CPU,
  // the time a loaded machine took from the job: the waits the kernel
  // counted (/proc/PID/schedstat, the main thread's) and the one going on,
  // which it counts only when it ends (runnable at two reads with no time
  // run between them: the time between them), never more than the time
  // since reset_work(). After count_work_of(pid), only that process's waits.
  // Both read only once watch_work(true) was called.
  std::int64_t work_ticks_beyond(std::int64_t allowance) const;
  std::int64_t io_bytes() const { return io_bytes_; }
  Nanos cpu_wait() const { return cpu_wait_; }
  void reset_work() {
    work_ticks_.clear();
    io_bytes_ = 0;
    for (auto& [pid, w] : waits_) w.counted = w.going_on = 0;
    cpu_wait_ = 0;
    reset_at_ = now();
  }
  void watch_work(bool on) { watch_work_ = on; }
  // Only `pid`'s work counts from now on (0: every working process again):
  // after a failure, the launcher's reaction is the progress that matters.
  void count_work_of(int pid) { work_of_ = pid; }

 private:
  Nanos now() const { return hooks_.now(); }
  // Every change of a process's life (start, exit, gone) is recorded, so the
  // count of records says when live_count()'s cache is stale.
  void record(Observation o) {
    ++records_;
    hooks_.record(std::move(o));
  }
  std::uint64_t records_ = 0;
  mutable std::uint64_t live_at_ = ~std::uint64_t{0};  // records_ when live_ was counted
  mutable int live_ = 0;
  int base() const { return pid_ns_ ? 2 : 1; }  // the top's depth below the reaper
  void track_new(int pid, const ProcStat& st, int depth);
  void sample_new();  // stat only the processes born since the last look
  void adopt(std::map<int, std::pair<ProcStat, int>> fresh);
  std::map<int, int> known_levels() const;  // tracked pids -> depth below the reaper
  // Re-stat the tracked processes (`all`, or those due: a quiet one is read
  // less often); known_levels() after.
  std::map<int, int> refresh_tracked(bool all);
  void refresh_commands();  // re-read comm and cmdline of the processes in execd_
  void classify(TrackedProcess& tr);
  void classify_pending();              // look again at the young ones whose role is not final
  void watch_exit(TrackedProcess& tr);  // pidfd (opened here if needed) -> ProcExit
  void on_pidfd(int pid);
  void drain_events(bool* forked);

  boost::asio::io_context& ctx_;
  ProcReader reader_;
  StatFiles stats_;  // the tracked processes' stat, by descriptors kept open
  JobTrackerHooks hooks_;
  std::unique_ptr<ProcEvents> events_;
  std::map<int, TrackedProcess> procs_;  // host pid -> tracked (current incarnation)
  std::map<int, int> inner_to_host_;     // namespace pid -> host pid
  int reaper_pid_ = 0;
  int init_pid_ = 0;
  bool pid_ns_ = false;
  int top_pid_ = 0;
  std::map<int, std::int64_t> work_ticks_;  // working pid -> CPU ticks since reset_work()
  bool watch_work_ = false;
  std::int64_t io_bytes_ = 0;             // since reset_work()
  std::map<int, std::uint64_t> io_seen_;  // pid -> rchar+wchar at the last read
  struct CpuWait {
    std::uint64_t starttime = 0;  // of the process read (a pid may be reused)
    SchedStat last;               // at the last read
    bool runnable = false;        // state R at the last read
    Nanos read_at = 0;
    Nanos counted = 0;   // waits the kernel counted since reset_work()
    Nanos going_on = 0;  // and the one it has not counted yet
  };
  std::map<int, CpuWait> waits_;
  Nanos cpu_wait_ = 0;  // the most a process waited (counted + going_on)
  Nanos reset_at_ = 0;  // the last reset_work()
  void read_cpu_wait(int pid, const ProcStat& st, Nanos t);
  int work_of_ = 0;
  std::int64_t last_rss_ = -1;  // the job's RSS at the last memory observation
  std::int64_t last_rss_procs_ = -1;
  bool dirty_ = true;       // something happened since the last walk
  Nanos last_refresh_ = 0;  // when the tracked processes were last re-read
  Nanos refresh_every_ = 200 * kMilli;
  int last_pid_seen_ = -1;      // /proc/loadavg's last pid at the last tick
  bool reaper_forks_ = false;   // the reaper reports the job's forks
  bool reaper_forked_ = false;  // and did since the last tick
  std::vector<int> born_;       // job processes announced by fork events, not yet looked at
  // Who forked each job process, by the kernel's fork events, and when the
  // event was read: a process first seen already reparented (its parent
  // forked it and exited at once: a daemon's double fork) still gets its
  // real ancestry, and its birth time, from here (track_new).
  struct Forked {
    int parent = 0;
    Nanos t = 0;
  };
  std::map<int, Forked> forked_;
  std::set<int> execd_;             // job processes that exec'd or renamed themselves since
  std::map<int, int> exit_status_;  // pid -> wait status, from the kernel's exit events
  std::set<int> foreign_;           // pids seen outside the job (listing without children files)
  bool lost_events_ = false;        // the event stream overflowed: the next refresh walks
  int refreshes_ = 0;
};

// The role a process has by rule alone: the top is the launcher, PyTorch's
// shm manager a helper.
Role role_by_rule(const std::string& comm, const std::string& cmdline, bool is_top);

}  // namespace aftermath
