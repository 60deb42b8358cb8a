#include "harness/supervise/supervisor.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "harness/inject/fault_driver.h"
#include "harness/inject/fault_outcomes.h"
#include "harness/inject/select.h"
#include "harness/observe/diagnose.h"
#include "harness/observe/proc.h"
#include "harness/observe/proc_events.h"
#include "harness/observe/shm_held.h"
#include "harness/supervise/device_watch.h"
#include "harness/supervise/event_socket.h"
#include "harness/supervise/fault_schedule.h"
#include "harness/supervise/job_message.h"
#include "harness/supervise/job_shm.h"
#include "harness/supervise/job_tracker.h"
#include "harness/supervise/reaper_link.h"
#include "harness/supervise/run_registry.h"
#include "harness/supervise/sample_pacer.h"
#include "harness/supervise/tmp_watch.h"

namespace aftermath {

namespace asio = boost::asio;

namespace {

std::string tail_of_file(const std::string& path, size_t max_bytes) {
  auto text = read_small_file(path);
  if (!text) return {};
  if (text->size() > max_bytes) return text->substr(text->size() - max_bytes);
  return *text;
}

}  // namespace

std::string Containment::tools_dir() const {
  return std::filesystem::path(reaper_path).parent_path().string();
}

namespace {

FaultDriverOptions driver_options(const SupervisorOptions& opt) {
  FaultDriverOptions o;
  o.proc_root = opt.proc_root;
  o.tools = opt.inject;
  if (o.tools.tools_dir.empty()) o.tools.tools_dir = opt.contain.tools_dir();
  return o;
}

DeviceWatchOptions device_options(const Scenario& sc, const SupervisorOptions& opt) {
  DeviceWatchOptions o;
  o.sources = opt.devices;
  o.proc_root = opt.proc_root;
  o.interval = opt.device_interval;
  o.memory = device_memory_params(sc);
  return o;
}

// The loop and the teardown; the parts (the reaper link, the job tracker,
// the job's /dev/shm, the device watch, the fault driver) do the rest.
class Supervisor {
 public:
  Supervisor(const Scenario& sc, const SupervisorOptions& opt)
      : sc_(sc),
        opt_(opt),
        timer_(ctx_),
        reaper_(ctx_),
        tracker_(ctx_, opt.proc_root, tracker_hooks(), JobTracker::open_events(opt.proc_root)),
        shm_([this] { return now(); }, [this](Observation o) { add(std::move(o)); }),
        device_(
            ctx_, device_options(sc, opt), [this] { return now(); },
            [this] { return tracker_.ref(); }),
        driver_(driver_options(opt)),
        schedule_(ctx_, sc.faults, tl_.facts.faults, tracker_, driver_, schedule_hooks()) {
    schedule_.watch(sc.remote_triggers);
    tracker_.refresh_every(10 * sc.sample_interval);
  }

  Expected<Timeline> run();

 private:
  Nanos now() const { return monotonic_now() - t0_; }
  JobTrackerHooks tracker_hooks();
  // `local`: this node's job moved (another node's progress is not told back).
  void mark_progress(bool local = true) {
    last_progress_ = now();
    tracker_.reset_work();
    if (local && opt_.node.on_progress) opt_.node.on_progress();
  }
  void add(Observation o);
  bool is_progress(const Observation& o) const;  // no_hang's stall rule: the job moved on
  void phase(RunPhase name) {
    phase_ = std::string(to_string(name));
    add(obs::phase(now(), name));
    report_status(true);
  }
  void report_status(bool force);
  // Runs the loop until pred() or the deadline (absolute, in run time).
  template <typename Pred>
  bool pump(Nanos deadline, Pred pred);
  bool interrupted() const { return opt_.interrupted && *opt_.interrupted; }
  // No progress for the stall window, not counting the time the job waited
  // for a CPU: a job a loaded machine keeps from running is not hung. At
  // most three windows of waiting are left out, so that a verdict comes even
  // for a job whose processes wait for each other (more of them runnable
  // than there are CPUs) or for a spinning helper.
  Nanos cpu_wait() const { return std::min(tracker_.cpu_wait(), 3 * stall_window_); }
  bool stalled() const {
    return stall_window_ > 0 && tracker_.top_started() &&
           now() - last_progress_ - cpu_wait() >= stall_window_;
  }

  Status launch();
  void on_record(const reaper::Record& r);
  void on_mode(const reaper::Record& r);
  void on_top_started(Nanos t, const reaper::Record& r);
  void schedule_sample();
  void timed_tick();          // a tick from the timer, timed for the pacer
  bool event_driven() const;  // every change a tick looks for is announced
  void arm_wakes();           // an announcement brings the next tick forward
  void tick_soon();           // the next tick as soon as a period allows
  void tick();
  void sample();      // the job's tree and /dev/shm
  void sample_shm();  // /dev/shm alone, then what a sample may trigger
  void teardown();
  void finish_shm();
  // Shared memory each live job process still maps or holds (named, unlinked
  // or memfd): when the top exits (what orphans keep) and when the teardown
  // begins (what the teardown, not the job, ends).
  void record_shm_held();
  void diagnose_hang();
  void device_finish();
  void tmp_start();
  void schedule_tmp_poll();
  void finish_tmp();
  JobLookup job_lookup();  // for the temp dir's attribution

  // The job's messages: announcements, events, points.
  void watch_events();
  void handle_message(const EventSocket::Message& m);
  FaultScheduleHooks schedule_hooks();

  const Scenario& sc_;
  const SupervisorOptions& opt_;
  asio::io_context ctx_;
  asio::steady_timer timer_;
  SamplePacer pacer_{sc_.sample_interval};
  Nanos last_tick_ = 0;  // run time of the last tick
  Nanos tick_at_ = 0;    // and of the next
  // What brings an idle tick forward (event_driven()): the process events'
  // socket and /dev/shm's inotify, each watched through a dup of its fd.
  std::unique_ptr<asio::posix::stream_descriptor> events_wake_, shm_wake_;
  int events_wake_fd_ = -1, shm_wake_fd_ = -1;
  bool events_wake_pending_ = false, shm_wake_pending_ = false;
  Timeline tl_;
  Nanos t0_ = 0;
  bool tearing_down_ = false;
  Nanos last_change_ = 0;  // the last observation that shows the job changing
  // no_hang's stall rule: progress is a start or an exit, an event or a
  // point, bytes read or written, CPU time beyond a poller's; the window
  // comes from the scenario (0: off), and time the job's processes waited
  // for a CPU does not count towards it.
  Nanos stall_window_ = 0;
  bool after_failure_ = false;  // no_hang's after_failure
  bool failure_seen_ = false;   // and a job process failed since
  Nanos last_progress_ = 0;
  std::pair<std::int64_t, std::int64_t> last_sample_{-1, -1};  // (processes, shm bytes)
  std::string phase_;
  Nanos last_status_ = -kSecond;
  bool top_exited_ = false;
  bool exec_failed_ = false;

  ReaperLink reaper_;
  JobTracker tracker_;
  JobShm shm_;
  DeviceWatch device_;
  FaultDriver driver_;
  EventSocket sock_;
  std::unique_ptr<asio::posix::stream_descriptor> sock_watch_;
  TmpDirWatch tmp_;
  const int run_id_ = new_run_id();  // this run among those side by side (run_registry.h)
  ProcReader proc_{opt_.proc_root};
  std::unique_ptr<asio::steady_timer> tmp_timer_;
  FaultSchedule schedule_;
};

JobTrackerHooks Supervisor::tracker_hooks() {
  JobTrackerHooks h;
  h.now = [this] { return now(); };
  h.record = [this](Observation o) { add(std::move(o)); };
  h.on_role_change = [this] { schedule_.retry_waiting(); };  // a fault may wait for it
  h.on_exit = [this](int) { schedule_.watch_oom_kills(); };  // the kill comes before the exit
  h.on_failed_exit = [this](int pid) {
    // no_hang's after_failure: from a failure on, the launcher's reaction
    // is the progress that counts.
    if (!after_failure_ || failure_seen_ || top_exited_) return;
    failure_seen_ = true;
    tracker_.count_work_of(tracker_.top_pid());
    add(obs::note(
        now(),
        "pid " + std::to_string(pid) +
            " failed: from now on only the launcher's work, and processes starting or ending, "
            "count as progress (no_hang after_failure)"));
  };

  h.on_refreshed = [this] {
    // Work is progress: 1 KiB read or written, or CPU time beyond what a
    // poller uses. Each process may use 2% of a core over the stall window
    // without it counting (a hung gloo rank's network loop wakes 100 times
    // a second: 0.4-0.8% here; a watchdog's periodic wake less); what the
    // processes use beyond that counts once it adds up to 1% of a core. So
    // a hung job of many ranks does not add up to work, and a slow one that
    // moves data is not taken for hung.
    static const long kTicks = ::sysconf(_SC_CLK_TCK);
    if (stall_window_ > 0) {
      const std::int64_t window_ticks = stall_window_ * kTicks / kSecond;
      if (tracker_.work_ticks_beyond(window_ticks / 50) >=
              std::max<std::int64_t>(1, window_ticks / 100) ||
          tracker_.io_bytes() >= 1024)
        mark_progress();
    }
    if (opt_.node.remote_progress && opt_.node.remote_progress()) mark_progress(false);
    if (opt_.node.remote_fires)
      for (const auto& f : opt_.node.remote_fires())
        schedule_.fire_remote(f.fault, f.node, f.point, f.hit);
  };
  return h;
}

FaultScheduleHooks Supervisor::schedule_hooks() {
  FaultScheduleHooks h;
  h.now = [this] { return now(); };
  h.record = [this](Observation o) { add(std::move(o)); };
  h.sample = [this] { sample(); };
  h.remote_trigger = [this](size_t fault, const std::string& point, long long hit) {
    if (opt_.node.on_remote_trigger) opt_.node.on_remote_trigger(fault, point, hit);
  };
  return h;
}

bool Supervisor::is_progress(const Observation& o) const {
  // A change of state or parent, or a resize, is not the job moving on.
  if (o.is<obs::ProcState, obs::ProcParent, obs::ShmResize>()) return false;
  // After a failure (no_hang's after_failure) the survivors' events, points
  // and /dev/shm entries are theirs, not the launcher's reaction. (An entry
  // names no process: pid() is 0 for it.)
  const bool survivors = o.is<obs::Event, obs::Point, obs::ShmAdd, obs::ShmRemove>();
  return !(failure_seen_ && survivors && o.pid() != tracker_.top_pid());
}

void Supervisor::add(Observation o) {
  // What counts as the job still changing (the settle's quiet rule).
  if (o.is<obs::ProcStart, obs::ProcExit, obs::ProcGone, obs::ProcParent, obs::ProcState,
           obs::ProcExec, obs::ShmAdd, obs::ShmRemove, obs::ShmResize, obs::Event, obs::Point>()) {
    last_change_ = now();
    if (is_progress(o)) mark_progress();
  }
  if (const auto* p = o.as<obs::ProcStart>()) note_run_pid(run_id_, p->pid);
  if (opt_.node.on_observation) opt_.node.on_observation(o);
  tl_.add(std::move(o));
}

void Supervisor::report_status(bool force) {
  if (!opt_.on_status) return;
  Nanos t = now();
  if (!force && t - last_status_ < 200 * kMilli) return;
  last_status_ = t;
  opt_.on_status(LiveStatus{t, tracker_.live_count(), phase_});
}

template <typename Pred>
bool Supervisor::pump(Nanos deadline, Pred pred) {
  while (!pred()) {
    // An interruption cuts the job short, never the teardown.
    if (interrupted() && !tearing_down_) return false;
    Nanos left = deadline - now();
    if (left <= 0) return false;
    Nanos slice = std::min<Nanos>(left, 50 * kMilli);
    if (ctx_.stopped()) ctx_.restart();
    ctx_.run_one_for(std::chrono::nanoseconds(slice));
  }
  return true;
}

Status Supervisor::launch() {
  ReaperLaunch l;
  l.reaper_path = opt_.contain.reaper_path;
  l.stdout_path = opt_.out_dir + "/stdout.log";
  l.stderr_path = opt_.out_dir + "/stderr.log";
  l.containment = opt_.contain.mode;
  l.shm = opt_.contain.shm;
  l.ignored_signals = sc_.job.inherit_ignored_signals
                          ? opt_.contain.ignored_signals.value_or(ignored_signals_now())
                          : 0;
  // Without the kernel's process events, the reaper (pid 1 of the job's
  // namespace, where it is one) watches the job's own forks.
  if (tracker_.events_fd() < 0)
    l.watch_forks_ms = static_cast<int>(std::max<Nanos>(kMilli, sc_.sample_interval) / kMilli);
  l.cwd = sc_.job.cwd;
  l.argv = sc_.job.argv;
  // The job's environment: ours, with the scenario's entries on top.
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) l.env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : sc_.job.env) l.env[k] = v;
  l.env["AFTERMATH_EVENTS"] = sock_.address();
  // Its own faults' points and those it watches for other nodes' faults.
  std::vector<TriggerSpec> points;
  for (const auto& f : sc_.faults) points.push_back(f.at);
  for (const auto& [fault, at] : sc_.remote_triggers) points.push_back(at);
  std::string armed = armed_points(points);
  if (!armed.empty()) l.env["AFTERMATH_POINTS"] = armed;
  driver_.prepare_job_env(sc_.faults, l.env);
  return reaper_.start(l, [this](const reaper::Record& r) { on_record(r); });
}

void Supervisor::on_mode(const reaper::Record& r) {
  // Where /dev/shm is watched, and what its baseline is.
  shm_.set_place(r.pid == 1, reaper_.pid());
  tl_.facts.shm = r.pid == 1 ? ShmPlace::Private : ShmPlace::Host;
  auto mode = static_cast<reaper::Containment>(r.a);
  bool pid_ns = mode != reaper::Containment::Subreaper;
  tracker_.set_containment(reaper_.pid(), pid_ns);
  tl_.facts.containment = job_containment(mode);
  if (!pid_ns) tl_.facts.containment_note = subreaper_note(r.b);
  // The reaper's ForkWatch (it comes after, from pid 1) says "reaper".
  tl_.facts.forks_from =
      tracker_.events_fd() >= 0 ? ForkSource::ProcessEvents : ForkSource::Machine;
}

void Supervisor::on_top_started(Nanos t, const reaper::Record& r) {
  tl_.facts.top_pid = r.pid;
  // Its start is known exactly; comm and start time come with the next scan.
  std::string cmd;
  for (const auto& a : sc_.job.argv) cmd += (cmd.empty() ? "" : " ") + a;
  std::string comm = std::filesystem::path(sc_.job.argv.at(0)).filename().string().substr(0, 15);
  tracker_.add_top(t, r.pid, r.a, comm, cmd);
  sample();
  schedule_.start(t);
}

void Supervisor::on_record(const reaper::Record& r) {
  Nanos t = r.t_ns - t0_;
  switch (r.type) {
    case reaper::Msg::Mode:
      on_mode(r);
      break;
    case reaper::Msg::ProcView:
      // In a PID namespace the job should see its own /proc; where it cannot,
      // /proc names host pids that kill() in the job does not know (ESRCH).
      if (r.pid != 1) {
        std::string& note = tl_.facts.containment_note;
        note += (note.empty() ? "" : "; ") + proc_view_note(r);
      }
      break;
    case reaper::Msg::ForkWatch:
      tracker_.forks_from_reaper();
      tl_.facts.forks_from = ForkSource::Reaper;
      break;
    case reaper::Msg::Forked:
      tracker_.note_fork();
      if (event_driven()) tick_soon();
      break;
    case reaper::Msg::InitPid:
      tracker_.set_init_pid(r.pid);
      tl_.facts.init_pid = r.pid;
      break;
    case reaper::Msg::TopStarted:
      on_top_started(t, r);
      break;
    case reaper::Msg::ExecFailed:
      exec_failed_ = true;
      add(obs::note(t, std::string("the job could not be started: ") + std::strerror(r.a)));
      break;
    case reaper::Msg::TopExited:
    case reaper::Msg::Reaped: {
      bool top = r.type == reaper::Msg::TopExited;
      Outcome out = Outcome::from_wait_status(r.a);
      if (top) {
        tl_.facts.top_outcome = out;
        top_exited_ = true;
        schedule_.on_job_end();  // the job is ending: phase-triggered faults may fire
      }
      tracker_.reaped(t, r.pid, out, top, sc_.job.argv.empty() ? "" : sc_.job.argv[0]);
      break;
    }
  }
}

bool Supervisor::event_driven() const {
  // Every change a tick looks for is announced: forks and execs by the
  // kernel's process events, /dev/shm by inotify, exits by pidfds, messages
  // and reaps by their sockets; no fault cgroup's OOM count is polled.
  return tracker_.forks_announced() && shm_.watch_fd() >= 0 && !driver_.has_cgroups() &&
         !shm_.finished();
}

void Supervisor::schedule_sample() {
  // The next tick: a sampling period after the last one. Where every change
  // is announced, an idle job needs a tick only for the periodic re-read of
  // its processes (or every kIdleTick): an announcement (arm_wakes) brings
  // it forward, never to less than a period after the last.
  constexpr Nanos kIdleTick = 100 * kMilli;
  Nanos next = last_tick_ + pacer_.period();
  if (event_driven())
    next = std::max(next, std::min(tracker_.next_refresh(), last_tick_ + kIdleTick));
  tick_at_ = next;
  timer_.expires_after(std::chrono::nanoseconds(std::max<Nanos>(0, next - now())));
  timer_.async_wait([this](boost::system::error_code ec) {
    if (!ec) timed_tick();
  });
}

void Supervisor::timed_tick() {
  Nanos t0 = monotonic_now();
  last_tick_ = now();
  tick();
  Nanos took = monotonic_now() - t0;
  // Samples that take more than half the period stretch it: the sampler
  // never falls behind, and the timeline says when and why.
  if (auto period = pacer_.took(took)) add(obs::sample_period(now(), *period, took));
  arm_wakes();
  schedule_sample();
}

void Supervisor::tick_soon() {
  // Something was announced: tick as soon as a period allows.
  Nanos soonest = last_tick_ + pacer_.period();
  if (tick_at_ <= soonest) return;
  tick_at_ = soonest;
  timer_.expires_after(std::chrono::nanoseconds(std::max<Nanos>(0, soonest - now())));
  timer_.async_wait([this](boost::system::error_code e) {
    if (!e) timed_tick();
  });
}

void Supervisor::arm_wakes() {
  auto arm = [this](std::unique_ptr<asio::posix::stream_descriptor>& w, int& watched, bool& pending,
                    int fd) {
    if (fd < 0 || pending) return;
    if (!w || watched != fd) {
      if (w) w->close();
      w = std::make_unique<asio::posix::stream_descriptor>(ctx_, ::dup(fd));
      watched = fd;
    }
    pending = true;
    w->async_wait(asio::posix::stream_descriptor::wait_read,
                  [this, &pending](boost::system::error_code ec) {
                    pending = false;
                    if (!ec) tick_soon();
                  });
  };
  if (!event_driven()) return;
  arm(events_wake_, events_wake_fd_, events_wake_pending_, tracker_.events_fd());
  arm(shm_wake_, shm_wake_fd_, shm_wake_pending_, shm_.watch_fd());
}

void Supervisor::tick() {
  schedule_.watch_oom_kills();  // a kill in a fault cgroup (one small read each)
  tracker_.tick();
  sample_shm();
  report_status(false);
}

void Supervisor::sample() {
  tracker_.walk();
  sample_shm();
  report_status(false);
}

void Supervisor::sample_shm() {
  if (shm_.finished()) return;
  shm_.sample();
  std::int64_t extra = shm_.extra_bytes();
  schedule_.after_sample(shm_.fresh_entries());
  int live = tracker_.live_count();
  if (last_sample_.first != live || last_sample_.second != extra) {
    add(obs::sample(now(), live, extra));
    last_sample_ = {live, extra};
  }
}

void Supervisor::teardown() {
  tearing_down_ = true;
  schedule_.stop();
  phase(RunPhase::Teardown);
  sample();
  record_shm_held();
  if (tracker_.live_count() > 0) {
    tracker_.signal_live(SIGTERM, "teardown");
    pump(now() + sc_.timeouts.teardown, [&] { return tracker_.live_count() == 0; });
    sample();
    if (tracker_.live_count() > 0) {
      tracker_.signal_live(SIGKILL, "teardown: still alive after SIGTERM");
      pump(now() + 5 * kSecond, [&] { return tracker_.live_count() == 0; });
    }
  }
  for (auto& n : driver_.release_device()) add(obs::note(now(), n));
  // Record the /dev/shm leftovers while the job's namespace (and with it a
  // private /dev/shm) still exists.
  finish_shm();
  // End the reaper: as pid 1 its exit kills whatever is left in the namespace
  // (including processes we never managed to observe).
  reaper_.close_lifeline();
  bool reaper_done = false;
  reaper_.async_wait([&] { reaper_done = true; });
  if (!pump(now() + 5 * kSecond, [&] { return reaper_done; })) {
    reaper_.terminate();
    pump(now() + 5 * kSecond, [&] { return reaper_done; });
  }
  // Its last records (the exit statuses of what it reaped at the end) may
  // still be in the pipe when its own exit is seen: read them to the end.
  pump(now() + kSecond, [&] { return reaper_.eof(); });
  // The fault cgroups are empty now: the last kill counts, then away.
  schedule_.close_cgroups();
  // Prove it: nothing we ever saw is still there.
  sample();
  for (int pid : tracker_.still_running())
    add(obs::harness_failure(now(), HarnessPart::Teardown,
                             "pid " + std::to_string(pid) + " is still alive", pid));
}

void Supervisor::record_shm_held() {
  for (int pid : tracker_.live_pids()) {
    for (const auto& h : shm_held_by(opt_.proc_root, pid)) {
      std::string how = h.mapped && h.open ? "mapped+fd" : h.mapped ? "mapped" : "fd";
      add(obs::shm_held(now(), pid, h.path, h.bytes, how, h.deleted));
    }
  }
}

void Supervisor::finish_shm() {
  sample();
  shm_.finish(opt_.contain.keep_leaks, opt_.out_dir + "/leaked-shm");
}

void Supervisor::watch_events() {
  sock_watch_->async_wait(asio::posix::stream_descriptor::wait_read,
                          [this](boost::system::error_code ec) {
                            if (ec) return;
                            while (auto m = sock_.receive()) handle_message(*m);
                            watch_events();
                          });
}

void Supervisor::handle_message(const EventSocket::Message& m) {
  JobMessage j = parse_job_message(m.text);
  const std::string& type = j.type;
  auto answer = [&](const std::string& a) {
    if (type == "point" || type == "test") (void)sock_.reply(m, a);
  };
  if (type.empty()) {
    add(obs::note(now(), "malformed event from pid " + std::to_string(m.pid)));
    return;
  }
  if (!tracker_.find(m.pid)) sample();  // born since the last scan?
  const TrackedProcess* tr = tracker_.find(m.pid);
  if (!tr || tr->gone) {
    // Only the job's own processes steer the harness.
    add(obs::note(now(), "ignored a '" + type + "' message from pid " + std::to_string(m.pid) +
                             ", which is not part of the job"));
    answer("continue");
    return;
  }
  if (type == "announce") {
    tracker_.announce(m.pid, j.role, j.rank, j.worker);
    add(obs::announce(now(), m.pid, j.role, j.rank, j.worker, j.labels.dump()));
    schedule_.retry_waiting();  // the target a fault waits for may have just said who it is
    return;
  }
  if (type == "event") {
    add(obs::event(now(), m.pid, j.name, j.fields));
    schedule_.on_phase_event(j.name);
    return;
  }
  if (type == "test") {
    // A test's start or end (fixtures/points/aftermath_pytest.py): the
    // process table and /dev/shm are read first, so what the test started
    // or left is on the timeline before its boundary; the answer lets the
    // test go on only then.
    sample();
    add(obs::event(now(), m.pid, j.name, j.fields));
    answer("ok");
    return;
  }
  if (type != "point") return;
  add(obs::point(now(), m.pid, j.name, j.hit, j.labels.dump()));
  answer(schedule_.on_point(m.pid, j.name, j.hit, j.labels));
}

void Supervisor::diagnose_hang() {
  const Nanos verdict = monotonic_now();
  phase(RunPhase::Diagnose);
  sample();
  DiagnoseOptions d;
  d.proc_root = opt_.proc_root;
  if (auto it = sc_.checks.find("no_hang"); it != sc_.checks.end())
    if (auto budget = check_params<NoHangParams>(it->second).diagnose)
      d.per_process = d.total = *budget;
  d.gdb = find_debugger(opt_.inject.dev_root);
  d.py_spy = find_py_spy(opt_.python.interpreter, opt_.contain.tools_dir());
  // Keep reading the job's events (and exits) while gdb looks at it: a job
  // that reports progress must not block on a full event socket, which would
  // change the very stacks being taken.
  d.while_waiting = [this] {
    if (ctx_.stopped()) ctx_.restart();
    ctx_.poll();
  };
  Diagnosis taken = diagnose(tracker_.live_pids(), d);
  if (!taken.note.empty()) tl_.facts.diagnosis_note = std::move(taken.note);
  std::vector<ProcessDiagnosis>& diag = taken.processes;
  auto open = open_collectives(tl_);
  for (auto& p : diag) {
    const TrackedProcess& tr = *tracker_.find(p.pid);
    p.role = tr.role;
    p.rank = tr.rank;
    p.worker = tr.worker;
    if (auto it = open.find(p.pid); it != open.end()) p.waiting_in = it->second;
  }
  tl_.facts.diagnosis = std::move(diag);
  tl_.facts.diagnosis_took = monotonic_now() - verdict;
}

// Long: the run's phases in order (launch, run, the ways it ends, settle,
// teardown, the after-run settling of records) are the story of a run.
Expected<Timeline> Supervisor::run() {
  t0_ = monotonic_now();
  tl_.facts.python = opt_.python;
  // The host's /dev/shm before anything starts; replaced by an empty baseline
  // if the job gets a private one (see the Mode record).
  shm_.take_baseline(opt_.shm_dir);
  for (size_t i = 0; i < sc_.faults.size(); ++i) {
    FaultRecord rec;
    rec.index = static_cast<int>(i);
    rec.action = sc_.faults[i].action;
    rec.target = sc_.faults[i].target.text;
    rec.trigger = sc_.faults[i].at.text;
    rec.optional = sc_.faults[i].optional;
    tl_.facts.faults.push_back(rec);
  }
  if (Status opened = sock_.open(); !opened) return opened.error();
  sock_watch_ = std::make_unique<asio::posix::stream_descriptor>(ctx_, ::dup(sock_.fd()));
  watch_events();
  auto env_of = [&](const char* name) -> std::optional<std::string> {
    if (auto it = sc_.job.env.find(name); it != sc_.job.env.end()) return it->second;
    if (const char* v = ::getenv(name)) return std::string(v);
    return std::nullopt;
  };
  device_.start(env_of("CUDA_VISIBLE_DEVICES"), env_of("CUDA_DEVICE_ORDER"));
  tmp_start();
  phase(RunPhase::Launch);
  if (Status st = launch(); !st) return st.error();
  // The reaper reports its mode, init and top right away.
  pump(now() + 10 * kSecond, [&] { return tracker_.top_started() || exec_failed_; });
  phase(RunPhase::Running);
  schedule_sample();
  sample();
  Nanos job_deadline = sc_.timeouts.job;
  if (auto it = sc_.checks.find("no_hang"); it != sc_.checks.end() && it->second.enabled &&
                                            check_params<NoHangParams>(it->second).stall) {
    stall_window_ = *check_params<NoHangParams>(it->second).stall;
    after_failure_ = check_params<NoHangParams>(it->second).after_failure;
    tracker_.watch_work(true);
  }
  mark_progress();
  // Before a stall is called, every process is read once more: one read
  // less often for being quiet may have work to show.
  auto stall_confirmed = [&] {
    if (!stalled()) return false;
    tracker_.mark_dirty();
    tracker_.tick();
    return stalled();
  };
  pump(job_deadline, [&] { return top_exited_ || stall_confirmed(); });
  if (!top_exited_ && stalled() && !interrupted()) {
    tl_.facts.deadline_hit = true;
    tl_.facts.stalled_since = last_progress_;
    tl_.facts.stall_window = stall_window_;
    tl_.facts.stall_cpu_wait = cpu_wait();
    phase(RunPhase::Stalled);
    add(obs::note(now(), "no job process made progress since " + format_duration(last_progress_) +
                             " (" + stall_window_words(tl_.facts) + "): a hang"));
    diagnose_hang();
  } else if (top_exited_) {
    phase(RunPhase::JobExited);
    // A fresh scan: what the top left behind may have been born since the
    // last sample, and "nothing left" must not be concluded from stale data.
    sample();
    record_shm_held();
    // Watch leftovers: until nothing of the job lives and /dev/shm is back,
    // or the settle period ends.
    phase(RunPhase::Settle);
    Nanos bound = now() + sc_.timeouts.settle;
    auto clean_now = [&] { return tracker_.present_count() == 0 && shm_.at_baseline(); };
    // Quiet for longer than a DataLoader worker's watchdog period of this
    // PyTorch: an orphaned worker is seen to notice its dead parent.
    const Nanos quiet = settle_quiet(opt_.python);
    bool clean = pump(bound, [&] { return clean_now() || now() - last_change_ >= quiet; });
    if (!clean_now())
      add(obs::note(now(),
                    clean ? "settle ended: nothing of the job changed for " + format_duration(quiet)
                          : "settle ended at its " + format_duration(sc_.timeouts.settle) +
                                " bound with job processes or /dev/shm entries left"));
  } else if (interrupted()) {
    add(obs::note(now(), "interrupted"));
  } else {
    tl_.facts.deadline_hit = true;
    phase(RunPhase::Deadline);
    diagnose_hang();
  }
  teardown();
  finish_tmp();
  timer_.cancel();
  device_finish();
  tl_.facts.stdout_text = tail_of_file(opt_.out_dir + "/stdout.log", 64 * 1024);
  tl_.facts.stderr_text = tail_of_file(opt_.out_dir + "/stderr.log", 64 * 1024);
  phase(RunPhase::Done);
  // The reaper's records carry their own (earlier) timestamps.
  std::stable_sort(tl_.observations.begin(), tl_.observations.end(),
                   [](const Observation& a, const Observation& b) { return a.t < b.t; });
  settle_fault_effects(tl_.facts.faults, tl_.observations);
  explain_unfired_faults(tl_.facts.faults, sc_.faults,
                         schedule_.unfired(top_exited_, tl_.facts.deadline_hit));
  if (auto note = tracker_.fill_exit_statuses(tl_.observations)) add(obs::note(now(), *note));
  return std::move(tl_);
}

void Supervisor::device_finish() {
  if (device_.active()) {
    // Device memory comes back after the processes are gone, when the driver
    // has torn their contexts down: keep sampling until it is back or the
    // check's deadline has passed.
    Nanos until = device_.begin_release(release_origin(tl_).value_or(now()));
    if (!device_.at_baseline()) {
      phase(RunPhase::DeviceRelease);
      pump(until, [&] { return device_.at_baseline(); });
    }
  }
  std::vector<std::string> notes;
  tl_.device = device_.finish(notes);
  for (const auto& n : notes) add(obs::note(now(), "device: " + n));
}

void Supervisor::tmp_start() {
  // The dir the job will use, from the environment it gets (launch()).
  std::optional<std::string> env;
  if (auto it = sc_.job.env.find("TMPDIR"); it != sc_.job.env.end())
    env = it->second;
  else if (const char* v = ::getenv("TMPDIR"))
    env = std::string(v);
  TmpDirWatch::Options o;
  o.dir = job_tmp_dir(env);
  o.proc_root = opt_.proc_root;
  o.keep_leaks = opt_.contain.keep_leaks;
  if (!opt_.out_dir.empty()) o.logs_dir = opt_.out_dir + "/logs";
  if (Status st = tmp_.start(o); !st) {
    add(obs::harness_failure(now(), HarnessPart::TmpDir, st.error().what));
    return;
  }
  tmp_timer_ = std::make_unique<asio::steady_timer>(ctx_);
  schedule_tmp_poll();
}

void Supervisor::schedule_tmp_poll() {
  // Often enough to see the holder of residue that lives a few tens of ms;
  // an idle poll is one read() of an inotify queue.
  tmp_timer_->expires_after(std::chrono::milliseconds(50));
  tmp_timer_->async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    tmp_.poll(now(), job_lookup());
    schedule_tmp_poll();
  });
}

JobLookup Supervisor::job_lookup() { return tracker_lookup(tracker_, proc_, run_id_); }

void Supervisor::finish_tmp() {
  if (tmp_timer_) tmp_timer_->cancel();
  for (auto& o : tmp_.finish(now(), job_lookup())) add(std::move(o));
}

}  // namespace

std::uint64_t ignored_signals_now() {
  std::uint64_t mask = 0;
  for (int sig = 1; sig < 65; ++sig) {
    struct sigaction sa{};
    if (::sigaction(sig, nullptr, &sa) == 0 && sa.sa_handler == SIG_IGN)
      mask |= std::uint64_t(1) << (sig - 1);
  }
  return mask;
}

Expected<Timeline> supervise(const Scenario& scenario, const SupervisorOptions& options) {
  Supervisor s(scenario, options);
  return s.run();
}

}  // namespace aftermath
