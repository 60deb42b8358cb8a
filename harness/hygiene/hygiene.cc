#include "harness/hygiene/hygiene.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>

#include "harness/core/device_json.h"
#include "harness/observe/device_observer.h"
#include "harness/observe/process_index.h"
#include "harness/observe/shm.h"

namespace aftermath {

using nlohmann::json;

namespace {

std::int64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * kSecond + ts.tv_nsec;
}

// Boot time in ns since the epoch, from the proc root's stat ("btime"), to
// put a process's start (clock ticks since boot) on the wall clock. nullopt
// for a fake tree without it.
std::optional<std::int64_t> boot_time_ns(const std::string& proc_root) {
  auto text = read_small_file(proc_root + "/stat");
  if (!text) return std::nullopt;
  auto pos = text->find("\nbtime ");
  if (pos == std::string::npos) return std::nullopt;
  long long v = 0;
  const char* b = text->data() + pos + 7;
  auto r = std::from_chars(b, text->data() + text->size(), v);
  if (r.ec != std::errc()) return std::nullopt;
  return static_cast<std::int64_t>(v) * kSecond;
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string real_dir(const std::string& dir) {
  char buf[PATH_MAX];
  return ::realpath(dir.c_str(), buf) ? std::string(buf) : dir;
}

std::string basename_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool interesting(const std::string& name, const std::vector<std::string>& prefixes) {
  for (const auto& p : prefixes)
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

// CAP_SYS_PTRACE (bit 19) in this process's effective set.
bool has_cap_sys_ptrace() {
  auto text = read_small_file("/proc/self/status");
  if (!text) return false;
  auto pos = text->find("\nCapEff:");
  if (pos == std::string::npos) return false;
  unsigned long long caps = 0;
  const char* b = text->data() + pos + 8;
  while (*b == ' ' || *b == '\t') ++b;
  auto r = std::from_chars(b, text->data() + text->size(), caps, 16);
  return r.ec == std::errc() && (caps >> 19) & 1;
}

std::string describe(const HygieneProcess& p) {
  return "pid " + std::to_string(p.pid) + " (" + p.comm + ", uid " + std::to_string(p.uid) + ")";
}

std::string holdings(const HygieneProcess& p) {
  std::vector<std::string> h = p.devices;
  for (const auto& s : p.shm) h.push_back(s);
  if (!p.gpus.empty()) h.push_back(format_bytes(p.gpu_bytes) + " on GPU " + join_ints(p.gpus));
  return join(h);
}

// The temp dir's residue (pymp-*, torch-shm-dir-*, torchelastic_*): a
// leftover when nobody holds it and its maker is provably gone (the sockets it
// bound are unbound) or it is older than tmp_min_age. Residue held only by
// leftover processes goes once reap has ended them.
void judge_tmp(const HygieneOptions& o, std::int64_t now, const std::set<int>& leftovers,
               CheckReport& rep, std::set<int>& unreadable) {
  std::string error;
  auto table = scan_tmp(o.tmp_dir, &error);
  if (!table) {
    rep.notes.push_back("temp dir not inspected: " + error);
    return;
  }
  std::vector<std::string> names;
  for (const auto& [name, e] : *table)
    if (known_residue(e.kind)) names.push_back(name);
  auto holds = find_tmp_holders(o.proc_root, o.tmp_dir, names, nullptr, &unreadable);
  for (const auto& name : names) {
    const TmpEntry& e = table->at(name);
    HygieneTmp t;
    t.name = name;
    t.kind = e.kind;
    t.bytes = e.bytes;
    t.bytes_partial = e.bytes_partial;
    t.uid = e.uid;
    t.age = now - e.mtime_ns;
    t.inode = e.inode;
    const TmpHold* h = nullptr;
    if (auto it = holds.find(name); it != holds.end()) {
      h = &it->second;
      t.held_by = h->pids;
      t.bound = h->bound;
    }
    t.maker_gone = tmp_maker_gone(e, h);
    bool held = h && h->held();
    std::string path = o.tmp_dir + "/" + name;
    if (!held && (t.maker_gone || t.age >= o.tmp_min_age)) {
      t.leftover = true;
      t.why = t.maker_gone ? "leftover: its maker is gone (" + join(e.sockets) +
                                 " no longer bound), nobody holds it"
                           : "leftover: nobody holds it, older than " + format_age(o.tmp_min_age);
      rep.problems.push_back(path + " (" + std::string(to_string(t.kind)) + ", " +
                             format_bytes(t.bytes) + (t.bytes_partial ? "+" : "") + ", uid " +
                             std::to_string(t.uid) + ", " + format_age(t.age) + " old): " + t.why);
    } else if (held && !t.held_by.empty() &&
               std::all_of(t.held_by.begin(), t.held_by.end(),
                           [&](int p) { return leftovers.count(p) > 0; })) {
      t.freed_by_reap = true;
      t.why = "leftover once leftover process(es) " + join_ints(t.held_by) + " are gone";
    } else if (!t.held_by.empty()) {
      t.why = "in use by " + join_ints(t.held_by);
    } else if (held) {
      t.why = "in use: a socket under it is bound (" + join(t.bound) + ")";
    } else {
      t.why = "young (" + format_age(t.age) + "): its maker may still be using it";
    }
    rep.tmp.push_back(std::move(t));
  }
}

}  // namespace

std::string join_ints(const std::vector<int>& v) {
  std::vector<std::string> s;
  for (int x : v) s.push_back(std::to_string(x));
  return join(s);
}

std::string_view to_string(CreatorState s) {
  switch (s) {
    case CreatorState::Alive:
      return "alive";
    case CreatorState::Gone:
      return "gone";
    case CreatorState::Unknown:
      return "unknown";
  }
  return "unknown";
}

std::optional<int> torch_creator_pid(std::string_view name) {
  if (name.rfind("torch_", 0) != 0) return std::nullopt;
  name.remove_prefix(6);
  auto us = name.find('_');
  if (us == std::string_view::npos || us == 0) return std::nullopt;
  int pid = 0;
  auto r = std::from_chars(name.data(), name.data() + us, pid);
  if (r.ec != std::errc() || r.ptr != name.data() + us || pid <= 0) return std::nullopt;
  return pid;
}

std::string format_age(Nanos age) {
  if (age < 0) age = 0;
  char buf[48];
  long long s = age / kSecond;
  if (s >= 86400)
    std::snprintf(buf, sizeof buf, "%lldd%lldh", s / 86400, (s % 86400) / 3600);
  else if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, (s % 3600) / 60);
  else if (s >= 60)
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  else if (s >= 1)
    std::snprintf(buf, sizeof buf, "%llds", s);
  else
    std::snprintf(buf, sizeof buf, "%lldms", static_cast<long long>(age / kMilli));
  return buf;
}

CheckReport machine_check(const HygieneOptions& o) {
  CheckReport rep;
  rep.proc_root = o.proc_root;
  rep.shm_dir = o.shm_dir;
  rep.device_pattern = o.device_pattern;
  const std::int64_t now = o.now_wall_ns ? o.now_wall_ns : realtime_ns();
  ProcReader reader(o.proc_root);
  ProcessIndex idx = ProcessIndex::scan(reader);
  JobRef nobody;  // no job here: only orphanhood matters
  nobody.orphan_parents = o.orphan_parents;

  // GPUs as the driver sees them.
  std::map<int, std::pair<std::vector<int>, std::int64_t>> gpu_use;  // pid -> GPUs, bytes
  if (!o.nvml) {
    rep.gpu_unavailable = "NVML not consulted";
  } else if (auto why = o.nvml->init(); !why.empty()) {
    rep.gpu_unavailable = why;
  } else {
    rep.driver_version = o.nvml->driver_version();
    for (const auto& d : o.nvml->devices()) {
      HygieneGpu g;
      g.info = {static_cast<int>(d.index), d.uuid, d.pci_bus_id, d.name,
                static_cast<std::int64_t>(d.total)};
      g.used = static_cast<std::int64_t>(d.used);
      g.free = static_cast<std::int64_t>(d.free);
      g.error = d.error;
      g.processes = to_gpu_sample(0, d, idx, nobody, o.nvml_pid_level).processes;
      for (const auto& p : g.processes) {
        if (!p.pid) {
          rep.notes.push_back("GPU " + std::to_string(g.info.index) + ": NVML pid " +
                              std::to_string(p.nvml_pid) + " (" + format_bytes(p.used_bytes) +
                              ") is not visible in " + o.proc_root +
                              " (another PID namespace, or a process that is gone)");
          continue;
        }
        auto& u = gpu_use[p.pid];
        u.first.push_back(g.info.index);
        if (p.used_bytes > 0) u.second += p.used_bytes;
      }
      if (!g.error.empty())
        rep.problems.push_back("GPU " + std::to_string(g.info.index) + ": " + g.error);
      rep.gpus.push_back(std::move(g));
    }
  }

  // The allocation probe: one child per GPU NVML knows, else one for all.
  if (!o.probe) {
    rep.probe_unavailable = "no probe";
  } else {
    std::vector<GpuInfo> infos;
    for (const auto& g : rep.gpus)
      if (g.error.empty() && !g.info.uuid.empty()) infos.push_back(g.info);
    ProbeReport pr = o.probe->run(infos);
    rep.probe_unavailable = pr.unavailable;
    for (auto& p : pr.gpus) {
      HygieneGpu* home = nullptr;
      for (auto& g : rep.gpus)
        if ((p.index >= 0 && g.info.index == p.index) ||
            (p.index < 0 && !p.pci_bus_id.empty() && g.info.pci_bus_id == p.pci_bus_id))
          home = &g;
      if (p.status != ProbeStatus::Ok)
        rep.problems.push_back("GPU " + std::to_string(home ? home->info.index : p.ordinal) +
                               " allocation probe " + std::string(to_string(p.status)) +
                               (p.error.empty() ? "" : ": " + p.error));
      if (home)
        home->probe = p;
      else
        rep.unmapped_probes.push_back(p);
    }
  }

  // Who holds device files and /dev/shm entries.
  std::string pattern_error;
  auto pattern = PathPattern::parse(o.device_pattern, &pattern_error);
  if (!pattern) rep.problems.push_back(pattern_error);
  std::set<int> unreadable;  // fds, maps or cwd refused
  std::map<int, std::vector<FileRef>> dev_files;
  if (pattern) dev_files = scan_open_files(o.proc_root, *pattern, nullptr, &unreadable);
  const std::string shm_real = real_dir(o.shm_dir);
  auto shm_held = scan_open_files(o.proc_root, PathPattern::under_dir(shm_real), nullptr, &unreadable);
  auto shm_mapped = scan_mapped_files(o.proc_root, shm_real, nullptr, &unreadable);

  std::map<int, std::vector<std::string>> shm_of;  // pid -> entries it maps or holds
  std::map<std::string, std::vector<int>> mapped_by, held_by;
  auto note_shm = [&](const std::map<int, std::vector<FileRef>>& src,
                      std::map<std::string, std::vector<int>>& by) {
    for (const auto& [pid, files] : src) {
      const ProcInfo* p = idx.get(pid);
      if (!p || p->zombie()) continue;
      for (const auto& f : files) {
        std::string name = basename_of(f.path);
        if (!interesting(name, o.shm_prefixes)) continue;
        std::string label = f.deleted ? name + " (deleted)" : name;
        auto& v = shm_of[pid];
        if (std::find(v.begin(), v.end(), label) == v.end()) v.push_back(label);
        if (!f.deleted) {
          auto& b = by[name];
          if (std::find(b.begin(), b.end(), pid) == b.end()) b.push_back(pid);
        }
      }
    }
  };
  note_shm(shm_mapped, mapped_by);
  note_shm(shm_held, held_by);

  // Every process that holds something.
  std::map<int, HygieneProcess> listed;
  auto list = [&](int pid) -> HygieneProcess* {
    auto it = listed.find(pid);
    if (it != listed.end()) return &it->second;
    const ProcInfo* p = idx.get(pid);
    if (!p) return nullptr;  // started after the index: it will be seen next time
    HygieneProcess h;
    h.pid = pid;
    h.ppid = p->ppid;
    h.state = p->state;
    h.uid = p->uid;
    h.start_ticks = p->start_ticks;
    h.comm = p->comm;
    h.cmdline = reader.cmdline(pid);
    if (h.cmdline.size() > 200) h.cmdline = h.cmdline.substr(0, 200) + "...";
    h.nspid = p->nspid;
    h.orphan = nobody.orphan(*p);
    h.zombie = p->zombie();
    h.daemon = o.daemon_comms.count(p->comm) > 0;
    return &listed.emplace(pid, std::move(h)).first->second;
  };
  for (const auto& [pid, files] : dev_files)
    if (auto* h = list(pid))
      for (const auto& f : files) h->devices.push_back(f.path + (f.deleted ? " (deleted)" : ""));
  for (const auto& [pid, names] : shm_of)
    if (auto* h = list(pid)) h->shm = names;
  for (const auto& [pid, use] : gpu_use) {
    if (auto* h = list(pid)) {
      h->gpus = use.first;
      h->gpu_bytes = use.second;
    }
  }

  // Leftover trees: an orphan that holds something, and every holder below it.
  // Never the caller or its ancestors.
  std::set<int> exempt{static_cast<int>(::getpid())};
  for (int a : idx.ancestors(::getpid())) exempt.insert(a);
  std::set<int> roots;
  for (auto& [pid, h] : listed)
    if (h.orphan && !h.daemon && !h.zombie && !exempt.count(pid)) roots.insert(pid);
  for (auto& [pid, h] : listed) {
    if (h.zombie || exempt.count(pid)) continue;
    if (roots.count(pid)) {
      h.leftover = true;
      h.leftover_root = pid;
      continue;
    }
    int depth = 1;
    for (int a : idx.ancestors(pid)) {
      if (exempt.count(a)) break;
      if (roots.count(a)) {
        h.leftover = true;
        h.leftover_root = a;
        h.depth = depth;
        break;
      }
      ++depth;
    }
  }
  std::set<int> leftovers;
  for (const auto& [pid, h] : listed)
    if (h.leftover) leftovers.insert(pid);
  // Zombies whose parent is a leftover: terminating the parent gets them reaped.
  for (const auto& [pid, p] : idx.all()) {
    if (!p.zombie() || !leftovers.count(p.ppid)) continue;
    if (auto* h = list(pid)) {
      const auto& parent = listed.at(p.ppid);
      h->leftover = true;
      h->leftover_root = parent.leftover_root;
      h->depth = parent.depth + 1;
    }
  }
  for (auto& [pid, h] : listed) {
    if (h.zombie) {
      h.why = h.leftover ? "zombie: child of leftover " + std::to_string(h.ppid)
                         : "zombie holding " + holdings(h) + "; its parent " +
                               std::to_string(h.ppid) + " should reap it";
      rep.problems.push_back(describe(h) + ": " + h.why);
    } else if (h.leftover) {
      h.why = h.depth == 0 ? "leftover: orphan (re-parented to " + std::to_string(h.ppid) + ")"
                           : "leftover: below orphan " + std::to_string(h.leftover_root);
      rep.problems.push_back(describe(h) + " holds " + holdings(h) + ": " + h.why);
    } else if (exempt.count(pid)) {
      h.why = "in use: the caller itself";
    } else if (h.daemon) {
      h.why = "in use: a known daemon";
    } else {
      h.why = "in use: its parent " + std::to_string(h.ppid) + " is alive";
    }
  }
  for (auto& [_, h] : listed) rep.processes.push_back(std::move(h));
  std::sort(rep.processes.begin(), rep.processes.end(), [](const auto& a, const auto& b) {
    if (a.leftover != b.leftover) return a.leftover;
    if (a.leftover_root != b.leftover_root) return a.leftover_root < b.leftover_root;
    if (a.depth != b.depth) return a.depth < b.depth;
    return a.pid < b.pid;
  });

  // /dev/shm entries.
  std::set<int> inner_pids;  // pids of processes as nested PID namespaces see them
  for (const auto& [pid, p] : idx.all())
    for (size_t i = 1; i < p.nspid.size(); ++i) inner_pids.insert(p.nspid[i]);
  auto boot = boot_time_ns(o.proc_root);
  const long ticks = ::sysconf(_SC_CLK_TCK);
  int dfd = ::open(o.shm_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  for (const auto& [name, e] : scan_shm(o.shm_dir)) {
    if (!interesting(name, o.shm_prefixes)) continue;
    HygieneShm s;
    s.name = name;
    s.bytes = e.bytes;
    s.allocated = e.allocated;
    s.uid = e.uid;
    s.age = now - e.mtime_ns;
    std::int64_t ctime_ns = e.mtime_ns;
    struct stat st;
    if (dfd >= 0 && ::fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      s.inode = st.st_ino;
      ctime_ns = static_cast<std::int64_t>(st.st_ctim.tv_sec) * kSecond + st.st_ctim.tv_nsec;
    }
    s.creator_pid = torch_creator_pid(name);
    std::string creator_note;
    if (s.creator_pid) {
      const ProcInfo* c = idx.get(*s.creator_pid);
      s.creator = c && !c->zombie() ? CreatorState::Alive : CreatorState::Gone;
      // A live process that started after the entry existed only reuses the pid.
      if (s.creator == CreatorState::Alive && boot && ticks > 0) {
        std::int64_t started = *boot + static_cast<std::int64_t>(c->start_ticks) * kSecond / ticks;
        if (started > ctime_ns + 2 * kSecond) s.creator = CreatorState::Gone;
      }
      // The name carries the pid as its creator saw it: in a PID namespace
      // below ours that is not the pid here, so "gone" proves nothing.
      if (s.creator == CreatorState::Gone && inner_pids.count(*s.creator_pid)) {
        s.creator = CreatorState::Unknown;
        creator_note = " (pid " + std::to_string(*s.creator_pid) + " lives in a nested PID namespace)";
      }
    }
    if (auto it = mapped_by.find(name); it != mapped_by.end()) s.mapped_by = it->second;
    if (auto it = held_by.find(name); it != held_by.end()) s.held_by = it->second;
    std::vector<int> users = s.mapped_by;
    for (int p : s.held_by)
      if (std::find(users.begin(), users.end(), p) == users.end()) users.push_back(p);
    bool creator_leftover = s.creator_pid && leftovers.count(*s.creator_pid);
    bool users_leftover =
        std::all_of(users.begin(), users.end(), [&](int p) { return leftovers.count(p) > 0; });
    std::string creator_text =
        (s.creator_pid ? "creator " + std::to_string(*s.creator_pid) : "creator unknown") +
        creator_note;
    // A creator provably gone cannot be about to map it: no age is waited for.
    bool old_enough = s.creator == CreatorState::Gone || s.age >= o.shm_min_age;
    if (s.creator != CreatorState::Alive && users.empty() && old_enough) {
      s.leftover = true;
      s.why = "leftover: " + creator_text + (s.creator == CreatorState::Gone ? " is gone" : "") +
              ", no process maps or holds it";
      rep.problems.push_back(o.shm_dir + "/" + name + " (" + format_bytes(s.bytes) + ", " +
                             format_age(s.age) + " old): " + s.why);
    } else if ((s.creator != CreatorState::Alive || creator_leftover) && users_leftover &&
               (!users.empty() || creator_leftover)) {
      s.freed_by_reap = true;
      s.why = "leftover once leftover process(es) " + join_ints(users) + " are gone";
    } else if (!users.empty()) {
      s.why = "in use by " + join_ints(users);
    } else if (s.creator == CreatorState::Alive) {
      s.why = "in use: " + creator_text + " is alive";
    } else {
      s.why = "young (" + format_age(s.age) + "): its creator may still map it";
    }
    rep.shm.push_back(std::move(s));
  }
  if (dfd >= 0) ::close(dfd);

  // Fault cgroups whose harness is gone.
  rep.cgroup_dir = o.cgroup_dir;
  if (rep.cgroup_dir == "auto") {
    rep.cgroup_dir.clear();
    if (o.proc_root == "/proc") {
      auto home = find_memory_cgroup_home();
      if (home) rep.cgroup_dir = home->dir;
    }
  }
  if (!rep.cgroup_dir.empty()) {
    for (auto& f : list_fault_cgroups(rep.cgroup_dir, o.proc_root)) {
      HygieneCgroup g;
      static_cast<FaultCgroupEntry&>(g) = std::move(f);
      g.leftover = !g.owner_alive;
      if (g.leftover) {
        g.why = "leftover: aftermath pid " + std::to_string(g.owner) + " made it and is gone" +
                (g.members.empty() ? "" : "; processes " + join_ints(g.members) + " are still in it");
        rep.problems.push_back(g.dir + ": " + g.why);
      } else {
        g.why = "in use: aftermath pid " + std::to_string(g.owner) + " is alive";
      }
      rep.cgroups.push_back(std::move(g));
    }
  }

  // Temp-dir residue.
  rep.tmp_dir = o.tmp_dir;
  if (!o.tmp_dir.empty()) judge_tmp(o, now, leftovers, rep, unreadable);

  // Who could not be inspected, and whether it could change a verdict.
  const Caller caller = this_caller();
  for (int pid : unreadable) {
    const ProcInfo* p = idx.get(pid);
    if (!p) continue;  // gone meanwhile
    bool may_be_leftover = nobody.orphan(*p) && !p->zombie() && pid > 1 && !exempt.count(pid) &&
                           !o.daemon_comms.count(p->comm);
    rep.uninspected.push_back(judge_uninspected(*p, may_be_leftover, rep, caller));
  }
  rep.unreadable_processes = static_cast<int>(rep.uninspected.size());
  int shown = 0, hidden = 0;
  for (const auto& u : rep.uninspected) {
    if (!u.matters) continue;
    if (++shown > 5) {
      ++hidden;
      continue;
    }
    rep.notes.push_back("pid " + std::to_string(u.pid) + " (" + u.comm + ", uid " +
                        std::to_string(u.uid) + ") could not be inspected: " + u.why + "; " +
                        u.matters_why);
  }
  if (hidden)
    rep.notes.push_back(std::to_string(hidden) + " more process(es) could not be inspected (see --json)");
  if (!rep.gpu_unavailable.empty())
    rep.notes.push_back("GPU memory not inspected: " + rep.gpu_unavailable);
  if (!rep.probe_unavailable.empty())
    rep.notes.push_back("no allocation probe: " + rep.probe_unavailable);
  return rep;
}

Caller this_caller() {
  Caller c;
  c.uid = ::getuid();
  c.root = ::geteuid() == 0;
  c.ptrace_cap = has_cap_sys_ptrace();
  return c;
}

Uninspected judge_uninspected(const ProcInfo& p, bool may_be_leftover, const CheckReport& report,
                              const Caller& caller) {
  Uninspected u;
  u.pid = p.pid;
  u.comm = p.comm;
  u.uid = p.uid;
  if (!caller.root && p.uid != caller.uid)
    u.why = "owned by uid " + std::to_string(p.uid) + " (run as root to see other users')";
  else if (caller.root && !caller.ptrace_cap)
    u.why = "refused: this process lacks CAP_SYS_PTRACE and that one holds capabilities it does not";
  else if (caller.root)
    u.why = "refused even to root with CAP_SYS_PTRACE: a security module guards it";
  else
    u.why = "refused: it is not dumpable, or holds capabilities this process lacks";
  // Some entry is a leftover because nobody was seen using it.
  bool judged_unused = std::any_of(report.shm.begin(), report.shm.end(),
                                   [](const HygieneShm& s) { return s.leftover; }) ||
                       std::any_of(report.tmp.begin(), report.tmp.end(),
                                   [](const HygieneTmp& t) { return t.leftover; });
  if (may_be_leftover) {
    u.matters = true;
    u.matters_why = "it is an orphan: it may be a leftover holding a GPU or a /dev/shm entry";
  } else if (judged_unused) {
    u.matters = true;
    u.matters_why = "the leftover entries above assume it maps and holds none of them";
  } else {
    u.matters_why = "not a possible leftover, and no entry's verdict rests on what it uses";
  }
  return u;
}

nlohmann::json to_json(const CheckReport& r) {
  json gpus = json::array();
  auto probe_json = [](const GpuProbe& p) { return to_json(p); };
  for (const auto& g : r.gpus) {
    json procs = json::array();
    for (const auto& p : g.processes)
      procs.push_back(json{{"nvml_pid", p.nvml_pid},
                           {"pid", p.pid},
                           {"nspid", p.nspid},
                           {"comm", p.comm},
                           {"used_bytes", p.used_bytes},
                           {"orphan", p.orphan}});
    gpus.push_back(json{{"index", g.info.index},
                        {"uuid", g.info.uuid},
                        {"pci_bus_id", g.info.pci_bus_id},
                        {"name", g.info.name},
                        {"total_bytes", g.info.total},
                        {"used_bytes", g.used},
                        {"free_bytes", g.free},
                        {"processes", procs},
                        {"probe", g.probe ? probe_json(*g.probe) : json(nullptr)},
                        {"error", g.error}});
  }
  json unmapped = json::array();
  for (const auto& p : r.unmapped_probes) unmapped.push_back(probe_json(p));
  json procs = json::array();
  for (const auto& p : r.processes)
    procs.push_back(json{{"pid", p.pid},
                         {"ppid", p.ppid},
                         {"state", std::string(1, p.state)},
                         {"uid", p.uid},
                         {"comm", p.comm},
                         {"cmdline", p.cmdline},
                         {"nspid", p.nspid},
                         {"devices", p.devices},
                         {"shm", p.shm},
                         {"gpus", p.gpus},
                         {"gpu_bytes", p.gpu_bytes},
                         {"orphan", p.orphan},
                         {"zombie", p.zombie},
                         {"daemon", p.daemon},
                         {"leftover", p.leftover},
                         {"leftover_root", p.leftover_root},
                         {"why", p.why}});
  json shm = json::array();
  for (const auto& s : r.shm)
    shm.push_back(json{{"name", s.name},
                       {"bytes", s.bytes},
                       {"allocated_bytes", s.allocated},
                       {"uid", s.uid},
                       {"age_ms", to_ms(s.age)},
                       {"creator_pid", s.creator_pid ? json(*s.creator_pid) : json(nullptr)},
                       {"creator", std::string(to_string(s.creator))},
                       {"mapped_by", s.mapped_by},
                       {"held_by", s.held_by},
                       {"leftover", s.leftover},
                       {"freed_by_reap", s.freed_by_reap},
                       {"why", s.why}});
  json tmp = json::array();
  for (const auto& t : r.tmp)
    tmp.push_back(json{{"name", t.name},
                       {"kind", std::string(to_string(t.kind))},
                       {"bytes", t.bytes},
                       {"bytes_partial", t.bytes_partial},
                       {"uid", t.uid},
                       {"age_ms", to_ms(t.age)},
                       {"held_by", t.held_by},
                       {"bound", t.bound},
                       {"maker_gone", t.maker_gone},
                       {"leftover", t.leftover},
                       {"freed_by_reap", t.freed_by_reap},
                       {"why", t.why}});
  json uninspected = json::array();
  for (const auto& u : r.uninspected)
    uninspected.push_back(json{{"pid", u.pid},
                               {"comm", u.comm},
                               {"uid", u.uid},
                               {"why", u.why},
                               {"matters", u.matters},
                               {"matters_why", u.matters_why}});
  json cgroups = json::array();
  for (const auto& g : r.cgroups)
    cgroups.push_back(json{{"dir", g.dir},
                           {"owner", g.owner},
                           {"owner_alive", g.owner_alive},
                           {"members", g.members},
                           {"uid", g.uid},
                           {"leftover", g.leftover},
                           {"why", g.why}});
  return json{
      {"clean", r.clean()},
      {"problems", r.problems},
      {"notes", r.notes},
      {"gpu_unavailable", r.gpu_unavailable},
      {"probe_unavailable", r.probe_unavailable},
      {"driver_version", r.driver_version},
      {"gpus", gpus},
      {"unmapped_probes", unmapped},
      {"processes", procs},
      {"shm", shm},
      {"tmp", tmp},
      {"cgroups", cgroups},
      {"unreadable_processes", r.unreadable_processes},
      {"uninspected", uninspected},
      {"roots",
       json{{"proc", r.proc_root},
            {"shm", r.shm_dir},
            {"tmp", r.tmp_dir},
            {"device_pattern", r.device_pattern},
            {"cgroup", r.cgroup_dir}}}};
}

std::string format_check_table(const CheckReport& r) {
  std::string out;
  char line[512];
  auto add = [&](const char* fmt, auto... args) {
    std::snprintf(line, sizeof line, fmt, args...);
    out += line;
  };
  auto cut = [](std::string s, size_t n) { return s.size() > n ? s.substr(0, n - 3) + "..." : s; };
  auto probe_text = [&](const std::optional<GpuProbe>& p) -> std::string {
    if (!p) return "-";
    if (p->status == ProbeStatus::Ok)
      return "ok (" + format_bytes(p->free) + " free, " + format_duration(p->elapsed) + ")";
    return std::string(to_string(p->status)) + ": " + cut(p->error, 60);
  };

  out += "GPUs";
  if (!r.driver_version.empty()) out += " (driver " + r.driver_version + ")";
  out += "\n";
  if (!r.gpu_unavailable.empty()) {
    out += "  not inspected: " + r.gpu_unavailable + "\n";
  } else if (r.gpus.empty()) {
    out += "  none\n";
  } else {
    add("  %-4s %-24s %-17s %11s %11s %5s  %s\n", "idx", "name", "bus id", "used", "total", "procs",
        "probe");
    for (const auto& g : r.gpus)
      add("  %-4d %-24s %-17s %11s %11s %5zu  %s\n", g.info.index, cut(g.info.name, 24).c_str(),
          g.info.pci_bus_id.c_str(), format_bytes(g.used).c_str(),
          format_bytes(g.info.total).c_str(), g.processes.size(), probe_text(g.probe).c_str());
  }
  for (const auto& p : r.unmapped_probes)
    out += "  probe, CUDA device " + std::to_string(p.ordinal) + ": " + probe_text(p) + "\n";
  if (!r.probe_unavailable.empty()) out += "  probe: " + r.probe_unavailable + "\n";

  out += "\nProcesses holding GPUs or /dev/shm (device files: " + r.device_pattern + ")\n";
  if (r.processes.empty()) {
    out += "  none\n";
  } else {
    add("  %-8s %-8s %-6s %-2s %-16s %-44s %s\n", "pid", "ppid", "uid", "st", "command", "holds",
        "verdict");
    for (const auto& p : r.processes) {
      std::string indent(static_cast<size_t>(std::min(p.depth, 4)) * 2, ' ');
      add("  %-8s %-8d %-6u %-2c %-16s %-44s %s%s\n", (indent + std::to_string(p.pid)).c_str(),
          p.ppid, p.uid, p.state, cut(p.comm, 16).c_str(), cut(holdings(p), 44).c_str(),
          p.leftover || p.zombie ? "LEFTOVER " : "", p.why.c_str());
    }
  }

  out += "\n" + r.shm_dir + " (torch_*, sem.*)\n";
  if (r.shm.empty()) {
    out += "  none\n";
  } else {
    add("  %-36s %10s %8s %-18s %-12s %s\n", "name", "size", "age", "creator", "used by",
        "verdict");
    for (const auto& s : r.shm) {
      std::string creator = s.creator_pid ? std::to_string(*s.creator_pid) + " (" +
                                                std::string(to_string(s.creator)) + ")"
                                          : "-";
      std::vector<int> users = s.mapped_by;
      users.insert(users.end(), s.held_by.begin(), s.held_by.end());
      std::sort(users.begin(), users.end());
      users.erase(std::unique(users.begin(), users.end()), users.end());
      add("  %-36s %10s %8s %-18s %-12s %s%s\n", cut(s.name, 36).c_str(),
          format_bytes(s.bytes).c_str(), format_age(s.age).c_str(), creator.c_str(),
          users.empty() ? "-" : cut(join_ints(users), 12).c_str(), s.leftover ? "LEFTOVER " : "",
          s.why.c_str());
    }
  }

  if (!r.tmp_dir.empty()) {
    out += "\n" + r.tmp_dir + " (pymp-*, torch-shm-dir-*, torchelastic_*)\n";
    if (r.tmp.empty()) {
      out += "  none\n";
    } else {
      add("  %-36s %-13s %10s %8s %-12s %s\n", "name", "kind", "size", "age", "held by", "verdict");
      for (const auto& t : r.tmp) {
        std::string held = !t.held_by.empty() ? join_ints(t.held_by) : !t.bound.empty() ? "socket" : "-";
        add("  %-36s %-13s %10s %8s %-12s %s%s\n", cut(t.name, 36).c_str(),
            std::string(to_string(t.kind)).c_str(),
            (format_bytes(t.bytes) + (t.bytes_partial ? "+" : "")).c_str(),
            format_age(t.age).c_str(), cut(held, 12).c_str(), t.leftover ? "LEFTOVER " : "",
            t.why.c_str());
      }
    }
  }

  if (!r.cgroups.empty()) {
    out += "\nFault cgroups in " + r.cgroup_dir + "\n";
    for (const auto& g : r.cgroups)
      out += "  " + g.dir.substr(g.dir.rfind('/') + 1) + "  " + (g.leftover ? "LEFTOVER " : "") +
             g.why + "\n";
  }

  if (!r.notes.empty()) {
    out += "\nNotes\n";
    for (const auto& n : r.notes) out += "  - " + n + "\n";
  }
  out += "\n";
  if (r.clean()) {
    out += "CLEAN: nothing left behind\n";
  } else {
    out += "NOT CLEAN: " + std::to_string(r.problems.size()) + " problem(s)\n";
    for (const auto& p : r.problems) out += "  - " + p + "\n";
  }
  return out;
}

}  // namespace aftermath
