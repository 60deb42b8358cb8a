#include "harness/supervise/supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio.hpp>
#include "harness/supervise/bp2.h"
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <set>

#include "harness/check/device_checks.h"
#include "harness/inject/cgroup.h"
#include "harness/inject/device_fault.h"
#include "harness/inject/oom.h"
#include "harness/inject/select.h"
#include "harness/observe/device_observer.h"
#include "harness/observe/diagnose.h"
#include "harness/observe/kmsg.h"
#include "harness/observe/proc.h"
#include "harness/observe/proc_events.h"
#include "harness/observe/roles.h"
#include "harness/observe/shm.h"
#include "harness/observe/shm_held.h"
#include "harness/supervise/event_socket.h"
#include "harness/os/pidfd.h"
#include "harness/supervise/reaper_protocol.h"
#include "harness/supervise/tmp_watch.h"

namespace aftermath {

namespace asio = boost::asio;
namespace bp2 = boost::process::v2;

namespace {

// Hands two pipe ends to the reaper across exec (their fd numbers go on its
// command line), arms its parent-death signal, and checks the race in which
// we died before it was armed. Runs between fork and exec: no allocation, no
// locks, async-signal-safe calls only.
struct ReaperSetup {
  int keep_a;
  int keep_b;
  pid_t parent;
  const char* const* envp;  // the job's environment, NULL-terminated
  template <typename Launcher>
  bp2::error_code on_setup(Launcher& l, const std::filesystem::path&, const char* const*) {
    l.env = envp;
    l.fd_whitelist.push_back(keep_a);
    l.fd_whitelist.push_back(keep_b);
    return {};
  }
  template <typename Launcher>
  bp2::error_code on_exec_setup(Launcher&, const std::filesystem::path&, const char* const*&) {
    ::fcntl(keep_a, F_SETFD, 0);
    ::fcntl(keep_b, F_SETFD, 0);
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent)
      return bp2::error_code(ESRCH, bp2::system_category());
    return {};
  }
};

Role role_by_rule(const std::string& comm, const std::string& cmdline, bool is_top) {
  if (is_top) return Role::Launcher;
  if (comm == "torch_shm_manag" || cmdline.find("torch_shm_manager") != std::string::npos)
    return Role::Helper;
  return Role::Unknown;
}

std::string tail_of_file(const std::string& path, size_t max_bytes) {
  auto text = read_small_file(path);
  if (!text) return {};
  if (text->size() > max_bytes) return text->substr(text->size() - max_bytes);
  return *text;
}

struct Tracked {
  int pid = 0;
  std::uint64_t starttime = 0;
  int ppid = 0;
  char state = 0;
  int depth = 0;  // current depth below the top's level (top: 0)
  int inner_pid = 0;
  Role role = Role::Unknown;
  int rank = -1;
  int worker = -1;
  int first_ppid = 0;
  Nanos seen_at = 0;
  bool announced = false;    // it said who it is: no inference over that
  bool role_final = false;   // inferred, and no later evidence can change it
  bool env_read = false;     // RANK read from its environment (again after an exec)
  std::optional<int> env_rank;
  std::string comm;     // as last read; a change means an exec (or a rename)
  std::string cmdline;
  bool exited = false;
  bool gone = false;
  UniqueFd pidfd;
  std::unique_ptr<asio::posix::stream_descriptor> watch;
};

class Supervisor {
 public:
  Supervisor(const Scenario& sc, const SupervisorOptions& opt)
      : sc_(sc), opt_(opt), reader_(opt.proc_root), timer_(ctx_), fault_timer_(ctx_) {
    // Forks, execs and renames pushed by the kernel, where it lets us listen
    // (root in the initial namespaces) and /proc is the host's; else the
    // tick polls /proc/loadavg. AFTERMATH_PROC_EVENTS=0 forces the fallback.
    const char* pe = ::getenv("AFTERMATH_PROC_EVENTS");
    if (opt.proc_root == "/proc" && !(pe && std::string(pe) == "0"))
      proc_events_ = ProcEvents::open();
  }

  Timeline run();

 private:
  Nanos now() const { return monotonic_now() - t0_; }
  void mark_progress() {
    last_progress_ = now();
    cpu_since_progress_ = 0;
  }
  void add(Observation o) {
    switch (o.kind) {  // what counts as the job still changing (the settle's quiet rule)
      case ObsKind::ProcStart: case ObsKind::ProcExit: case ObsKind::ProcGone:
      case ObsKind::ProcParent: case ObsKind::ProcState: case ObsKind::ProcExec:
      case ObsKind::ShmAdd: case ObsKind::ShmRemove: case ObsKind::ShmResize:
      case ObsKind::Event: case ObsKind::Point:
        last_change_ = now();
        if (o.kind != ObsKind::ProcState && o.kind != ObsKind::ProcParent && o.kind != ObsKind::ShmResize)
          mark_progress();
        break;
      default:
        break;
    }
    tl_.add(std::move(o));
  }
  void phase(const std::string& name) {
    phase_ = name;
    add(obs::phase(now(), name));
    report_status(true);
  }

  void launch();
  void schedule_sample();
  void tick();        // every sample_interval: sample() when anything may have changed
  void sample();      // walk the job's tree and /dev/shm
  void sample_shm();  // /dev/shm alone
  void track_new(int pid, const ProcStat& st, int depth);
  void sample_new();        // stat only the processes born since the last look
  void adopt(std::map<int, std::pair<ProcStat, int>> fresh);  // newcomers -> track_new
  std::map<int, int> known_levels() const;  // tracked pids -> depth below the reaper
  void refresh_commands();  // re-read comm and cmdline of the processes in execd_
  // Infers the role of a process that did not announce one (observe/roles.h);
  // records a change as a RoleInferred observation.
  void classify(Tracked& tr);
  void classify_pending();  // look again at the young ones whose role is not final
  std::map<int, int> refresh_tracked();  // re-stat every tracked process; known_levels() after
  void watch_exit(Tracked& tr);  // pidfd (opened here if needed) -> ProcExit on the loop
  void on_pidfd(int pid);
  void read_events();
  void handle(const reaper::Record& r);
  int host_pid_for(int reaper_pid) const;
  void teardown();
  void signal_live(int sig, const char* why);
  void finish_shm();
  // Shared memory each live job process still maps or holds (named, unlinked
  // or memfd): when the top exits (what orphans keep) and when the teardown
  // begins (what the teardown, not the job, ends).
  void record_shm_held();
  void report_status(bool force);
  // Points and faults.
  void watch_events();
  void handle_message(const EventSocket::Message& m);
  void mark_phase_event(const std::string& name);
  std::vector<JobProcess> job_view() const;
  void arm_next_fault();
  void post_fire(size_t index);
  std::string fire(size_t index, int self_pid, const std::string& point, long long hit);
  void retry_waiting_fault();  // a fault waiting for its target: fire it once one is there
  void close_unfired_faults();  // say why each fault that never acted did not
  void diagnose_hang();
  void settle_fault_effects();
  // The device side: baseline before launch, samples on their own timer,
  // release watched after teardown, holders and probe at the end.
  JobRef job_ref() const;
  void device_start();
  void schedule_device_sample();
  bool device_at_baseline() const;
  void device_finish();
  // The job's temp dir (tmp_watch.h): a baseline before launch, new residue
  // attributed on its own timer while the job runs, leftovers after teardown.
  void tmp_start();
  void schedule_tmp_poll();
  void finish_tmp();
  // Runs the loop until pred() or the deadline (absolute, in run time).
  template <typename Pred>
  bool pump(Nanos deadline, Pred pred);
  int live_count() const;     // not yet exited
  int present_count() const;  // not yet reaped (zombies included)
  bool shm_at_baseline() const;
  bool interrupted() const { return opt_.interrupted && *opt_.interrupted; }

  const Scenario& sc_;
  const SupervisorOptions& opt_;
  ProcReader reader_;
  asio::io_context ctx_;
  asio::steady_timer timer_;
  Timeline tl_;
  Nanos t0_ = 0;
  bool tearing_down_ = false;
  Nanos last_change_ = 0;   // the last observation that shows the job changing
  // no_hang's stall rule: progress is CPU time, a start or an exit, an event
  // or a point; the window comes from the scenario (0: off).
  Nanos stall_window_ = 0;
  Nanos last_progress_ = 0;
  std::int64_t cpu_since_progress_ = 0;  // clock ticks consumed since last_progress_
  std::map<int, std::uint64_t> cpu_seen_;  // pid -> utime+stime at the last read
  bool stalled() const { return stall_window_ > 0 && top_started_ && now() - last_progress_ >= stall_window_; }
  std::pair<std::int64_t, std::int64_t> last_sample_{-1, -1};  // (processes, shm bytes)
  std::int64_t last_rss_ = -1;      // the job's RSS at the last memory observation
  std::int64_t last_rss_procs_ = -1;
  bool dirty_ = true;       // something happened since the last walk
  int quiet_ticks_ = 0;     // ticks since the last walk
  int last_pid_seen_ = -1;  // /proc/loadavg's last pid at the last tick
  std::unique_ptr<ProcEvents> proc_events_;  // null: forks seen through /proc/loadavg
  std::vector<int> born_;   // job processes announced by fork events, not yet looked at
  std::set<int> execd_;     // job processes that exec'd or renamed themselves since
  std::map<int, int> exit_status_;  // pid -> wait status, from the kernel's exit events
  void fill_exit_statuses();  // outcomes the reaper never saw, from exit_status_
  std::set<int> foreign_;   // pids seen outside the job (listing without children files)
  bool lost_events_ = false;  // the event stream overflowed: the next refresh walks
  int refreshes_ = 0;
  ShmWatch shm_watch_;      // /dev/shm changes by name, where inotify works
  std::int64_t shm_extra_ = 0;  // bytes in /dev/shm entries not in the baseline
  int shm_fresh_ = -1;          // those entries; -1: not counted yet
  std::string phase_;
  Nanos last_status_ = -kSecond;

  std::unique_ptr<DeviceObserver> dev_;
  DeviceMemoryParams device_memory_params_;  // the scenario's device_memory_released params
  std::unique_ptr<asio::steady_timer> dev_timer_;

  std::unique_ptr<bp2::process> reaper_;
  int reaper_pid_ = 0;   // the supervisor's child
  int init_pid_ = 0;     // pid 1 of the namespace (== reaper_pid_ as a subreaper)
  bool pid_ns_ = false;
  UniqueFd lifeline_;    // our end; closing it ends the reaper
  std::unique_ptr<asio::posix::stream_descriptor> events_;
  bool events_eof_ = false;  // the reaper's records are all read
  std::array<char, 4096> ev_buf_{};
  std::string ev_pending_;

  std::map<int, Tracked> procs_;         // host pid -> tracked (current incarnation)
  std::map<int, int> inner_to_host_;     // namespace pid -> host pid
  bool top_started_ = false;
  bool top_exited_ = false;
  bool exec_failed_ = false;
  int top_inner_ = 0;
  EventSocket sock_;
  std::unique_ptr<asio::posix::stream_descriptor> sock_watch_;
  asio::steady_timer fault_timer_;
  std::vector<std::unique_ptr<asio::steady_timer>> resume_timers_;
  // Device OOM: why it cannot act here (nullopt: it can), the interposer's
  // per-process arm folder, and the hogs holding device memory until teardown.
  std::optional<std::optional<std::string>> device_oom_why_;
  std::string cuda_arm_dir_;
  std::vector<std::unique_ptr<DeviceHog>> hogs_;
  // Host OOM by cgroup: where fault cgroups go (found at the first such
  // fault), and each cgroup made, with its fault and target, until teardown.
  std::optional<CgroupHomeOrWhy> cgroup_home_;
  struct FaultCgroup {
    size_t fault = 0;
    int pid = 0;
    long long kills = 0;
    std::unique_ptr<MemoryCgroup> cg;
  };
  std::vector<FaultCgroup> cgroups_;
  KmsgTail kmsg_;  // the kernel's words on each OOM kill (opened at the first cgroup fault)
  std::vector<KmsgRecord> kmsg_seen_;
  std::string oom_by_cgroup(size_t index, const FaultSpec& f, const std::vector<int>& pids,
                            FaultRecord& rec);
  void watch_oom_kills();  // new kills in the fault cgroups -> OomKill observations
  void close_cgroups();
  std::string tools_dir() const;
  const std::optional<std::string>& device_oom_unavailable_here();
  size_t next_fault_ = 0;
  bool in_fire_ = false;  // fire() samples, and sampling retries a waiting fault
  std::map<std::string, long long> point_hits_;  // point name -> hits seen (for "never reached")
  Nanos fault_base_ = 0;  // when the previous fault fired (the top's start for the first)
  bool steady_seen_ = false;
  bool shutdown_seen_ = false;
  std::string shm_dir_;      // where the job's /dev/shm is seen from here
  bool shm_final_ = false;   // the leftovers are recorded; scans stop (a private tmpfs vanishes)
  ShmTable shm_baseline_;
  ShmTable shm_now_;
  TmpDirWatch tmp_;
  std::unique_ptr<asio::steady_timer> tmp_timer_;
};

void Supervisor::report_status(bool force) {
  if (!opt_.on_status) return;
  Nanos t = now();
  if (!force && t - last_status_ < 200 * kMilli) return;
  last_status_ = t;
  opt_.on_status(LiveStatus{t, live_count(), phase_});
}

int Supervisor::live_count() const {
  int n = 0;
  for (const auto& [pid, p] : procs_)
    if (!p.exited && !p.gone) ++n;
  return n;
}

int Supervisor::present_count() const {
  int n = 0;
  for (const auto& [pid, p] : procs_)
    if (!p.gone) ++n;
  return n;
}

bool Supervisor::shm_at_baseline() const {
  for (const auto& [name, e] : shm_now_)
    if (!shm_baseline_.count(name)) return false;
  return true;
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

void Supervisor::launch() {
  int life[2], ev[2];
  if (::pipe2(life, O_CLOEXEC) != 0 || ::pipe2(ev, O_CLOEXEC) != 0)
    throw SetupError(std::string("pipe: ") + std::strerror(errno));
  UniqueFd life_r(life[0]), ev_w(ev[1]);
  lifeline_ = UniqueFd(life[1]);
  events_ = std::make_unique<asio::posix::stream_descriptor>(ctx_, ev[0]);

  if (::access(opt_.reaper_path.c_str(), X_OK) != 0)
    throw SetupError("reaper not found or not executable: " + opt_.reaper_path);

  std::vector<std::string> args = {"--events",  std::to_string(ev_w.get()),
                                   "--lifeline", std::to_string(life_r.get()),
                                   "--stdout",   opt_.out_dir + "/stdout.log",
                                   "--stderr",   opt_.out_dir + "/stderr.log",
                                   "--contain",  opt_.containment,
                                   "--shm",      opt_.shm};
  {
    char mask[32];
    std::snprintf(mask, sizeof mask, "%llx",
                  static_cast<unsigned long long>(opt_.ignored_signals.value_or(ignored_signals_now())));
    args.push_back("--ignored-signals");
    args.push_back(mask);
  }
  if (!sc_.job.cwd.empty()) {
    args.push_back("--cwd");
    args.push_back(sc_.job.cwd);
  }
  args.push_back("--");
  for (const auto& a : sc_.job.argv) args.push_back(a);

  // The job's environment: ours, with the scenario's entries on top.
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : sc_.job.env) env[k] = v;
  env["AFTERMATH_EVENTS"] = sock_.address();
  std::string armed = armed_points(sc_.faults);
  if (!armed.empty()) env["AFTERMATH_POINTS"] = armed;
  // Device OOM through the interposer: preloaded into the whole job, armed
  // per process at the trigger (a file per target under an arm folder).
  bool interposer = std::any_of(sc_.faults.begin(), sc_.faults.end(), [](const FaultSpec& f) {
    return f.action == "device_oom" && f.mechanism == "interposer";
  });
  if (interposer && !device_oom_unavailable_here()) {
    char tmpl[] = "/tmp/aftermath-cudafail-XXXXXX";
    if (::mkdtemp(tmpl)) {
      cuda_arm_dir_ = tmpl;
      auto it = env.find("LD_PRELOAD");
      for (auto& [k, v] : cuda_fail_env(tools_dir() + "/libaftermath-cudafail.so", std::nullopt,
                                        cuda_arm_dir_ + "/",
                                        it == env.end() ? std::string() : it->second))
        env[k] = v;
    }
  }
  std::vector<std::string> env_list;
  for (const auto& [k, v] : env) env_list.push_back(k + "=" + v);
  std::vector<const char*> envp;
  for (const auto& e : env_list) envp.push_back(e.c_str());
  envp.push_back(nullptr);

  ReaperSetup setup{ev_w.get(), life_r.get(), ::getpid(), envp.data()};
  bp2::error_code ec;
  auto proc = bp2::default_process_launcher()(ctx_, ec, opt_.reaper_path, args,
                                              bp2::process_stdio{nullptr, {}, {}}, setup);
  if (ec) throw SetupError("cannot start " + opt_.reaper_path + ": " + ec.message());
  reaper_ = std::make_unique<bp2::process>(std::move(proc));
  reaper_pid_ = reaper_->id();
  // Our copies of the child's ends must go, or EOF would never come.
  (void)life_r.close();
  (void)ev_w.close();
  read_events();
}

void Supervisor::read_events() {
  events_->async_read_some(asio::buffer(ev_buf_), [this](boost::system::error_code ec, size_t n) {
    if (ec) {  // EOF: the reaper is gone, and every record it wrote was read
      events_eof_ = true;
      return;
    }
    ev_pending_.append(ev_buf_.data(), n);
    while (ev_pending_.size() >= sizeof(reaper::Record)) {
      reaper::Record r;
      std::memcpy(&r, ev_pending_.data(), sizeof r);
      ev_pending_.erase(0, sizeof r);
      handle(r);
    }
    read_events();
  });
}

int Supervisor::host_pid_for(int reaper_pid) const {
  if (!pid_ns_) return reaper_pid;
  auto it = inner_to_host_.find(reaper_pid);
  return it == inner_to_host_.end() ? 0 : it->second;
}

void Supervisor::handle(const reaper::Record& r) {
  Nanos t = r.t_ns - t0_;
  switch (r.type) {
    case reaper::Msg::Mode: {
      auto mode = static_cast<reaper::Containment>(r.a);
      // Decide where /dev/shm is watched, and what its baseline is: a private
      // tmpfs starts empty; the host's is what we saw before the launch.
      if (r.pid == 1) {
        shm_dir_ = "/proc/" + std::to_string(reaper_pid_) + "/root/dev/shm";
        shm_baseline_.clear();
        tl_.facts.shm = "private";
      } else {
        tl_.facts.shm = "host";
      }
      shm_now_ = shm_baseline_;
      for (const auto& [name, e] : shm_baseline_) add(obs::shm_add(0, name, e.bytes, true));
      pid_ns_ = mode != reaper::Containment::Subreaper;
      tl_.facts.containment = mode == reaper::Containment::PidNamespace       ? "pid-namespace"
                              : mode == reaper::Containment::UserPidNamespace ? "user+pid-namespace"
                                                                              : "subreaper";
      if (!pid_ns_) {
        std::string why = r.b ? std::string("no PID namespace (") + std::strerror(r.b) + ")"
                              : std::string("subreaper requested");
        tl_.facts.containment_note =
            why + ": the job is held by a subreaper, which kills it if the harness dies; a job "
                  "process can outlive the run only if the reaper itself is SIGKILLed";
      }
      break;
    }
    case reaper::Msg::ProcView:
      // In a PID namespace the job should see its own /proc; where it cannot,
      // /proc names host pids that kill() in the job does not know (ESRCH).
      if (r.pid != 1) {
        const char* name = r.a ? ::strerrorname_np(r.a) : nullptr;
        std::string err = name ? name : r.a ? std::strerror(r.a) : "";
        auto step = static_cast<reaper::ProcViewStep>(r.b);
        std::string why = step == reaper::ProcViewStep::MountNamespace
                              ? "no mount namespace of its own: " + err
                          : step == reaper::ProcViewStep::ProcMount
                              ? "mount of a procfs for its PID namespace refused: " + err
                              : std::string("the reaper was told to leave /proc alone");
        std::string& note = tl_.facts.containment_note;
        note += (note.empty() ? "" : "; ") + std::string("the job sees the host's /proc (") + why + ")";
      }
      break;
    case reaper::Msg::InitPid:
      init_pid_ = r.pid;
      tl_.facts.init_pid = r.pid;
      break;
    case reaper::Msg::TopStarted: {
      top_started_ = true;
      tl_.facts.top_pid = r.pid;
      top_inner_ = r.a;
      inner_to_host_[r.a] = r.pid;
      // Its start is known exactly; comm and start time come with the next scan.
      std::string cmd;
      for (const auto& a : sc_.job.argv) cmd += (cmd.empty() ? "" : " ") + a;
      std::string comm = std::filesystem::path(sc_.job.argv.at(0)).filename().string().substr(0, 15);
      add(obs::proc_start(t, r.pid, init_pid_, comm, cmd, Role::Launcher, 0, 0, 'R'));
      Tracked tr;
      tr.pid = r.pid;
      tr.ppid = init_pid_;
      tr.state = 'R';
      tr.role = Role::Launcher;
      tr.cmdline = cmd;
      if (r.a != r.pid) tr.inner_pid = r.a;  // its pid in the job's namespace
      // Not yet reaped (only the reaper reaps it, and it reports that), so
      // the pid cannot have been reused: the pidfd names the top.
      watch_exit(tr);
      procs_[r.pid] = std::move(tr);
      sample();
      fault_base_ = t;
      arm_next_fault();
      break;
    }
    case reaper::Msg::ExecFailed:
      exec_failed_ = true;
      add(obs::note(t, std::string("the job could not be started: ") + std::strerror(r.a)));
      break;
    case reaper::Msg::TopExited:
    case reaper::Msg::Reaped: {
      bool top = r.type == reaper::Msg::TopExited;
      int host = top ? tl_.facts.top_pid : host_pid_for(r.pid);
      Outcome out = Outcome::from_wait_status(r.a);
      if (top) {
        tl_.facts.top_outcome = out;
        top_exited_ = true;
        mark_phase_event("shutdown");  // the job is ending: phase-triggered faults may fire
        if (!procs_.count(host) && host) {
          // Too short-lived for any sample: its life is still known exactly.
          add(obs::proc_start(t, host, init_pid_, "", sc_.job.argv.empty() ? "" : sc_.job.argv[0],
                              Role::Launcher, 0));
          Tracked tr;
          tr.pid = host;
          procs_.emplace(host, std::move(tr));
        }
      }
      auto it = procs_.find(host);
      if (host == 0 || it == procs_.end()) {
        add(obs::note(t, "reaped an unobserved process (pid " + std::to_string(r.pid) + " in the job): " +
                             out.to_string()));
        break;
      }
      add(obs::proc_exit(t, host, out));
      it->second.exited = true;
      dirty_ = true;
      // Reaped is gone, at the reaper's exact time, even if a sample that ran
      // before this record arrived already saw it gone (the timeline is
      // sorted by time at the end, so the earlier stamp wins).
      it->second.gone = true;
      add(obs::proc_gone(t, host));
      break;
    }
  }
}

void Supervisor::schedule_sample() {
  timer_.expires_after(std::chrono::nanoseconds(sc_.sample_interval));
  timer_.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    tick();
    schedule_sample();
  });
}

void Supervisor::track_new(int pid, const ProcStat& st, int depth) {
  Tracked tr;
  tr.pid = pid;
  tr.starttime = st.starttime;
  tr.ppid = st.ppid;
  tr.state = st.state;
  tr.depth = depth;
  tr.comm = st.comm;
  execd_.erase(pid);  // read fresh here
  std::string cmd = reader_.cmdline(pid);
  bool is_top = pid == tl_.facts.top_pid;
  tr.role = role_by_rule(st.comm, cmd, is_top);
  tr.cmdline = cmd;
  add(obs::proc_start(now(), pid, st.ppid, st.comm, cmd, tr.role, depth,
                      static_cast<std::int64_t>(st.starttime), st.state));
  if (pid_ns_) {
    auto ns = reader_.nspid(pid);
    if (!ns.empty()) {
      tr.inner_pid = ns.back();
      inner_to_host_[ns.back()] = pid;
    }
  }
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
  tr.first_ppid = st.ppid;
  tr.seen_at = now();
  auto& stored = procs_[pid] = std::move(tr);
  classify(stored);
}

void Supervisor::classify(Tracked& tr) {
  if (tr.announced || tr.role_final || tr.exited || tr.gone) return;
  RoleEvidence ev;
  ev.comm = tr.comm;
  ev.cmdline = tr.cmdline;
  ev.is_top = tr.pid == tl_.facts.top_pid;
  if (!tr.env_read) {
    // The environment it was exec'd with; read once per exec.
    tr.env_rank = parse_rank_value(reader_.environ_value(tr.pid, "RANK").value_or(""));
    tr.env_read = true;
  }
  ev.env_rank = tr.env_rank;
  ev.caught = reader_.caught_signals(tr.pid);
  RoleParent parent;
  const RoleParent* pp = nullptr;
  if (auto it = procs_.find(tr.first_ppid); it != procs_.end() && it->second.starttime <= tr.starttime) {
    parent.role = it->second.role;
    parent.rank = it->second.rank;
    parent.env_rank = it->second.env_rank;
    parent.cmdline = it->second.cmdline;
    parent.is_top = it->first == tl_.facts.top_pid;
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
    worker = earlier_siblings([](const Tracked& s) {
      return s.role != Role::Helper && s.role != Role::Launcher && s.role != Role::Rank;
    });
  if (inf.rank_by_spawn_order)
    rank = earlier_siblings([](const Tracked& s) {
      return s.role != Role::Helper && is_spawn_child(s.cmdline);
    });
  if (inf.role == tr.role && rank == tr.rank && worker == tr.worker) return;
  tr.role = inf.role;
  tr.rank = rank;
  tr.worker = worker;
  add(obs::role_inferred(now(), tr.pid, tr.role, rank, worker, inf.why));
  retry_waiting_fault();  // a fault may wait for exactly this process
}

void Supervisor::classify_pending() {
  // A worker shows its handlers once it reaches its loop, seconds after its
  // birth under load; after 30 s a process that showed nothing stays as is.
  constexpr Nanos kLookFor = 30 * kSecond;
  Nanos t = now();
  for (auto& [pid, tr] : procs_) {
    if (tr.announced || tr.role_final || tr.exited || tr.gone || t - tr.seen_at >= kLookFor) continue;
    // An exec that changed neither comm nor anything announced (python3 ->
    // python3, without process events) shows in the command line only.
    if (std::string cmd = reader_.cmdline(pid); !cmd.empty() && cmd != tr.cmdline) {
      execd_.insert(pid);
      continue;  // refresh_commands() re-reads and classifies it
    }
    classify(tr);
  }
}

void Supervisor::watch_exit(Tracked& tr) {
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

void Supervisor::on_pidfd(int pid) {
  auto it = procs_.find(pid);
  if (it == procs_.end() || it->second.exited) return;
  it->second.exited = true;
  dirty_ = true;  // it may be a zombie now, its children orphans
  if (!cgroups_.empty()) watch_oom_kills();  // the kill comes before the exit it causes
  add(obs::proc_exit(now(), pid, std::nullopt));
}

void Supervisor::tick() {
  // Most ticks of an idle job read nothing from /proc. What changes the tree
  // is announced: a fork of a job process by the kernel's process events (or,
  // without them, any fork on the machine: the last pid in /proc/loadavg
  // moved), an exit by its pidfd, a reap by the reaper, an unknown sender by
  // its message. A fork costs a look at the new pids only; the rest a full
  // refresh, as does every kStateRefresh-th tick, for the state changes
  // nothing announces (a stop, D).
  constexpr int kStateRefresh = 10;
  if (!cgroups_.empty()) watch_oom_kills();  // a kill in a fault cgroup (one small read each)
  bool forked = false;
  if (proc_events_) {
    auto in_job = [&](int pid) {
      if (pid == reaper_pid_ || pid == init_pid_) return true;
      auto it = procs_.find(pid);
      if (it != procs_.end()) return !it->second.gone;
      return std::find(born_.begin(), born_.end(), pid) != born_.end();
    };
    bool complete = proc_events_->drain([&](const ProcEvent& e) {
      if (e.pid != e.tgid) return;  // a thread's own event
      if (e.kind == ProcEvent::Kind::Fork) {
        if (in_job(e.parent_tgid)) born_.push_back(e.tgid);
      } else if (e.kind == ProcEvent::Kind::Exec || e.kind == ProcEvent::Kind::Comm) {
        if (procs_.count(e.tgid)) execd_.insert(e.tgid);
      } else if (e.kind == ProcEvent::Kind::Exit) {
        // The status its parent reaps: the only way to know it for a process
        // reaped by a parent of the job (a DataLoader reaping its workers).
        if (procs_.count(e.tgid)) exit_status_[e.tgid] = e.exit_status;
      }
    });
    if (!complete) dirty_ = lost_events_ = true;  // events were lost: look at everything
    forked = !born_.empty();
  } else {
    auto lp = reader_.last_pid();
    forked = !lp || *lp != last_pid_seen_;
    if (lp) last_pid_seen_ = *lp;
  }
  if (dirty_ || ++quiet_ticks_ >= kStateRefresh) {
    // With process events, births are announced: a refresh re-reads the
    // tracked processes and the announced ones. The table (or the children
    // files) is read only every kDiscoverEvery-th refresh (~5 s), as a
    // safety net.
    constexpr int kDiscoverEvery = 25;
    if (proc_events_ && !lost_events_ && ++refreshes_ % kDiscoverEvery != 0) {
      dirty_ = false;
      quiet_ticks_ = 0;
      refresh_tracked();
      if (!born_.empty()) sample_new();
      if (!execd_.empty()) refresh_commands();
      sample_shm();
      report_status(false);
    } else {
      lost_events_ = false;
      sample();
    }
    return;
  }
  if (forked) sample_new();
  if (!execd_.empty()) refresh_commands();
  sample_shm();
  report_status(false);
}

std::map<int, int> Supervisor::known_levels() const {
  // Levels below reaper_pid_: (pid namespace) init 1, top 2; (subreaper) top 1.
  int base = pid_ns_ ? 2 : 1;
  std::map<int, int> known;
  if (init_pid_ && init_pid_ != reaper_pid_) known[init_pid_] = 1;
  for (const auto& [pid, tr] : procs_)
    if (!tr.gone) known[pid] = tr.depth + base;
  return known;
}

void Supervisor::adopt(std::map<int, std::pair<ProcStat, int>> fresh) {
  int base = pid_ns_ ? 2 : 1;  // depth of the top process below reaper_pid_
  for (auto& [pid, entry] : fresh) {
    if (!top_started_) break;  // the reaper's own fork, before exec
    auto it = procs_.find(pid);
    if (it != procs_.end()) {
      if (!it->second.gone && it->second.starttime == entry.first.starttime) continue;
      // The pid was reused inside the job: the old one is gone.
      if (!it->second.gone) {
        if (!it->second.exited) add(obs::proc_exit(now(), pid, std::nullopt));
        add(obs::proc_gone(now(), pid));
      }
      procs_.erase(it);
    }
    track_new(pid, entry.first, std::max(0, entry.second - base));
  }
}

void Supervisor::sample_new() {
  std::vector<int> born;
  born.swap(born_);
  adopt(reader_.newcomers(reaper_pid_, known_levels(), &foreign_, proc_events_ ? &born : nullptr));
}

void Supervisor::refresh_commands() {
  std::set<int> pids;
  pids.swap(execd_);
  for (int pid : pids) {
    auto it = procs_.find(pid);
    if (it == procs_.end() || it->second.gone) continue;
    Tracked& tr = it->second;
    auto st = reader_.stat(pid);
    if (!st || (tr.starttime && st->starttime != tr.starttime)) continue;  // the next walk says
    std::string cmd = reader_.cmdline(pid);
    tr.comm = st->comm;
    if (cmd.empty() || cmd == tr.cmdline) continue;  // a zombie has none; a rename keeps it
    tr.cmdline = cmd;
    // Seen between fork and exec, it carried its parent's command line (and
    // environment): role rules and match: targets need the new one.
    if (tr.role == Role::Unknown) tr.role = role_by_rule(tr.comm, cmd, pid == tl_.facts.top_pid);
    add(obs::proc_exec(now(), pid, tr.comm, cmd, tr.role));
    tr.env_read = false;
    if (!tr.announced) tr.role_final = false;
    classify(tr);
  }
}

void Supervisor::sample() {
  dirty_ = false;
  quiet_ticks_ = 0;
  born_.clear();  // the walk below finds them
  auto known = refresh_tracked();
  // Then the processes born since, from the children files or the table
  // (never from events: this is the walk that does not depend on them).
  adopt(reader_.newcomers(reaper_pid_, known, &foreign_));
  if (!execd_.empty()) refresh_commands();
  sample_shm();
  report_status(false);
}

std::map<int, int> Supervisor::refresh_tracked() {
  int base = pid_ns_ ? 2 : 1;  // depth of the top process below reaper_pid_
  // Every tracked process, re-read: gone, state, parent, name. The reads
  // cost the job's size, never the machine's.
  auto known = known_levels();
  std::int64_t rss_pages = 0, summed = 0;
  for (auto& [pid, tr] : procs_) {
    if (tr.gone) continue;
    auto st = reader_.stat(pid);
    if (st && st->state != 'Z' && (!tr.starttime || st->starttime == tr.starttime)) {
      rss_pages += st->rss_pages;
      ++summed;
      std::uint64_t cpu = st->utime + st->stime;
      auto [it, fresh] = cpu_seen_.try_emplace(pid, cpu);
      if (!fresh && cpu > it->second) cpu_since_progress_ += static_cast<std::int64_t>(cpu - it->second);
      it->second = cpu;
    }
    if (!st || (tr.starttime && st->starttime != tr.starttime)) {
      if (!tr.exited) {
        tr.exited = true;
        add(obs::proc_exit(now(), pid, std::nullopt));
      }
      tr.gone = true;
      add(obs::proc_gone(now(), pid));
      known.erase(pid);
      continue;
    }
    if (tr.starttime == 0) tr.starttime = st->starttime;
    if (st->ppid != tr.ppid) {
      tr.ppid = st->ppid;
      add(obs::proc_parent(now(), pid, st->ppid));
      int parent = st->ppid == reaper_pid_ ? 0 : known.count(st->ppid) ? known[st->ppid] : -1;
      if (parent >= 0) {
        tr.depth = std::max(0, parent + 1 - base);
        known[pid] = tr.depth + base;
      }
    }
    if (st->state != tr.state) {
      tr.state = st->state;
      add(obs::proc_state(now(), pid, st->state));
    }
    if (tr.comm.empty()) {
      tr.comm = st->comm;
    } else if (st->comm != tr.comm) {
      execd_.insert(pid);  // exec'd (or renamed) since: read its command line again
    }
  }
  classify_pending();
  // CPU time is progress once it adds up to 1% of a core over the stall
  // window: a hung job's housekeeping threads (a watchdog's periodic wake)
  // stay below that.
  static const long kTicks = ::sysconf(_SC_CLK_TCK);
  if (stall_window_ > 0 && cpu_since_progress_ * kSecond / kTicks >= stall_window_ / 100) mark_progress();
  // The job's resident memory, from the same reads: recorded when it moved
  // by 1 MiB or more (RSS counts shared pages once per process: an upper
  // bound on what the job holds, and what an OOM killer weighs).
  static const std::int64_t kPage = ::sysconf(_SC_PAGESIZE);
  std::int64_t rss = rss_pages * kPage;
  if (last_rss_ < 0 || std::llabs(rss - last_rss_) >= (1 << 20) || (summed == 0) != (last_rss_procs_ == 0)) {
    add(obs::memory(now(), rss, summed));
    last_rss_ = rss;
    last_rss_procs_ = summed;
  }
  return known;
}

void Supervisor::sample_shm() {
  if (shm_final_) return;
  // inotify says which names changed, so an idle tick reads nothing and a
  // busy one only those; where it cannot (no watch, events lost), a scan.
  bool scan = false;
  if (shm_watch_.dir() != shm_dir_) {
    (void)shm_watch_.watch(shm_dir_);
    scan = true;
  }
  std::set<std::string> changed;
  if (!shm_watch_.poll(&changed)) scan = true;
  ShmDiff d;
  if (scan) {
    auto shm = scan_shm(shm_dir_);
    d = diff_shm(shm_now_, shm);
    shm_now_ = std::move(shm);
  } else {
    for (const auto& name : changed) {
      auto e = stat_shm(shm_dir_, name);
      auto it = shm_now_.find(name);
      if (e && it == shm_now_.end()) {
        d.added.push_back(*e);
        shm_now_.emplace(name, std::move(*e));
      } else if (e) {
        if (e->bytes != it->second.bytes) d.resized.push_back(*e);
        it->second = std::move(*e);
      } else if (it != shm_now_.end()) {
        d.removed.push_back(it->second);
        shm_now_.erase(it);
      }
    }
  }
  for (const auto& e : d.added) add(obs::shm_add(now(), e.name, e.bytes));
  for (const auto& e : d.resized) add(obs::shm_resize(now(), e.name, e.bytes));
  for (const auto& e : d.removed) add(obs::shm_remove(now(), e.name));

  // What the job added: recounted only when /dev/shm changed (the baseline
  // may hold thousands of entries).
  if (scan || !changed.empty() || shm_fresh_ < 0) {
    shm_extra_ = 0;
    shm_fresh_ = 0;
    for (const auto& [name, e] : shm_now_)
      if (!shm_baseline_.count(name)) {
        shm_extra_ += e.bytes;
        ++shm_fresh_;
      }
  }
  std::int64_t extra = shm_extra_;
  if (next_fault_ < sc_.faults.size() && !tearing_down_ &&
      sc_.faults[next_fault_].at.kind == TriggerSpec::Kind::When) {
    if (predicate_holds(sc_.faults[next_fault_].at.when, job_view(), shm_fresh_))
      post_fire(next_fault_);
  }
  retry_waiting_fault();
  int live = live_count();
  if (last_sample_.first != live || last_sample_.second != extra) {
    add(obs::sample(now(), live, extra));
    last_sample_ = {live, extra};
  }
}

void Supervisor::signal_live(int sig, const char* why) {
  // Children before parents: deepest first, so a parent cannot react to its
  // children's deaths (respawn, re-parent) before they are gone.
  std::vector<Tracked*> live;
  for (auto& [pid, tr] : procs_)
    if (!tr.exited && !tr.gone && tr.pidfd) live.push_back(&tr);
  std::stable_sort(live.begin(), live.end(),
                   [](const Tracked* a, const Tracked* b) { return a->depth > b->depth; });
  for (Tracked* tr : live) {
    if (!pidfd_signal(tr->pidfd.get(), sig)) add(obs::signal(now(), tr->pid, sig, why));
    if (sig == SIGTERM && (tr->state == 'T' || tr->state == 't'))
      (void)pidfd_signal(tr->pidfd.get(), SIGCONT);
  }
}

void Supervisor::teardown() {
  tearing_down_ = true;
  fault_timer_.cancel();
  for (auto& t : resume_timers_) t->cancel();
  phase("teardown");
  sample();
  record_shm_held();
  if (live_count() > 0) {
    signal_live(SIGTERM, "teardown");
    pump(now() + sc_.timeouts.teardown, [&] { return live_count() == 0; });
    sample();
    if (live_count() > 0) {
      signal_live(SIGKILL, "teardown: still alive after SIGTERM");
      pump(now() + 5 * kSecond, [&] { return live_count() == 0; });
    }
  }
  // The hogs hold device memory for as long as the job runs; not after.
  for (auto& h : hogs_) {
    auto out = h->stop();
    add(obs::note(now(), "aftermath-device-hog (pid " + std::to_string(h->pid()) + ") released " +
                             format_bytes(static_cast<std::int64_t>(h->held())) +
                             (out ? "" : "; it did not exit")));
  }
  hogs_.clear();
  if (!cuda_arm_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(cuda_arm_dir_, ec);
  }
  // Record the /dev/shm leftovers while the job's namespace (and with it a
  // private /dev/shm) still exists.
  finish_shm();
  // End the reaper: as pid 1 its exit kills whatever is left in the namespace
  // (including processes we never managed to observe).
  (void)lifeline_.close();
  bool reaper_done = false;
  reaper_->async_wait([&](boost::system::error_code, int) { reaper_done = true; });
  if (!pump(now() + 5 * kSecond, [&] { return reaper_done; })) {
    boost::system::error_code ec;
    reaper_->terminate(ec);
    pump(now() + 5 * kSecond, [&] { return reaper_done; });
  }
  // Its last records (the exit statuses of what it reaped at the end) may
  // still be in the pipe when its own exit is seen: read them to the end.
  pump(now() + kSecond, [&] { return events_eof_; });
  // The fault cgroups are empty now: the last kill counts, then away.
  close_cgroups();
  // Prove it: nothing we ever saw is still there.
  sample();
  for (const auto& [pid, tr] : procs_) {
    if (tr.gone) continue;
    auto st = reader_.stat(pid);
    if (st && st->starttime == tr.starttime)
      add(obs::note(now(), "teardown failed: pid " + std::to_string(pid) + " is still alive"));
  }
}

void Supervisor::record_shm_held() {
  for (const auto& [pid, tr] : procs_) {
    if (tr.exited || tr.gone) continue;
    for (const auto& h : shm_held_by(opt_.proc_root, pid)) {
      std::string how = h.mapped && h.open ? "mapped+fd" : h.mapped ? "mapped" : "fd";
      add(obs::shm_held(now(), pid, h.path, h.bytes, how, h.deleted));
    }
  }
}

void Supervisor::finish_shm() {
  sample();
  shm_final_ = true;
  bool priv = tl_.facts.shm == "private";
  std::error_code ec;
  std::string keep_dir = opt_.out_dir + "/leaked-shm";
  for (const auto& [name, e] : shm_now_) {
    if (shm_baseline_.count(name)) continue;
    auto path = std::filesystem::path(shm_dir_) / name;
    if (opt_.keep_leaks) {
      // A private tmpfs goes with the job: keep a copy for inspection. The
      // host's /dev/shm keeps the entry itself.
      if (priv) {
        std::filesystem::create_directories(keep_dir, ec);
        std::filesystem::copy(path, std::filesystem::path(keep_dir) / name,
                              std::filesystem::copy_options::recursive, ec);
        add(obs::note(now(), "kept a copy of leaked /dev/shm entry " + name + " in " + keep_dir));
      }
      continue;
    }
    if (!priv) {
      std::filesystem::remove_all(path, ec);
      if (ec) {
        add(obs::note(now(), "cannot remove leaked /dev/shm entry " + name + ": " + ec.message()));
        continue;
      }
    }
    // (private: discarded with the job's tmpfs when its namespace ends)
    add(obs::shm_reclaim(now(), name, e.bytes));
  }
}

void Supervisor::watch_events() {
  sock_watch_->async_wait(asio::posix::stream_descriptor::wait_read,
                          [this](boost::system::error_code ec) {
                            if (ec) return;
                            while (auto m = sock_.receive()) handle_message(*m);
                            watch_events();
                          });
}

std::vector<JobProcess> Supervisor::job_view() const {
  std::vector<JobProcess> v;
  for (const auto& [pid, tr] : procs_) {
    if (tr.gone) continue;
    JobProcess p;
    p.pid = pid;
    p.ppid = tr.ppid;
    p.role = tr.role;
    p.rank = tr.rank;
    p.worker = tr.worker;
    p.cmdline = tr.cmdline;
    p.state = tr.state;
    p.depth = tr.depth;
    p.is_top = pid == tl_.facts.top_pid;
    p.alive = !tr.exited;
    v.push_back(std::move(p));
  }
  return v;
}

void Supervisor::mark_phase_event(const std::string& name) {
  bool before_steady = steady_seen_, before_shutdown = shutdown_seen_;
  if (name == "step") steady_seen_ = true;
  if (name.rfind("shutdown", 0) == 0) shutdown_seen_ = true;
  if ((steady_seen_ && !before_steady) || (shutdown_seen_ && !before_shutdown)) arm_next_fault();
}

// Fixture messages are untrusted input: read fields by type, never throw.
std::string str_field(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}
long long int_field(const nlohmann::json& j, const char* key, long long def) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<long long>() : def;
}

void Supervisor::handle_message(const EventSocket::Message& m) {
  auto j = nlohmann::json::parse(m.text, nullptr, false);
  std::string type = j.is_object() ? str_field(j, "t") : "";
  auto answer = [&](const std::string& a) {
    if (type == "point") (void)sock_.reply(m, a);
  };
  if (type.empty()) {
    add(obs::note(now(), "malformed event from pid " + std::to_string(m.pid)));
    return;
  }
  if (!procs_.count(m.pid)) sample();  // born since the last scan?
  auto it = procs_.find(m.pid);
  if (it == procs_.end() || it->second.gone) {
    // Only the job's own processes steer the harness.
    add(obs::note(now(), "ignored a '" + type + "' message from pid " + std::to_string(m.pid) +
                             ", which is not part of the job"));
    answer("continue");
    return;
  }
  Tracked& tr = it->second;
  std::string name = str_field(j, "name");
  if (type == "announce") {
    tr.announced = true;
    tr.role = parse_role(str_field(j, "role")).value_or(Role::Unknown);
    tr.rank = static_cast<int>(int_field(j, "rank", -1));
    tr.worker = static_cast<int>(int_field(j, "worker", -1));
    add(obs::announce(now(), m.pid, tr.role, tr.rank, tr.worker,
                      j.contains("labels") ? j["labels"].dump() : "{}"));
    retry_waiting_fault();  // the target a fault waits for may have just said who it is
    return;
  }
  if (type == "event") {
    add(obs::event(now(), m.pid, name, j.contains("fields") ? j["fields"].dump() : "{}"));
    mark_phase_event(name);
    return;
  }
  if (type != "point") return;
  long long hit = int_field(j, "hit", 0);
  nlohmann::json labels = j.contains("labels") ? j["labels"] : nlohmann::json::object();
  add(obs::point(now(), m.pid, name, hit, labels.dump()));
  ++point_hits_[name];
  mark_phase_event(name);
  std::string reply = "continue";
  if (!tearing_down_ && next_fault_ < sc_.faults.size()) {
    JobProcess sender;
    sender.pid = m.pid;
    sender.role = tr.role;
    sender.rank = tr.rank;
    sender.worker = tr.worker;
    if (point_matches(sc_.faults[next_fault_].at, name, hit, labels, &sender))
      reply = fire(next_fault_, m.pid, name, hit);
  }
  answer(reply);
}

void Supervisor::arm_next_fault() {
  if (next_fault_ >= sc_.faults.size() || tearing_down_ || !top_started_) return;
  const FaultSpec& f = sc_.faults[next_fault_];
  switch (f.at.kind) {
    case TriggerSpec::Kind::After: {
      Nanos wait = std::max<Nanos>(0, fault_base_ + f.at.after - now());
      size_t idx = next_fault_;
      fault_timer_.expires_after(std::chrono::nanoseconds(wait));
      fault_timer_.async_wait([this, idx](boost::system::error_code ec) {
        if (!ec && next_fault_ == idx) fire(idx, 0, "", 0);
      });
      break;
    }
    case TriggerSpec::Kind::Phase:
      if (f.at.phase == "startup" || (f.at.phase == "steady" && steady_seen_) ||
          (f.at.phase == "shutdown" && shutdown_seen_))
        post_fire(next_fault_);
      break;
    case TriggerSpec::Kind::When:   // evaluated after every sample
    case TriggerSpec::Kind::Point:  // fired by the point's message
      break;
  }
}

void Supervisor::post_fire(size_t index) {
  asio::post(ctx_, [this, index] {
    if (next_fault_ == index) fire(index, 0, "", 0);
  });
}

void Supervisor::retry_waiting_fault() {
  if (in_fire_ || tearing_down_ || next_fault_ >= sc_.faults.size()) return;
  if (tl_.facts.faults[next_fault_].waiting_since) fire(next_fault_, 0, "", 0);
}

std::string Supervisor::fire(size_t index, int self_pid, const std::string& point, long long hit) {
  if (tearing_down_ || index != next_fault_ || in_fire_) return "continue";
  const FaultSpec& f = sc_.faults[index];
  FaultRecord& rec = tl_.facts.faults[index];
  in_fire_ = true;
  // A retry comes right after a sample; a first try takes a fresh view for
  // selectors and predicates.
  if (self_pid == 0 && !rec.waiting_since) sample();
  in_fire_ = false;
  auto view = job_view();
  std::vector<int> pids = select_targets(f.target, view, self_pid);
  // "After 10 ms, OOM rank 0" means rank 0 once it exists: a trigger that
  // comes before its target does waits for it (until the job ends, when the
  // fault is reported as never fired). A point's own process is there by
  // definition, so only triggers that are not points wait.
  if (pids.empty() && self_pid == 0 && f.target.kind != TargetSpec::Kind::Self && !top_exited_) {
    if (!rec.waiting_since) {
      rec.waiting_since = now();
      add(obs::note(now(), "fault " + std::to_string(index + 1) + " (" + f.action + " " +
                               f.target.text + "): its trigger came, no live job process matches '" +
                               f.target.text + "' yet: waiting for one"));
    }
    return "continue";
  }
  next_fault_ = index + 1;
  if (rec.waiting_since && !pids.empty())
    add(obs::note(now(), "fault " + std::to_string(index + 1) + ": '" + f.target.text +
                             "' appeared " + format_duration(now() - *rec.waiting_since) +
                             " after the trigger"));
  rec.sent = now();
  rec.point = point;
  rec.hit = hit;
  rec.pids = pids;
  if (!pids.empty()) {
    const Tracked& first = procs_.at(pids.front());
    rec.target_role = std::string(to_string(first.role));
    rec.rank = first.rank;
    rec.worker = first.worker;
  }
  std::string answer = "continue";
  auto injected = [&](const std::string& mechanism, const std::string& how) {
    rec.status = "injected";
    rec.mechanism = mechanism;
    rec.reason = how;
  };
  if (pids.empty()) {
    rec.status = "failed";
    rec.reason = "no live job process matches '" + f.target.text + "'";
    if (rec.waiting_since)
      rec.reason = "no live job process matched '" + f.target.text + "' from its trigger (at " +
                   format_duration(*rec.waiting_since) + ") until the job's top process exited";
  } else if (f.signal) {
    int sent = 0;
    for (int pid : pids) {
      Tracked& tr = procs_.at(pid);
      if (tr.pidfd && !pidfd_signal(tr.pidfd.get(), f.signal)) {
        ++sent;
        add(obs::fault(now(), static_cast<int>(index), pid, f.action, rec.trigger));
      }
    }
    if (sent) {
      injected("signal", f.action + " to " + std::to_string(sent) + " process(es)");
    } else {
      rec.status = "failed";
      rec.reason = "the target(s) exited before the signal";
    }
    if (f.signal == SIGSTOP && f.resume_after > 0 && sent) {
      auto t = std::make_unique<asio::steady_timer>(ctx_);
      t->expires_after(std::chrono::nanoseconds(f.resume_after));
      t->async_wait([this, pids](boost::system::error_code ec) {
        if (ec) return;
        for (int pid : pids) {
          auto it = procs_.find(pid);
          if (it != procs_.end() && it->second.pidfd && !it->second.gone &&
              !pidfd_signal(it->second.pidfd.get(), SIGCONT))
            add(obs::signal(now(), pid, SIGCONT, "resume after SIGSTOP"));
        }
      });
      resume_timers_.push_back(std::move(t));
    }
  } else if (f.action == "host_oom") {
    bool at_point = f.at.kind == TriggerSpec::Kind::Point;
    if (at_point && f.mechanism != "cgroup") {
      std::string how;
      bool all = true;
      for (int pid : pids) {
        OomAction a = lower_address_space(pid, f.headroom, opt_.proc_root);
        all = all && a.done;
        how += (how.empty() ? "" : "; ") + a.detail;
      }
      if (all) {
        injected("rlimit", how);
        answer = "host_oom";
      } else {
        rec.status = "failed";
        rec.mechanism = "rlimit";
        rec.reason = how;
      }
    } else {
      // At a point the fixture is told so, and makes its next allocation.
      answer = oom_by_cgroup(index, f, pids, rec);
    }
  } else if (f.action == "device_oom") {
    rec.mechanism = f.mechanism;
    if (const auto& why = device_oom_unavailable_here()) {
      rec.status = "skipped";
      rec.reason = *why;
    } else if (f.mechanism == "hog") {
      DeviceHogOptions ho;
      ho.hog_path = tools_dir() + "/aftermath-device-hog";
      ho.device = f.device;
      ho.share = f.share;
      if (f.bytes) ho.bytes = static_cast<std::uint64_t>(*f.bytes);
      ho.deadline = 30 * kSecond;
      if (!opt_.cudart_candidates.empty()) ho.cudart = opt_.cudart_candidates.front();
      auto hog = std::make_unique<DeviceHog>();
      HogState st = hog->start(ho);
      if (st == HogState::Ready) {
        injected("hog", "aftermath-device-hog (pid " + std::to_string(hog->pid()) + ") holds " +
                            format_bytes(static_cast<std::int64_t>(hog->held())) + " of GPU " +
                            std::to_string(f.device) + " (" +
                            format_bytes(static_cast<std::int64_t>(hog->free_after())) +
                            " left free) until teardown");
        hogs_.push_back(std::move(hog));
      } else {
        rec.status = st == HogState::Unavailable ? "skipped" : "failed";
        rec.reason = "aftermath-device-hog " + std::string(to_string(st)) + ": " + hog->reason();
      }
    } else if (f.mechanism == "interposer") {
      if (cuda_arm_dir_.empty()) {
        rec.status = "failed";
        rec.reason = "the interposer was not preloaded (no arm folder)";
      } else {
        std::string armed_pids, error;
        bool all = true;
        for (int pid : pids) {
          // The pid the process sees itself as (getpid() in the interposer).
          const Tracked& tr = procs_.at(pid);
          int inner = tr.inner_pid;
          if (!inner) {
            auto ns = reader_.nspid(pid);
            inner = ns.empty() ? pid : ns.back();
          }
          if (arm_cuda_fail(cuda_arm_dir_ + "/pid-" + std::to_string(inner), &error)) {
            armed_pids += (armed_pids.empty() ? "" : ", ") + std::to_string(pid);
            if (inner != pid) armed_pids += " (" + std::to_string(inner) + " in the job)";
          } else {
            all = false;
          }
        }
        if (all) {
          injected("interposer", "the next device allocation of pid " + armed_pids +
                                     " returns out-of-memory (libaftermath-cudafail.so)");
        } else {
          rec.status = "failed";
          rec.reason = "cannot arm the interposer: " + error;
        }
      }
    } else {
      injected("point-reply", "the fixture makes an oversized device allocation");
      answer = "device_oom";
    }
  } else if (f.action == "delay") {
    injected("point-reply", "held at the point for " + format_duration(f.duration));
    answer = "delay " + std::to_string(f.duration / kMilli);
  } else if (f.action == "hang") {
    injected("point-reply", "held at the point until teardown");
    answer = "hang";
  }
  if (rec.status == "injected" && !f.signal)
    add(obs::fault(now(), static_cast<int>(index), pids.empty() ? 0 : pids.front(), f.action,
                   rec.trigger));
  fault_base_ = now();
  arm_next_fault();
  return answer;
}

void Supervisor::diagnose_hang() {
  phase("diagnose");
  sample();
  std::vector<int> live;
  for (const auto& [pid, tr] : procs_)
    if (!tr.exited && !tr.gone) live.push_back(pid);
  DiagnoseOptions d;
  d.proc_root = opt_.proc_root;
  d.gdb = find_debugger(opt_.dev_root);
  // Keep reading the job's events (and exits) while gdb looks at it: a job
  // that reports progress must not block on a full event socket, which would
  // change the very stacks being taken.
  d.while_waiting = [this] {
    if (ctx_.stopped()) ctx_.restart();
    ctx_.poll();
  };
  auto diag = diagnose(live, d, &tl_.facts.diagnosis_note);
  auto open = open_collectives(tl_);
  for (auto& p : diag) {
    const Tracked& tr = procs_.at(p.pid);
    p.role = tr.role;
    p.rank = tr.rank;
    p.worker = tr.worker;
    if (auto it = open.find(p.pid); it != open.end()) p.waiting_in = it->second;
  }
  tl_.facts.diagnosis = std::move(diag);
}

std::string Supervisor::oom_by_cgroup(size_t index, const FaultSpec& f, const std::vector<int>& pids,
                                      FaultRecord& rec) {
  rec.mechanism = "cgroup";
  if (!cgroup_home_) cgroup_home_ = find_memory_cgroup_home("/proc", opt_.cgroup_parent);
  if (!cgroup_home_->home) {
    rec.status = "skipped";
    rec.reason = "no memory cgroup to limit the target in: " + cgroup_home_->why;
    return "continue";
  }
  const CgroupHome& home = *cgroup_home_->home;
  if (!kmsg_.is_open()) {
    // From now on: the kill's own line comes later. Without it (not root,
    // dmesg_restrict), the kill is still counted; the report says why.
    if (std::string why = kmsg_.open(); !why.empty())
      add(obs::note(now(), "no kernel log for the OOM kills: " + why));
  }
  std::string how, error;
  for (int pid : pids) {
    std::string why;
    auto cg = MemoryCgroup::create(home, fault_cgroup_name(static_cast<int>(index), pid),
                                   f.headroom, &why);
    if (cg) why = cg->add(pid);
    if (!why.empty()) {
      error += (error.empty() ? "" : "; ") + why;
      continue;
    }
    how += (how.empty() ? "" : "; ") + std::string("pid ") + std::to_string(pid) + " moved into " +
           cg->dir() + " (" + (home.version == 2 ? "memory.max" : "memory.limit_in_bytes") + " " +
           format_bytes(f.headroom) + " of new charges)";
    rec.cgroups.push_back(cg->dir());
    cgroups_.push_back(FaultCgroup{index, pid, cg->oom_kills().value_or(0), std::move(cg)});
  }
  rec.oom_kills = 0;
  if (error.empty()) {
    rec.status = "injected";
    rec.reason = how + ": the kernel OOM killer acts beyond it";
    return "host_oom";
  }
  rec.status = "failed";
  rec.reason = "cgroup v" + std::to_string(home.version) + ": " + error +
               (how.empty() ? "" : " (done: " + how + ")");
  return how.empty() ? "continue" : "host_oom";
}

void Supervisor::watch_oom_kills() {
  for (auto& c : cgroups_) {
    if (!c.cg) continue;
    auto k = c.cg->oom_kills();
    if (!k || *k <= c.kills) continue;
    c.kills = *k;
    for (auto& line : kmsg_.drain())  // only the OOM killer's verdicts are kept
      if (line.message.find("Killed process ") != std::string::npos) kmsg_seen_.push_back(std::move(line));
    std::string said = oom_kill_message(kmsg_seen_, c.pid).value_or("");
    add(obs::oom_kill(now(), static_cast<int>(c.fault), c.pid, *k, c.cg->dir(), said));
    auto& rec = tl_.facts.faults.at(c.fault);
    if (!said.empty()) rec.kernel_log.push_back(said);
    long long total = 0;
    for (const auto& o : cgroups_)
      if (o.fault == c.fault) total += o.kills;
    rec.oom_kills = total;
  }
}

void Supervisor::close_cgroups() {
  watch_oom_kills();
  for (auto& c : cgroups_) {
    if (!c.cg) continue;
    std::string err = c.cg->close();
    if (!err.empty()) add(obs::note(now(), "fault cgroup not removed: " + err));
    c.cg.reset();
  }
}

void Supervisor::close_unfired_faults() {
  bool ended = top_exited_;
  for (size_t i = 0; i < tl_.facts.faults.size(); ++i) {
    FaultRecord& rec = tl_.facts.faults[i];
    if (rec.status != "not_triggered") continue;
    const FaultSpec& f = sc_.faults[i];
    std::string end = ended ? "the job ended" : tl_.facts.deadline_hit ? "the job's deadline passed"
                                                                      : "the run was cut short";
    if (i > next_fault_) {
      rec.reason = "not reached: fault " + std::to_string(next_fault_ + 1) +
                   " before it never fired (faults fire in order)";
    } else if (rec.waiting_since) {
      rec.reason = "its trigger came at " + format_duration(*rec.waiting_since) +
                   ", but no live job process matched '" + f.target.text + "' before " + end;
    } else if (f.at.kind == TriggerSpec::Kind::Point) {
      auto it = point_hits_.find(f.at.point);
      rec.reason = it == point_hits_.end()
                       ? "point '" + f.at.point + "' was never reached before " + end +
                             " (does the job run the points client, and is the point's name right?)"
                       : "point '" + f.at.point + "' was reached " + std::to_string(it->second) +
                             " time(s), never matching " + f.at.text + ", before " + end;
    } else {
      rec.reason = "its trigger (" + f.at.text + ") never came before " + end;
    }
  }
}

void Supervisor::fill_exit_statuses() {
  if (proc_events_) {
    // The last exits may still be queued.
    (void)proc_events_->drain([&](const ProcEvent& e) {
      if (e.pid == e.tgid && e.kind == ProcEvent::Kind::Exit && procs_.count(e.tgid))
        exit_status_[e.tgid] = e.exit_status;
    });
  }
  // Per pid, its last exit without a status (a reused pid's earlier life
  // keeps what it had).
  std::map<int, Observation*> last_exit;
  std::set<int> known;
  for (auto& o : tl_.events) {
    if (o.kind != ObsKind::ProcExit) continue;
    if (o.outcome) {
      known.insert(o.pid);
      last_exit.erase(o.pid);
    } else if (!known.count(o.pid)) {
      last_exit[o.pid] = &o;
    }
  }
  std::vector<int> unknown;
  for (auto& [pid, o] : last_exit) {
    if (auto it = exit_status_.find(pid); it != exit_status_.end())
      o->outcome = Outcome::from_wait_status(it->second);
    else
      unknown.push_back(pid);
  }
  if (!unknown.empty()) {
    std::string pids;
    for (int p : unknown) pids += (pids.empty() ? "" : ", ") + std::to_string(p);
    add(obs::note(now(), "reaped by their parent, exit status unknown" +
                             std::string(proc_events_ ? "" : " (no process events here: not root)") +
                             ": pid " + pids));
  }
}

void Supervisor::settle_fault_effects() {
  // When each fault took effect: the first exit (or stop) of a target after
  // the fault was sent. The timeline is sorted by now.
  for (auto& rec : tl_.facts.faults) {
    if (!rec.sent || rec.pids.empty() || rec.status != "injected") continue;
    bool stop = rec.action == "SIGSTOP";
    bool exits = rec.action == "SIGKILL" || rec.action == "SIGTERM" || rec.action == "SIGINT" ||
                 rec.action == "SIGSEGV" || rec.action == "SIGBUS" || rec.action == "host_oom";
    if (!stop && !exits) continue;
    std::set<int> pids(rec.pids.begin(), rec.pids.end());
    for (const auto& o : tl_.events) {
      if (o.t < *rec.sent || !pids.count(o.pid)) continue;
      if ((exits && o.kind == ObsKind::ProcExit) ||
          (stop && o.kind == ObsKind::ProcState && (o.state == 'T' || o.state == 't'))) {
        rec.effect = o.t;
        break;
      }
    }
  }
}

Timeline Supervisor::run() {
  t0_ = monotonic_now();
  // The host's /dev/shm before anything starts; replaced by an empty baseline
  // if the job gets a private one (see the Mode record).
  shm_dir_ = opt_.shm_dir;
  shm_baseline_ = scan_shm(shm_dir_);
  for (size_t i = 0; i < sc_.faults.size(); ++i) {
    FaultRecord rec;
    rec.index = static_cast<int>(i);
    rec.action = sc_.faults[i].action;
    rec.target = sc_.faults[i].target.text;
    rec.trigger = sc_.faults[i].at.text;
    rec.optional = sc_.faults[i].optional;
    tl_.facts.faults.push_back(rec);
  }
  if (auto ec = sock_.open()) throw SetupError("cannot open the event socket: " + ec.message());
  sock_watch_ = std::make_unique<asio::posix::stream_descriptor>(ctx_, ::dup(sock_.fd()));
  watch_events();
  device_start();
  tmp_start();
  phase("launch");
  launch();
  // The reaper reports its mode, init and top right away.
  pump(now() + 10 * kSecond, [&] { return top_started_ || exec_failed_; });
  phase("running");
  schedule_sample();
  sample();
  Nanos job_deadline = sc_.timeouts.job;
  if (auto it = sc_.checks.find("no_hang"); it != sc_.checks.end() && it->second.enabled &&
                                             check_params<NoHangParams>(it->second).stall)
    stall_window_ = *check_params<NoHangParams>(it->second).stall;
  mark_progress();
  pump(job_deadline, [&] { return top_exited_ || stalled(); });
  if (!top_exited_ && stalled() && !interrupted()) {
    tl_.facts.deadline_hit = true;
    tl_.facts.stalled_since = last_progress_;
    tl_.facts.stall_window = stall_window_;
    phase("stalled");
    add(obs::note(now(), "no job process made progress since " + format_duration(last_progress_) +
                             " (the " + format_duration(stall_window_) + " stall window): a hang"));
    diagnose_hang();
  } else if (top_exited_) {
    phase("job_exited");
    // A fresh scan: what the top left behind may have been born since the
    // last sample, and "nothing left" must not be concluded from stale data.
    sample();
    record_shm_held();
    // Watch leftovers: until nothing of the job lives and /dev/shm is back,
    // or the settle period ends.
    phase("settle");
    Nanos bound = now() + sc_.timeouts.settle;
    bool clean = pump(bound, [&] {
      return (present_count() == 0 && shm_at_baseline()) || now() - last_change_ >= kSettleQuiet;
    });
    if (present_count() > 0 || !shm_at_baseline())
      add(obs::note(now(), clean ? "settle ended: nothing of the job changed for " +
                                       format_duration(kSettleQuiet)
                                 : "settle ended at its " + format_duration(sc_.timeouts.settle) +
                                       " bound with job processes or /dev/shm entries left"));
  } else if (interrupted()) {
    add(obs::note(now(), "interrupted"));
  } else {
    tl_.facts.deadline_hit = true;
    phase("deadline");
    diagnose_hang();
  }
  teardown();
  finish_tmp();
  timer_.cancel();
  device_finish();
  tl_.facts.stdout_text = tail_of_file(opt_.out_dir + "/stdout.log", 64 * 1024);
  tl_.facts.stderr_text = tail_of_file(opt_.out_dir + "/stderr.log", 64 * 1024);
  phase("done");
  // The reaper's records carry their own (earlier) timestamps.
  std::stable_sort(tl_.events.begin(), tl_.events.end(),
                   [](const Observation& a, const Observation& b) { return a.t < b.t; });
  settle_fault_effects();
  close_unfired_faults();
  fill_exit_statuses();
  return std::move(tl_);
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
  o.keep_leaks = opt_.keep_leaks;
  if (std::string why = tmp_.start(o); !why.empty()) {
    add(obs::note(now(), "tmp unavailable: " + why));
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
    tmp_.poll(now(), [this] {
      std::vector<int> live;
      for (const auto& [pid, tr] : procs_)
        if (!tr.gone) live.push_back(pid);
      return live;
    });
    schedule_tmp_poll();
  });
}

void Supervisor::finish_tmp() {
  if (tmp_timer_) tmp_timer_->cancel();
  for (auto& o : tmp_.finish(now())) add(std::move(o));
}

std::string Supervisor::tools_dir() const {
  if (!opt_.tools_dir.empty()) return opt_.tools_dir;
  return std::filesystem::path(opt_.reaper_path).parent_path().string();
}

const std::optional<std::string>& Supervisor::device_oom_unavailable_here() {
  if (!device_oom_why_) {
    device_oom_why_ = opt_.cudart_candidates.empty() && opt_.dev_root == "/dev"
                          ? device_oom_unavailable()
                          : device_oom_unavailable(opt_.dev_root, opt_.cudart_candidates.empty()
                                                                      ? cudart_candidates()
                                                                      : opt_.cudart_candidates);
  }
  return *device_oom_why_;
}

JobRef Supervisor::job_ref() const {
  JobRef j;
  for (const auto& [pid, tr] : procs_) j.pids.insert(pid);
  j.orphan_parents = {1};
  if (reaper_pid_) j.orphan_parents.insert(reaper_pid_);
  if (init_pid_) j.orphan_parents.insert(init_pid_);
  return j;
}

void Supervisor::device_start() {
  DeviceObserverOptions o;
  o.proc_root = opt_.proc_root;
  if (!opt_.device_pattern.empty()) o.device_pattern = opt_.device_pattern;
  dev_ = std::make_unique<DeviceObserver>(opt_.nvml, opt_.probe, o);
  device_memory_params_ = device_memory_params(sc_);
  if (!opt_.nvml) {
    tl_.device.unavailable = "device observation off";
    return;
  }
  if (!dev_->start(now(), job_ref())) return;
  auto env_of = [&](const char* name) -> std::optional<std::string> {
    if (auto it = sc_.job.env.find(name); it != sc_.job.env.end()) return it->second;
    if (const char* v = ::getenv(name)) return std::string(v);
    return std::nullopt;
  };
  dev_->set_job_environment(env_of("CUDA_VISIBLE_DEVICES"), env_of("CUDA_DEVICE_ORDER"));
  dev_timer_ = std::make_unique<asio::steady_timer>(ctx_);
  schedule_device_sample();
}

void Supervisor::schedule_device_sample() {
  dev_timer_->expires_after(std::chrono::nanoseconds(opt_.device_interval));
  dev_timer_->async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    dev_->sample(now(), job_ref());
    schedule_device_sample();
  });
}

bool Supervisor::device_at_baseline() const {
  const DeviceTimeline& d = dev_->timeline();
  for (const auto& base : d.baseline) {
    if (!d.job_gpus.empty() &&
        std::find(d.job_gpus.begin(), d.job_gpus.end(), base.index) == d.job_gpus.end())
      continue;
    // The newest good sample of this GPU: called on every turn of the loop
    // while waiting, so look from the end.
    auto last = std::find_if(d.samples.rbegin(), d.samples.rend(), [&](const GpuSample& s) {
      return s.index == base.index && s.error.empty();
    });
    if (last != d.samples.rend() && last->used > base.used + device_memory_params_.tolerance_bytes)
      return false;
  }
  return true;
}

void Supervisor::device_finish() {
  if (!dev_ || !dev_->available()) {
    if (dev_ && opt_.nvml) tl_.device = dev_->take();
    return;
  }
  // Release deadlines count from the first fault, else the top process's
  // exit, else the job deadline.
  std::optional<Nanos> origin;
  for (const auto& o : tl_.events) {
    if (o.kind == ObsKind::Fault) {
      origin = o.t;
      break;
    }
  }
  if (!origin) origin = phase_time(tl_, "job_exited");
  if (!origin) origin = phase_time(tl_, "deadline");
  dev_->set_origin(origin.value_or(now()));
  // Device memory comes back after the processes are gone, when the driver
  // has torn their contexts down: keep sampling until it is back or the
  // check's deadline has passed.
  const DeviceMemoryParams& p = device_memory_params_;
  dev_->sample(now(), job_ref());
  Nanos until = origin.value_or(now()) + p.deadline + opt_.device_interval;
  if (!device_at_baseline()) {
    phase("device_release");
    pump(until, [&] { return device_at_baseline(); });
  }
  if (dev_timer_) dev_timer_->cancel();
  dev_->finish(now(), job_ref());
  for (const auto& n : dev_->notes()) add(obs::note(now(), "device: " + n));
  tl_.device = dev_->take();
}

}  // namespace

std::uint64_t ignored_signals_now() {
  std::uint64_t mask = 0;
  for (int sig = 1; sig < 65; ++sig) {
    struct sigaction sa {};
    if (::sigaction(sig, nullptr, &sa) == 0 && sa.sa_handler == SIG_IGN) mask |= std::uint64_t(1) << (sig - 1);
  }
  return mask;
}

Timeline supervise(const Scenario& scenario, const SupervisorOptions& options) {
  Supervisor s(scenario, options);
  return s.run();
}

}  // namespace aftermath
