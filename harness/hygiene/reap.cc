#include "harness/hygiene/reap.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>

#include "harness/inject/cgroup.h"
#include "harness/observe/holders.h"
#include "harness/observe/process_index.h"
#include "harness/observe/tmp_residue.h"
#include "harness/os/pidfd.h"

namespace aftermath {

using nlohmann::json;

namespace {

std::string who(int pid, const std::string& comm, unsigned uid) {
  return "pid " + std::to_string(pid) + " (" + comm + ", uid " + std::to_string(uid) + ")";
}

// Whether `proc_root` is procfs for this process's own PID namespace: the only
// case in which its pids are the pids pidfd_open takes.
bool own_namespace(const std::string& proc_root) {
  char buf[64];
  ssize_t n = ::readlink((proc_root + "/self").c_str(), buf, sizeof buf - 1);
  if (n <= 0) return false;
  buf[n] = '\0';
  return std::string(buf) == std::to_string(::getpid());
}

struct Target {
  ReapStep* step;
  UniqueFd fd;
  bool exited = false;
  bool killed = false;
  Nanos exited_at = 0;
};

// Waits until every target's pidfd is readable (it exited) or `until` passes.
void wait_exits(std::vector<Target>& targets, Nanos until) {
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<Target*> who;
    for (auto& t : targets) {
      if (t.exited) continue;
      fds.push_back({t.fd.get(), POLLIN, 0});
      who.push_back(&t);
    }
    if (fds.empty()) return;
    Nanos left = until - monotonic_now();
    if (left <= 0) return;
    int ms = static_cast<int>(std::min<Nanos>((left + kMilli - 1) / kMilli, 1000));
    int n = ::poll(fds.data(), fds.size(), ms);
    if (n < 0 && errno != EINTR) return;
    for (size_t i = 0; n > 0 && i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      who[i]->exited = true;
      who[i]->exited_at = monotonic_now();
    }
  }
}

}  // namespace

namespace {

// Terminations of the leftover processes that are ours, deepest first; what
// is left alone goes to plan.untouched. Returns the pids it terminates.
std::set<int> plan_processes(const InspectReport& r, const ReapOptions& o, ReapPlan& plan) {
  std::set<int> terminating;
  for (const auto& p : r.processes) {
    std::string name = who(p.proc.pid, p.proc.comm, p.proc.uid);
    if (p.zombie()) {
      plan.untouched.push_back(
          name + ": zombie; " +
          (p.leftover ? "it is reaped once its parent " + std::to_string(p.proc.ppid) + " is gone"
                      : "its parent " + std::to_string(p.proc.ppid) +
                            " is not a leftover this check listed: that parent should reap it"));
      continue;
    }
    if (!p.leftover) {
      plan.in_use.push_back(name + ": " + p.why);
      continue;
    }
    if (p.proc.pid <= 1) continue;  // never init, whatever the report says
    if (!o.all_users && p.proc.uid != o.uid) {
      plan.untouched.push_back(name + ": not yours (root may pass --all-users)");
      continue;
    }
    ReapStep s;
    s.kind = ReapStep::Kind::Terminate;
    s.pid = p.proc.pid;
    s.start_ticks = p.proc.start_ticks;
    s.uid = p.proc.uid;
    s.comm = p.proc.comm;
    s.depth = p.depth;
    s.state = p.proc.state;
    s.why = p.why;
    plan.steps.push_back(std::move(s));
    terminating.insert(p.proc.pid);
  }
  // Children before parents: deepest first.
  std::stable_sort(plan.steps.begin(), plan.steps.end(), [](const ReapStep& a, const ReapStep& b) {
    if (a.depth != b.depth) return a.depth > b.depth;
    return a.pid > b.pid;
  });
  return terminating;
}

// Removals of leftover /dev/shm entries, and of those only `terminating` uses.
void plan_shm(const InspectReport& r, const ReapOptions& o, const std::set<int>& terminating,
              ReapPlan& plan) {
  for (const auto& e : r.shm) {
    if (!e.leftover && !e.freed_by_reap) continue;
    std::string name = r.shm_dir + "/" + e.name;
    if (!o.all_users && e.uid != o.uid) {
      plan.untouched.push_back(name + ": not yours (uid " + std::to_string(e.uid) + ")");
      continue;
    }
    ReapStep s;
    s.kind = ReapStep::Kind::Remove;
    s.name = e.name;
    s.inode = e.inode;
    s.uid = e.uid;
    s.why = e.why;
    if (e.freed_by_reap) {
      std::vector<int> deps = e.mapped_by;
      deps.insert(deps.end(), e.held_by.begin(), e.held_by.end());
      if (e.creator_pid && e.creator == CreatorState::Alive) deps.push_back(*e.creator_pid);
      bool all = std::all_of(deps.begin(), deps.end(), [&](int p) { return terminating.count(p); });
      if (!all) {
        plan.untouched.push_back(name + ": used by processes reap does not terminate");
        continue;
      }
      s.after_processes = true;
    }
    plan.steps.push_back(std::move(s));
  }
}

// Removals of temp-dir residue, and of residue only `terminating` holds.
void plan_tmp(const InspectReport& r, const ReapOptions& o, const std::set<int>& terminating,
              ReapPlan& plan) {
  for (const auto& t : r.tmp) {
    if (!t.leftover && !t.freed_by_reap) continue;
    std::string path = r.tmp_dir + "/" + t.name;
    if (!o.all_users && t.uid != o.uid) {
      plan.untouched.push_back(path + ": not yours (uid " + std::to_string(t.uid) + ")");
      continue;
    }
    if (t.freed_by_reap && !std::all_of(t.held_by.begin(), t.held_by.end(),
                                        [&](int p) { return terminating.count(p) > 0; })) {
      plan.untouched.push_back(path + ": held by processes reap does not terminate");
      continue;
    }
    ReapStep s;
    s.kind = ReapStep::Kind::RemoveTmp;
    s.name = path;
    s.inode = t.inode;
    s.uid = t.uid;
    s.why = t.why;
    s.after_processes = t.freed_by_reap;
    plan.steps.push_back(std::move(s));
  }
}

// Removals of leftover fault cgroups whose members are all `terminating`.
void plan_cgroups(const InspectReport& r, const ReapOptions& o, const std::set<int>& terminating,
                  ReapPlan& plan) {
  for (const auto& g : r.cgroups) {
    if (!g.leftover) continue;
    if (!o.all_users && g.uid != o.uid) {
      plan.untouched.push_back(g.dir + ": not yours (uid " + std::to_string(g.uid) + ")");
      continue;
    }
    bool all = std::all_of(g.members.begin(), g.members.end(),
                           [&](int p) { return terminating.count(p) > 0; });
    if (!all) {
      plan.untouched.push_back(g.dir + ": holds processes reap does not terminate (" +
                               join_ints(g.members) + ")");
      continue;
    }
    ReapStep s;
    s.kind = ReapStep::Kind::RemoveCgroup;
    s.name = g.dir;
    s.uid = g.uid;
    s.why = g.why;
    s.after_processes = !g.members.empty();
    plan.steps.push_back(std::move(s));
  }
}

}  // namespace

ReapPlan plan_reap(const InspectReport& r, const ReapOptions& o) {
  ReapPlan plan;
  std::set<int> terminating = plan_processes(r, o, plan);
  plan_shm(r, o, terminating, plan);
  plan_tmp(r, o, terminating, plan);
  plan_cgroups(r, o, terminating, plan);
  return plan;
}

namespace {

// The caller, its ancestors: never signalled, whatever the plan says.
std::set<int> exempt_pids(const ProcReader& reader) {
  std::set<int> exempt{static_cast<int>(::getpid())};
  auto idx = ProcessIndex::scan(reader);
  for (int a : idx.ancestors(::getpid())) exempt.insert(a);
  return exempt;
}

// Opens a pidfd for Terminate step `s` and proves it is the process the check
// listed; nullopt (with s.result, and s.done when it is gone) otherwise.
std::optional<UniqueFd> open_target(ReapStep& s, const ProcReader& reader, bool own_ns,
                                    const std::set<int>& exempt, const HygieneOptions& h,
                                    const ReapOptions& o) {
  if (!own_ns) {
    s.result = "refused: " + h.proc_root + " is not this process's PID namespace";
    return std::nullopt;
  }
  if (exempt.count(s.pid) || s.pid <= 1) {
    s.result = "refused: the caller, an ancestor of it, or init";
    return std::nullopt;
  }
  UniqueFd fd;
  if (auto ec = pidfd_open(s.pid, fd)) {
    if (ec.value() == ESRCH) {
      s.result = "gone already";
      s.done = true;
    } else {
      s.result = "refused: pidfd_open: " + ec.message();
    }
    return std::nullopt;
  }
  // The pidfd pins the pid to one process now: prove it is the one the
  // check listed before it is ever signalled.
  auto info = read_proc_info(reader, s.pid);
  if (!info) {
    s.result = "gone already";
    s.done = true;
    return std::nullopt;
  }
  if (info->start_ticks != s.start_ticks) {
    s.result = "refused: pid " + std::to_string(s.pid) +
               " now names another process (its start time changed)";
    return std::nullopt;
  }
  if (info->uid != s.uid || (!o.all_users && info->uid != o.uid)) {
    s.result = "refused: its owner is not the one the check saw, or not you";
    return std::nullopt;
  }
  if (info->zombie()) {
    s.result = "exited already (a zombie until its parent reaps it)";
    s.done = true;
    return std::nullopt;
  }
  s.state = info->state;
  return fd;
}

// SIGTERM (SIGCONT to a stopped one), then SIGKILL to what is left after
// term_timeout; each step's result says which ended it.
void terminate(std::vector<Target>& targets, const ReapOptions& o) {
  const Nanos t0 = monotonic_now();
  for (auto& t : targets) {
    if (auto ec = pidfd_signal(t.fd.get(), SIGTERM); ec && ec.value() == ESRCH) t.exited = true;
    // A stopped process keeps SIGTERM pending until it runs again.
    if (t.step->state == 'T' || t.step->state == 't') (void)pidfd_signal(t.fd.get(), SIGCONT);
  }
  wait_exits(targets, t0 + o.term_timeout);
  const Nanos t1 = monotonic_now();
  bool any_kill = false;
  for (auto& t : targets) {
    if (t.exited) continue;
    t.killed = any_kill = true;
    (void)pidfd_signal(t.fd.get(), SIGKILL);
  }
  if (any_kill) wait_exits(targets, monotonic_now() + o.kill_timeout);
  for (auto& t : targets) {
    ReapStep& s = *t.step;
    s.done = t.exited;
    if (!t.exited)
      s.result = "still alive after SIGKILL (uninterruptible, in the driver?)";
    else if (!t.killed)
      s.result = "terminated by SIGTERM in " + format_duration(t.exited_at ? t.exited_at - t0 : 0);
    else
      s.result = "killed by SIGKILL after SIGTERM went unanswered for " + format_duration(t1 - t0);
  }
}

// The leftover processes: every target opened and verified first, then
// signalled in plan order.
void terminate_processes(ReapPlan& plan, const HygieneOptions& h, const ReapOptions& o,
                         const ProcReader& reader) {
  const bool own_ns = own_namespace(h.proc_root);
  const std::set<int> exempt = exempt_pids(reader);
  std::vector<Target> targets;
  for (auto& s : plan.steps) {
    if (s.kind != ReapStep::Kind::Terminate) continue;
    if (auto fd = open_target(s, reader, own_ns, exempt, h, o))
      targets.push_back({&s, std::move(*fd)});
  }
  terminate(targets, o);
}

// (entry name, pid) of every live process that maps or holds a file under
// the real /dev/shm folder `shm_real`.
std::set<std::pair<std::string, int>> live_shm_users(const std::string& proc_root,
                                                     const std::string& shm_real,
                                                     const ProcessIndex& idx) {
  std::set<std::pair<std::string, int>> users;
  int unused = 0;
  auto collect = [&](const std::map<int, std::vector<FileRef>>& src) {
    for (const auto& [pid, files] : src) {
      const ProcInfo* p = idx.get(pid);
      if (!p || p->zombie()) continue;
      for (const auto& f : files)
        if (!f.deleted) users.emplace(f.path.substr(f.path.rfind('/') + 1), pid);
    }
  };
  collect(scan_mapped_files(proc_root, shm_real, &unused));
  collect(scan_open_files(proc_root, PathPattern::under_dir(shm_real), &unused));
  return users;
}

// Removes /dev/shm entry `s` (in the folder `dfd`) if it is still the file
// the check saw, still ours, and unused now.
void remove_shm_entry(ReapStep& s, int dfd, const std::set<std::pair<std::string, int>>& users,
                      const ProcessIndex& idx, const ReapOptions& o) {
  struct stat st;
  if (::fstatat(dfd, s.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    s.result = errno == ENOENT ? "gone already" : std::string("refused: ") + std::strerror(errno);
    s.done = errno == ENOENT;
    return;
  }
  if (s.inode && st.st_ino != s.inode) {
    s.result = "refused: replaced by another file since the check";
    return;
  }
  if (st.st_uid != s.uid || (!o.all_users && st.st_uid != o.uid)) {
    s.result = "refused: its owner is not the one the check saw, or not you";
    return;
  }
  std::vector<int> live;
  for (const auto& [name, pid] : users)
    if (name == s.name) live.push_back(pid);
  if (auto creator = torch_creator_pid(s.name)) {
    const ProcInfo* c = idx.get(*creator);
    // Alive at plan time means it had to be terminated first: it must be gone now.
    if (s.after_processes && c && !c->zombie()) live.push_back(*creator);
  }
  if (!live.empty()) {
    s.result = "kept: still used by " + join_ints(live);
    return;
  }
  if (::unlinkat(dfd, s.name.c_str(), 0) != 0) {
    s.result = std::string("failed: ") + std::strerror(errno);
    return;
  }
  s.result = "removed";
  s.done = true;
}

// The /dev/shm removals, re-checked now that the processes are gone.
void remove_shm_entries(ReapPlan& plan, const HygieneOptions& h, const ReapOptions& o,
                        const ProcReader& reader) {
  bool any_remove = std::any_of(plan.steps.begin(), plan.steps.end(),
                                [](auto& s) { return s.kind == ReapStep::Kind::Remove; });
  if (!any_remove) return;
  char buf[PATH_MAX];
  const std::string shm_real = ::realpath(h.shm_dir.c_str(), buf) ? std::string(buf) : h.shm_dir;
  auto idx = ProcessIndex::scan(reader);
  auto users = live_shm_users(h.proc_root, shm_real, idx);
  UniqueFd dfd(::open(h.shm_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  const int open_errno = errno;
  for (auto& s : plan.steps) {
    if (s.kind != ReapStep::Kind::Remove) continue;
    if (!dfd) {
      s.result = "refused: cannot open " + h.shm_dir + ": " + std::strerror(open_errno);
      continue;
    }
    remove_shm_entry(s, dfd.get(), users, idx, o);
  }
}

// Removes temp-dir residue `s` (named `name` in h.tmp_dir) if it is still
// the entry the check saw, still ours, and nobody holds it now.
void remove_tmp_entry(ReapStep& s, const std::string& name, const HygieneOptions& h,
                      const ReapOptions& o, const std::map<std::string, TmpHold>& tmp_holds) {
  if (h.tmp_dir.empty() || s.name != h.tmp_dir + "/" + name ||
      !known_residue(classify_tmp_name(name))) {
    s.result = "refused: not residue of the temp dir this check looked at";
    return;
  }
  auto e = stat_tmp(h.tmp_dir, name, TmpScanLimits{1, 1});
  if (!e) {
    s.result = "gone already";
    s.done = true;
    return;
  }
  if (s.inode && e->inode != s.inode) {
    s.result = "refused: replaced by another entry since the check";
    return;
  }
  if (e->uid != s.uid || (!o.all_users && e->uid != o.uid)) {
    s.result = "refused: its owner is not the one the check saw, or not you";
    return;
  }
  if (auto it = tmp_holds.find(name); it != tmp_holds.end() && it->second.held()) {
    s.result = it->second.pids.empty() ? "kept: a socket under it is bound again"
                                       : "kept: still held by " + join_ints(it->second.pids);
    return;
  }
  std::error_code ec;
  std::filesystem::remove_all(s.name, ec);
  if (ec) {
    s.result = "failed: " + ec.message();
    return;
  }
  s.result = "removed";
  s.done = true;
}

// Temp-dir residue, re-checked now that the processes are gone: the same
// entry, still residue, and nobody holds it.
void remove_tmp_residue(ReapPlan& plan, const HygieneOptions& h, const ReapOptions& o) {
  std::vector<std::string> tmp_names;
  for (const auto& s : plan.steps)
    if (s.kind == ReapStep::Kind::RemoveTmp)
      tmp_names.push_back(s.name.substr(s.name.rfind('/') + 1));
  auto tmp_holds = tmp_names.empty() || h.tmp_dir.empty()
                       ? std::map<std::string, TmpHold>{}
                       : find_tmp_holders(h.proc_root, h.tmp_dir, tmp_names);
  for (auto& s : plan.steps) {
    if (s.kind != ReapStep::Kind::RemoveTmp) continue;
    remove_tmp_entry(s, s.name.substr(s.name.rfind('/') + 1), h, o, tmp_holds);
  }
}

// Fault cgroups: empty once their processes are gone.
void remove_cgroups(ReapPlan& plan, const ReapOptions& o) {
  for (auto& s : plan.steps) {
    if (s.kind != ReapStep::Kind::RemoveCgroup) continue;
    struct stat st;
    if (::stat(s.name.c_str(), &st) != 0) {
      s.done = errno == ENOENT;
      s.result = s.done ? "gone already" : std::string("refused: ") + std::strerror(errno);
      continue;
    }
    if (st.st_uid != s.uid || (!o.all_users && st.st_uid != o.uid)) {
      s.result = "refused: its owner is not the one the check saw, or not you";
      continue;
    }
    if (Status rm = remove_cgroup_dir(s.name, kSecond); !rm) {
      const std::string& err = rm.error().what;
      s.result = err.find(std::strerror(EBUSY)) != std::string::npos
                     ? "kept: processes are still in it"
                     : "failed: " + err;
      continue;
    }
    s.result = "removed";
    s.done = true;
  }
}

}  // namespace

ReapResult execute_reap(ReapPlan plan, const HygieneOptions& h, const ReapOptions& o) {
  ProcReader reader(h.proc_root);
  terminate_processes(plan, h, o, reader);
  remove_shm_entries(plan, h, o, reader);
  remove_tmp_residue(plan, h, o);
  remove_cgroups(plan, o);
  ReapResult result;
  result.plan = std::move(plan);
  result.after = inspect_machine(h);
  return result;
}

}  // namespace aftermath
