#include "harness/inject/fault_driver.h"

#include <sched.h>
#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>

#include "harness/core/device.h"
#include "harness/inject/oom.h"
#include "harness/observe/proc.h"
#include "harness/os/pidfd.h"

namespace aftermath {

namespace {

FaultAct injected(FaultMechanism m, std::string how) {
  FaultAct a;
  a.status = FaultStatus::Injected;
  a.mechanism = m;
  a.reason = std::move(how);
  return a;
}

FaultAct not_done(FaultStatus s, FaultMechanism m, std::string why) {
  FaultAct a;
  a.status = s;
  a.mechanism = m;
  a.reason = std::move(why);
  return a;
}

}  // namespace

FaultDriver::FaultDriver(FaultDriverOptions options) : opt_(std::move(options)) {}

FaultDriver::~FaultDriver() {
  // Normally released at teardown; an exception on the way must not leave
  // the arm folder behind (hogs and cgroups clean up in their destructors).
  if (!cuda_arm_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(cuda_arm_dir_, ec);
  }
}

std::string FaultDriver::tools_dir() const { return opt_.tools.tools_dir; }

const Status& FaultDriver::device_oom_available_here() {
  if (!device_oom_can_)
    device_oom_can_ = device_oom_available(opt_.tools.dev_root, opt_.tools.cudart_candidates.empty()
                                                                    ? cudart_candidates()
                                                                    : opt_.tools.cudart_candidates);
  return *device_oom_can_;
}

void FaultDriver::prepare_job_env(const std::vector<FaultSpec>& faults,
                                  std::map<std::string, std::string>& env) {
  // Device OOM through the interposer: preloaded into the whole job, armed
  // per process at the trigger (a file per target under an arm folder).
  bool interposer = std::any_of(faults.begin(), faults.end(), [](const FaultSpec& f) {
    return f.action == FaultAction::DeviceOom && f.mechanism == FaultMechanism::Interposer;
  });
  if (!interposer || !device_oom_available_here()) return;
  char tmpl[] = "/tmp/aftermath-cudafail-XXXXXX";
  if (!::mkdtemp(tmpl)) return;  // the fault then fails: "no arm folder"
  cuda_arm_dir_ = tmpl;
  auto it = env.find("LD_PRELOAD");
  auto fail_env = cuda_fail_env(tools_dir() + "/libaftermath-cudafail.so", std::nullopt,
                                cuda_arm_dir_ + "/", it == env.end() ? std::string() : it->second);
  if (!fail_env) {
    // Not preloaded: the fault fails, saying why.
    cuda_env_error_ = fail_env.error().what;
    std::error_code ec;
    std::filesystem::remove_all(cuda_arm_dir_, ec);
    cuda_arm_dir_.clear();
    return;
  }
  for (auto& [k, v] : *fail_env) env[k] = v;
}

FaultAct FaultDriver::act(size_t index, const FaultSpec& f, const std::vector<FaultTarget>& targets,
                          bool at_point) {
  switch (f.action) {
    case FaultAction::HostOom:
      if (at_point && f.mechanism != FaultMechanism::Cgroup) return host_oom_rlimit(f, targets);
      // At a point the fixture is told so, and makes its next allocation.
      return host_oom_cgroup(index, f, targets);
    case FaultAction::DeviceOom:
      return device_oom(f, targets);
    case FaultAction::Delay:
    case FaultAction::Hang:
      return hold_at_point(f);
    case FaultAction::Sigkill:
    case FaultAction::Sigterm:
    case FaultAction::Sigint:
    case FaultAction::Sigstop:
    case FaultAction::Sigcont:
    case FaultAction::Sigsegv:
    case FaultAction::Sigbus:
      return send_signal(f, targets, opt_.proc_root);
    case FaultAction::NodeLoss:
    case FaultAction::Partition:
      return node_fault(f, targets);
    case FaultAction::AgentKill:
      return agent_kill(targets);
    case FaultAction::Scancel:
      return scancel(f, targets);
    case FaultAction::None:
      break;
  }
  return not_done(FaultStatus::Failed, FaultMechanism::None, "the fault names no action");
}

FaultAct FaultDriver::send_signal(const FaultSpec& f, const std::vector<FaultTarget>& targets,
                                  const std::string& proc_root) {
  FaultAct a;
  // A target that ignores the signal (a disposition it set, or inherited:
  // a shell starts background jobs with SIGINT and SIGQUIT ignored) is sent
  // it all the same, and the record says it had no effect there. Read before
  // any is sent, so the signals still go out back to back; SIGKILL and
  // SIGSTOP cannot be ignored.
  std::set<int> ignoring;
  if (f.signal > 0 && f.signal <= 64 && f.signal != SIGKILL && f.signal != SIGSTOP) {
    const ProcReader proc(proc_root);
    for (const FaultTarget& t : targets)
      if (auto ignored = proc.ignored_signals(t.pid); ignored && (*ignored >> (f.signal - 1) & 1))
        ignoring.insert(t.pid);
  }
  for (const FaultTarget& t : targets)
    if (t.pidfd >= 0 && !pidfd_signal(t.pidfd, f.signal)) a.signalled.push_back(t.pid);
  std::string ignored_by;
  for (int pid : a.signalled)
    if (ignoring.count(pid)) ignored_by += (ignored_by.empty() ? "" : ", ") + std::to_string(pid);
  if (a.signalled.empty()) {
    a.status = FaultStatus::Failed;
    a.reason = "the target(s) exited before the signal";
    return a;
  }
  a.status = FaultStatus::Injected;
  a.mechanism = FaultMechanism::Signal;
  a.reason = std::string(to_string(f.action)) + " to " + std::to_string(a.signalled.size()) +
             " process(es)";
  if (!ignored_by.empty()) {
    const bool one = ignored_by.find(',') == std::string::npos;
    a.reason +=
        "; " + ignored_by + (one ? " ignores " : " ignore ") + signal_name(f.signal) +
        " (a disposition set in the job or inherited from what started aftermath: a "
        "shell's background job starts with SIGINT and SIGQUIT ignored), so it had no effect there";
  }
  return a;
}

std::vector<FaultTarget> FaultDriver::stop_with_descendants(const std::vector<FaultTarget>& targets,
                                                            std::vector<UniqueFd>& opened) const {
  std::vector<FaultTarget> all = targets;
  std::set<int> known;
  for (const FaultTarget& t : all) {
    known.insert(t.pid);
    if (t.pidfd >= 0) (void)pidfd_signal(t.pidfd, SIGSTOP);
  }
  const ProcReader proc(opt_.proc_root);
  // Stopped, or no longer running at all; a process still running may yet
  // fork (a stop lands when it next leaves the kernel).
  auto settled = [&](int pid) {
    auto st = proc.stat(pid);
    return !st || st->state == 'T' || st->state == 't' || st->state == 'Z' || st->state == 'X';
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (;;) {
    bool found = false;
    for (size_t i = 0; i < all.size(); ++i) {
      auto kids = proc.children(all[i].pid);
      if (!kids) continue;
      for (int c : *kids) {
        if (!known.insert(c).second) continue;
        UniqueFd fd;
        if (pidfd_open(c, fd)) continue;  // gone already
        (void)pidfd_signal(fd.get(), SIGSTOP);
        all.push_back(FaultTarget{c, fd.get(), 0});
        opened.push_back(std::move(fd));
        found = true;
      }
    }
    if (!found &&
        std::all_of(all.begin(), all.end(), [&](const FaultTarget& t) { return settled(t.pid); }))
      break;
    if (std::chrono::steady_clock::now() >= deadline) break;  // the kill goes out regardless
    ::sched_yield();
  }
  return all;
}

FaultAct FaultDriver::node_fault(const FaultSpec& f, const std::vector<FaultTarget>& targets) {
  const std::string action(to_string(f.action));
  if (!opt_.tools.network)
    return not_done(
        FaultStatus::Skipped, FaultMechanism::None,
        action + " acts on a node of a multi-node run (`nodes:` and an agent per node)");
  if (Status s = opt_.tools.network->cut(); !s)
    return not_done(FaultStatus::Failed, FaultMechanism::None,
                    "cannot cut the node's network: " + s.error().what);
  if (f.action == FaultAction::Partition) {
    FaultAct a =
        injected(FaultMechanism::None, "the node's network cut for " + format_duration(f.duration));
    return a;
  }
  // Every process in one pass: microseconds apart, as a node that loses power.
  // The targets are what the tracker knew; a child forked since would
  // outlive the node. So they are stopped first, and their descendants found and stopped
  // in turn until none is left running (a stopped process forks no more):
  // then the kill takes them all.
  std::vector<UniqueFd> opened;
  std::vector<FaultTarget> all = stop_with_descendants(targets, opened);
  FaultSpec kill = f;
  kill.signal = SIGKILL;
  FaultAct a = send_signal(kill, all, opt_.proc_root);
  if (a.status == FaultStatus::Injected)
    a.reason = "the node's network cut, then SIGKILL to " + std::to_string(a.signalled.size()) +
               " process(es) at once";
  else
    a.reason = "the node's network cut; " + a.reason;
  return a;
}

FaultAct FaultDriver::agent_kill(const std::vector<FaultTarget>& targets) const {
  if (!opt_.tools.end_agent)
    return not_done(
        FaultStatus::Skipped, FaultMechanism::None,
        "agent_kill kills the agent of a multi-node run's node (`nodes:` and an agent per node)");
  FaultAct a = injected(FaultMechanism::Signal, "SIGKILL to the node's agent; its " +
                                                    std::to_string(targets.size()) +
                                                    " job process(es) must die with it");
  a.ends_agent = true;
  return a;
}

FaultAct FaultDriver::scancel(const FaultSpec& f, const std::vector<FaultTarget>& targets) {
  // As slurmstepd: SIGCONT first so that a stopped process can act on what
  // follows; a given signal (scancel --signal) goes alone.
  if (!f.step_signal) {
    FaultSpec cont = f;
    cont.signal = SIGCONT;
    (void)send_signal(cont, targets, opt_.proc_root);
  }
  FaultSpec sig = f;
  sig.signal = f.step_signal ? f.step_signal : SIGTERM;
  FaultAct a = send_signal(sig, targets, opt_.proc_root);
  if (a.status != FaultStatus::Injected) return a;
  a.reason =
      f.step_signal
          ? signal_name(f.step_signal) + " to the step's " + std::to_string(a.signalled.size()) +
                " process(es) (the launcher and its descendants)"
          : "SIGCONT and SIGTERM to the step's " + std::to_string(a.signalled.size()) +
                " process(es) (the launcher and its descendants); SIGKILL to what it then holds "
                "after kill_wait " +
                format_duration(f.kill_wait);
  return a;
}

std::vector<int> FaultDriver::step_tree(int task, const std::vector<int>& candidates) const {
  ProcReader proc(opt_.proc_root);
  std::map<int, ProcStat> table;
  for (int pid : candidates)
    if (auto st = proc.stat(pid)) table.emplace(pid, std::move(*st));
  if (!table.count(task)) return {};
  std::vector<std::pair<int, int>> found;  // depth, pid
  for (const auto& [pid, depth] : descendants(table, task)) found.emplace_back(depth, pid);
  std::stable_sort(found.begin(), found.end());
  std::vector<int> out{task};
  for (const auto& [depth, pid] : found) out.push_back(pid);
  return out;
}

void FaultDriver::end_agent() const {
  if (opt_.tools.end_agent) opt_.tools.end_agent();
}

Status FaultDriver::heal_network() {
  if (!opt_.tools.network) return {};
  if (Status s = opt_.tools.network->heal(); !s)
    return Error{"the node's network could not be healed: " + s.error().what, s.error().errnum};
  return {};
}

FaultAct FaultDriver::host_oom_rlimit(const FaultSpec& f,
                                      const std::vector<FaultTarget>& targets) const {
  std::string how;
  bool all = true;
  for (const FaultTarget& t : targets) {
    auto done = lower_address_space(t.pid, f.headroom, opt_.proc_root);
    all = all && done.ok();
    how += (how.empty() ? "" : "; ") + (done ? *done : done.error().what);
  }
  if (!all) return not_done(FaultStatus::Failed, FaultMechanism::Rlimit, how);
  FaultAct a = injected(FaultMechanism::Rlimit, how);
  a.answer = "host_oom";
  return a;
}

FaultAct FaultDriver::host_oom_cgroup(size_t index, const FaultSpec& f,
                                      const std::vector<FaultTarget>& targets) {
  if (!cgroup_home_) cgroup_home_ = find_memory_cgroup_home("/proc", opt_.tools.cgroup_parent);
  if (!*cgroup_home_)
    return not_done(FaultStatus::Skipped, FaultMechanism::Cgroup,
                    "no memory cgroup to limit the target in: " + cgroup_home_->error().what);
  const CgroupHome& home = **cgroup_home_;
  FaultAct a;
  a.mechanism = FaultMechanism::Cgroup;
  a.oom_kills = 0;
  if (!kmsg_.is_open()) {
    // From now on: the kill's own line comes later. Without it (not root,
    // dmesg_restrict), the kill is still counted; the report says why.
    if (std::string why = kmsg_.open(); !why.empty())
      a.notes.push_back("no kernel log for the OOM kills: " + why);
  }
  std::string how, error;
  for (const FaultTarget& t : targets) {
    auto cg =
        MemoryCgroup::create(home, fault_cgroup_name(static_cast<int>(index), t.pid), f.headroom);
    Status moved = cg ? (*cg)->add(t.pid) : Status(cg.error());
    if (!moved) {
      error += (error.empty() ? "" : "; ") + moved.error().what;
      continue;
    }
    how += (how.empty() ? "" : "; ") + std::string("pid ") + std::to_string(t.pid) +
           " moved into " + (*cg)->dir() + " (" +
           (home.version == 2 ? "memory.max" : "memory.limit_in_bytes") + " " +
           format_bytes(f.headroom) + " of new charges)";
    a.cgroups.push_back((*cg)->dir());
    long long before = (*cg)->oom_kills().value_or(0);
    cgroups_.push_back(FaultCgroup{index, t.pid, before, std::move(*cg)});
  }
  if (error.empty()) {
    a.status = FaultStatus::Injected;
    a.reason = how + ": the kernel OOM killer acts beyond it";
    a.answer = "host_oom";
    return a;
  }
  a.status = FaultStatus::Failed;
  a.reason = "cgroup v" + std::to_string(home.version) + ": " + error +
             (how.empty() ? "" : " (done: " + how + ")");
  a.answer = how.empty() ? "continue" : "host_oom";
  return a;
}

FaultAct FaultDriver::device_oom(const FaultSpec& f, const std::vector<FaultTarget>& targets) {
  if (const Status& can = device_oom_available_here(); !can)
    return not_done(FaultStatus::Skipped, f.mechanism, can.error().what);
  if (f.mechanism == FaultMechanism::Hog) return device_oom_hog(f);
  if (f.mechanism == FaultMechanism::Interposer) return device_oom_interposer(targets);
  FaultAct a =
      injected(FaultMechanism::PointReply, "the fixture makes an oversized device allocation");
  a.answer = "device_oom";
  return a;
}

FaultAct FaultDriver::device_oom_hog(const FaultSpec& f) {
  DeviceHogOptions ho;
  ho.hog_path = tools_dir() + "/aftermath-device-hog";
  ho.device = f.device;
  ho.share = f.share;
  if (f.bytes) ho.bytes = static_cast<std::uint64_t>(*f.bytes);
  ho.deadline = opt_.hog_deadline;
  if (!opt_.tools.cudart_candidates.empty()) ho.cudart = opt_.tools.cudart_candidates.front();
  auto hog = std::make_unique<DeviceHog>();
  HogState st = hog->start(ho);
  if (st != HogState::Ready)
    return not_done(st == HogState::Unavailable ? FaultStatus::Skipped : FaultStatus::Failed,
                    FaultMechanism::Hog,
                    "aftermath-device-hog " + std::string(to_string(st)) + ": " + hog->reason());
  FaultAct a = injected(FaultMechanism::Hog,
                        "aftermath-device-hog (pid " + std::to_string(hog->pid()) + ") holds " +
                            format_bytes(static_cast<std::int64_t>(hog->held())) + " of GPU " +
                            std::to_string(f.device) + " (" +
                            format_bytes(static_cast<std::int64_t>(hog->free_after())) +
                            " left free) until teardown");
  hogs_.push_back(std::move(hog));
  return a;
}

FaultAct FaultDriver::device_oom_interposer(const std::vector<FaultTarget>& targets) const {
  if (cuda_arm_dir_.empty())
    return not_done(FaultStatus::Failed, FaultMechanism::Interposer,
                    "the interposer was not preloaded (" +
                        (cuda_env_error_.empty() ? std::string("no arm folder") : cuda_env_error_) +
                        ")");
  std::string armed_pids, error;
  ProcReader reader(opt_.proc_root);
  for (const FaultTarget& t : targets) {
    // The pid the process sees itself as (getpid() in the interposer).
    int inner = t.inner_pid;
    if (!inner) {
      auto ns = reader.nspid(t.pid);
      inner = ns.empty() ? t.pid : ns.back();
    }
    if (Status armed = arm_cuda_fail(cuda_arm_dir_ + "/pid-" + std::to_string(inner)); !armed) {
      error = armed.error().what;
      continue;
    }
    armed_pids += (armed_pids.empty() ? "" : ", ") + std::to_string(t.pid);
    if (inner != t.pid) armed_pids += " (" + std::to_string(inner) + " in the job)";
  }
  if (!error.empty())
    return not_done(FaultStatus::Failed, FaultMechanism::Interposer,
                    "cannot arm the interposer: " + error);
  return injected(FaultMechanism::Interposer,
                  "the next device allocation of pid " + armed_pids +
                      " returns out-of-memory (libaftermath-cudafail.so)");
}

FaultAct FaultDriver::hold_at_point(const FaultSpec& f) {
  if (f.action == FaultAction::Delay) {
    FaultAct a = injected(FaultMechanism::PointReply,
                          "held at the point for " + format_duration(f.duration));
    a.answer = "delay " + std::to_string(f.duration / kMilli);
    return a;
  }
  FaultAct a = injected(FaultMechanism::PointReply, "held at the point until teardown");
  a.answer = "hang";
  return a;
}

std::vector<OomKillSeen> FaultDriver::poll_oom_kills() {
  std::vector<OomKillSeen> seen;
  for (auto& c : cgroups_) {
    if (!c.cg) continue;
    auto k = c.cg->oom_kills();
    if (!k || *k <= c.kills) continue;
    c.kills = *k;
    for (auto& line : kmsg_.drain())  // only the OOM killer's verdicts are kept
      if (line.message.find("Killed process ") != std::string::npos)
        kmsg_seen_.push_back(std::move(line));
    OomKillSeen s;
    s.fault = c.fault;
    s.pid = c.pid;
    s.kills = *k;
    s.cgroup = c.cg->dir();
    s.kernel_line = oom_kill_message(kmsg_seen_, c.pid).value_or("");
    for (const auto& o : cgroups_)
      if (o.fault == c.fault) s.fault_total += o.kills;
    seen.push_back(std::move(s));
  }
  return seen;
}

std::vector<std::string> FaultDriver::release_device() {
  std::vector<std::string> notes;
  // The hogs hold device memory for as long as the job runs; not after.
  for (auto& h : hogs_) {
    auto out = h->stop();
    notes.push_back("aftermath-device-hog (pid " + std::to_string(h->pid()) + ") released " +
                    format_bytes(static_cast<std::int64_t>(h->held())) +
                    (out ? "" : "; it did not exit"));
  }
  hogs_.clear();
  if (!cuda_arm_dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(cuda_arm_dir_, ec);
    cuda_arm_dir_.clear();
  }
  return notes;
}

std::vector<OomKillSeen> FaultDriver::close_cgroups(std::vector<std::string>& notes) {
  std::vector<OomKillSeen> last = poll_oom_kills();
  for (auto& c : cgroups_) {
    if (!c.cg) continue;
    if (Status closed = c.cg->close(); !closed)
      notes.push_back("fault cgroup not removed: " + closed.error().what);
    c.cg.reset();
  }
  return last;
}

}  // namespace aftermath
