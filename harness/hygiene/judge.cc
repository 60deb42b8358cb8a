// The machine inspection's second half: judging a MachineSnapshot. Pure: it
// reads nothing but the snapshot and the options' policy, so every verdict
// can be tested on a snapshot made by hand.
#include <algorithm>
#include <map>

#include "harness/hygiene/hygiene.h"

namespace aftermath {

namespace {

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
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

std::string describe(const HygieneProcess& p) {
  return "pid " + std::to_string(p.proc.pid) + " (" + p.proc.comm + ", uid " +
         std::to_string(p.proc.uid) + ")";
}

// What the judging passes between its steps.
struct Judging {
  const MachineSnapshot& m;
  const HygieneOptions& o;
  InspectReport& rep;
  JobRef nobody;            // no job here: only orphanhood matters
  std::set<int> exempt;     // the caller and its ancestors
  std::set<int> leftovers;  // pids of leftover processes
  std::map<int, HygieneProcess> listed;
};

// GPUs: the processes NVML names, each GPU's error, and (require_gpu) the
// GPUs not inspected at all.
std::map<int, std::pair<std::vector<int>, std::int64_t>> judge_gpus(Judging& j) {
  std::map<int, std::pair<std::vector<int>, std::int64_t>> gpu_use;  // pid -> GPUs, bytes
  j.rep.gpu_unavailable = j.m.gpu_unavailable;
  if (j.o.require_gpu && !j.m.gpu_unavailable.empty())
    j.rep.problems.push_back("GPU not inspected (--require-gpu): " + j.m.gpu_unavailable);
  j.rep.driver_version = j.m.driver_version;
  for (const auto& g : j.m.gpus) {
    for (const auto& p : g.processes) {
      if (!p.pid) {
        j.rep.notes.push_back("GPU " + std::to_string(g.info.index) + ": NVML pid " +
                              std::to_string(p.nvml_pid) + " (" + format_bytes(p.used_bytes) +
                              ") is not visible in " + j.o.proc_root +
                              " (another PID namespace, or a process that is gone)");
        continue;
      }
      auto& u = gpu_use[p.pid];
      u.first.push_back(g.info.index);
      if (p.used_bytes > 0) u.second += p.used_bytes;
    }
    if (!g.error.empty())
      j.rep.problems.push_back("GPU " + std::to_string(g.info.index) + ": " + g.error);
    j.rep.gpus.push_back(g);
  }
  return gpu_use;
}

// The allocation probe's results, each on the GPU it tested.
void judge_probe(Judging& j) {
  if (!j.m.probe) {
    j.rep.probe_unavailable = "no probe";
    return;
  }
  j.rep.probe_unavailable = j.m.probe->unavailable;
  for (const auto& p : j.m.probe->gpus) {
    HygieneGpu* home = nullptr;
    for (auto& g : j.rep.gpus)
      if ((p.index >= 0 && g.info.index == p.index) ||
          (p.index < 0 && !p.pci_bus_id.empty() && g.info.pci_bus_id == p.pci_bus_id))
        home = &g;
    if (p.status != ProbeStatus::Ok)
      j.rep.problems.push_back("GPU " + std::to_string(home ? home->info.index : p.ordinal) +
                               " allocation probe " + std::string(to_string(p.status)) +
                               (p.error.empty() ? "" : ": " + p.error));
    if (home)
      home->probe = p;
    else
      j.rep.unmapped_probes.push_back(p);
  }
}

// pid -> the /dev/shm entries it maps or holds ("(deleted)" marked); and per
// entry name, the live processes that map (mapped_by) or hold (held_by) it.
struct ShmUse {
  std::map<int, std::vector<std::string>> of;
  std::map<std::string, std::vector<int>> mapped_by, held_by;
};

ShmUse shm_use(const Judging& j) {
  ShmUse use;
  auto note = [&](const std::map<int, std::vector<FileRef>>& src,
                  std::map<std::string, std::vector<int>>& by) {
    for (const auto& [pid, files] : src) {
      const ProcInfo* p = j.m.processes.get(pid);
      if (!p || p->zombie()) continue;
      for (const auto& f : files) {
        std::string name = basename_of(f.path);
        if (!interesting(name, j.o.shm_prefixes)) continue;
        std::string label = f.deleted ? name + " (deleted)" : name;
        auto& v = use.of[pid];
        if (std::find(v.begin(), v.end(), label) == v.end()) v.push_back(label);
        if (!f.deleted) {
          auto& b = by[name];
          if (std::find(b.begin(), b.end(), pid) == b.end()) b.push_back(pid);
        }
      }
    }
  };
  note(j.m.shm_mapped, use.mapped_by);
  note(j.m.shm_held, use.held_by);
  return use;
}

// The process `pid` as the report lists it, added on first use; null when
// it is not in the snapshot's process table.
HygieneProcess* list(Judging& j, int pid) {
  auto it = j.listed.find(pid);
  if (it != j.listed.end()) return &it->second;
  const ProcInfo* p = j.m.processes.get(pid);
  if (!p) return nullptr;  // started after the index: it will be seen next time
  HygieneProcess h;
  h.proc = *p;
  if (auto c = j.m.cmdlines.find(pid); c != j.m.cmdlines.end()) h.cmdline = c->second;
  if (h.cmdline.size() > 200) h.cmdline = h.cmdline.substr(0, 200) + "...";
  h.orphan = j.nobody.orphan(*p);
  h.daemon = j.o.daemon_comms.count(p->comm) > 0;
  return &j.listed.emplace(pid, std::move(h)).first->second;
}

// Leftover trees: an orphan that holds something, and every holder below it;
// never the caller or its ancestors. Then zombies whose parent is a leftover:
// terminating the parent gets them reaped.
void mark_leftovers(Judging& j) {
  std::set<int> roots;
  for (auto& [pid, h] : j.listed)
    if (h.orphan && !h.daemon && !h.zombie() && !j.exempt.count(pid)) roots.insert(pid);
  for (auto& [pid, h] : j.listed) {
    if (h.zombie() || j.exempt.count(pid)) continue;
    if (roots.count(pid)) {
      h.leftover = true;
      h.leftover_root = pid;
      continue;
    }
    int depth = 1;
    for (int a : j.m.processes.ancestors(pid)) {
      if (j.exempt.count(a)) break;
      if (roots.count(a)) {
        h.leftover = true;
        h.leftover_root = a;
        h.depth = depth;
        break;
      }
      ++depth;
    }
  }
  for (const auto& [pid, h] : j.listed)
    if (h.leftover) j.leftovers.insert(pid);
  for (const auto& [pid, p] : j.m.processes.all()) {
    if (!p.zombie() || !j.leftovers.count(p.ppid)) continue;
    if (auto* h = list(j, pid)) {
      const auto& parent = j.listed.at(p.ppid);
      h->leftover = true;
      h->leftover_root = parent.leftover_root;
      h->depth = parent.depth + 1;
    }
  }
}

// Every process that holds something, with its verdict.
void judge_processes(Judging& j, const ShmUse& shm,
                     const std::map<int, std::pair<std::vector<int>, std::int64_t>>& gpu_use) {
  for (const auto& [pid, files] : j.m.device_files)
    if (auto* h = list(j, pid))
      for (const auto& f : files) h->devices.push_back(f.path + (f.deleted ? " (deleted)" : ""));
  for (const auto& [pid, names] : shm.of)
    if (auto* h = list(j, pid)) h->shm = names;
  for (const auto& [pid, use] : gpu_use) {
    if (auto* h = list(j, pid)) {
      h->gpus = use.first;
      h->gpu_bytes = use.second;
    }
  }
  mark_leftovers(j);
  for (auto& [pid, h] : j.listed) {
    if (h.zombie()) {
      h.why = h.leftover ? "zombie: child of leftover " + std::to_string(h.proc.ppid)
                         : "zombie holding " + holdings(h) + "; its parent " +
                               std::to_string(h.proc.ppid) + " should reap it";
      j.rep.problems.push_back(describe(h) + ": " + h.why);
    } else if (h.leftover) {
      h.why = h.depth == 0 ? "leftover: orphan (re-parented to " + std::to_string(h.proc.ppid) + ")"
                           : "leftover: below orphan " + std::to_string(h.leftover_root);
      j.rep.problems.push_back(describe(h) + " holds " + holdings(h) + ": " + h.why);
    } else if (j.exempt.count(pid)) {
      h.why = "in use: the caller itself";
    } else if (h.daemon) {
      h.why = "in use: a known daemon";
    } else {
      h.why = "in use: its parent " + std::to_string(h.proc.ppid) + " is alive";
    }
  }
  for (auto& [_, h] : j.listed) j.rep.processes.push_back(std::move(h));
  std::sort(j.rep.processes.begin(), j.rep.processes.end(), [](const auto& a, const auto& b) {
    if (a.leftover != b.leftover) return a.leftover;
    if (a.leftover_root != b.leftover_root) return a.leftover_root < b.leftover_root;
    if (a.depth != b.depth) return a.depth < b.depth;
    return a.proc.pid < b.proc.pid;
  });
}

// Whether the creator named in a torch_<pid>_... entry is alive, and a note
// when its pid proves nothing.
CreatorState creator_state(const Judging& j, const ShmFile& f, int creator_pid,
                           const std::set<int>& inner_pids, std::string& note) {
  const ProcInfo* c = j.m.processes.get(creator_pid);
  CreatorState state = c && !c->zombie() ? CreatorState::Alive : CreatorState::Gone;
  // A live process that started after the entry existed only reuses the pid.
  if (state == CreatorState::Alive && j.m.boot_ns && j.m.clock_ticks > 0) {
    std::int64_t started =
        *j.m.boot_ns + static_cast<std::int64_t>(c->start_ticks) * kSecond / j.m.clock_ticks;
    if (started > f.ctime_ns + 2 * kSecond) state = CreatorState::Gone;
  }
  // The name carries the pid as its creator saw it: in a PID namespace
  // below ours that is not the pid here, so "gone" proves nothing.
  if (state == CreatorState::Gone && inner_pids.count(creator_pid)) {
    state = CreatorState::Unknown;
    note = " (pid " + std::to_string(creator_pid) + " lives in a nested PID namespace)";
  }
  return state;
}

HygieneShm judge_shm_entry(Judging& j, const ShmFile& f, const ShmUse& use,
                           const std::set<int>& inner_pids) {
  const std::string& name = f.entry.name;
  HygieneShm s;
  s.name = name;
  s.bytes = f.entry.bytes;
  s.allocated = f.entry.allocated;
  s.uid = f.entry.uid;
  s.age = j.m.now_wall_ns - f.entry.mtime_ns;
  s.inode = f.inode;
  s.creator_pid = torch_creator_pid(name);
  std::string creator_note;
  if (s.creator_pid) s.creator = creator_state(j, f, *s.creator_pid, inner_pids, creator_note);
  if (auto it = use.mapped_by.find(name); it != use.mapped_by.end()) s.mapped_by = it->second;
  if (auto it = use.held_by.find(name); it != use.held_by.end()) s.held_by = it->second;
  std::vector<int> users = s.mapped_by;
  for (int p : s.held_by)
    if (std::find(users.begin(), users.end(), p) == users.end()) users.push_back(p);
  bool creator_leftover = s.creator_pid && j.leftovers.count(*s.creator_pid);
  bool users_leftover =
      std::all_of(users.begin(), users.end(), [&](int p) { return j.leftovers.count(p) > 0; });
  std::string creator_text =
      (s.creator_pid ? "creator " + std::to_string(*s.creator_pid) : "creator unknown") +
      creator_note;
  // A creator provably gone cannot be about to map it: no age is waited for.
  bool old_enough = s.creator == CreatorState::Gone || s.age >= j.o.shm_min_age;
  if (s.creator != CreatorState::Alive && users.empty() && old_enough) {
    s.leftover = true;
    s.why = "leftover: " + creator_text + (s.creator == CreatorState::Gone ? " is gone" : "") +
            ", no process maps or holds it";
    j.rep.problems.push_back(j.o.shm_dir + "/" + name + " (" + format_bytes(s.bytes) + ", " +
                             format_age(s.age) + " old): " + s.why);
  } else if ((s.creator != CreatorState::Alive || creator_leftover) && users_leftover &&
             (!users.empty() || creator_leftover)) {
    s.freed_by_reap = true;
    s.why = users.empty() ? "leftover once its creator " + std::to_string(*s.creator_pid) +
                                " (a leftover) is gone"
                          : "leftover once leftover process(es) " + join_ints(users) + " are gone";
  } else if (!users.empty()) {
    s.why = "in use by " + join_ints(users);
  } else if (s.creator == CreatorState::Alive) {
    s.why = "in use: " + creator_text + " is alive";
  } else {
    s.why = "young (" + format_age(s.age) + "): its creator may still map it";
  }
  return s;
}

// /dev/shm entries.
void judge_shm(Judging& j, const ShmUse& use) {
  std::set<int> inner_pids;  // pids of processes as nested PID namespaces see them
  for (const auto& [pid, p] : j.m.processes.all())
    for (size_t i = 1; i < p.nspid.size(); ++i) inner_pids.insert(p.nspid[i]);
  for (const auto& f : j.m.shm) {
    if (!interesting(f.entry.name, j.o.shm_prefixes)) continue;
    j.rep.shm.push_back(judge_shm_entry(j, f, use, inner_pids));
  }
}

// Fault cgroups whose harness is gone.
void judge_cgroups(Judging& j) {
  j.rep.cgroup_dir = j.m.cgroup_dir;
  for (const auto& f : j.m.cgroups) {
    HygieneCgroup g;
    static_cast<FaultCgroupEntry&>(g) = f;
    g.leftover = !g.owner_alive;
    if (g.leftover) {
      g.why = "leftover: aftermath pid " + std::to_string(g.owner) + " made it and is gone" +
              (g.members.empty() ? "" : "; processes " + join_ints(g.members) + " are still in it");
      j.rep.problems.push_back(g.dir + ": " + g.why);
    } else {
      g.why = "in use: aftermath pid " + std::to_string(g.owner) + " is alive";
    }
    j.rep.cgroups.push_back(std::move(g));
  }
}

// The temp dir's residue (pymp-*, torch-shm-dir-*, torchelastic_*,
// aftermath-torchrun-*, pytorch-errorfile-*.pickle): a leftover when nobody
// holds it and its maker is provably gone (the sockets it bound are unbound)
// or it is older than tmp_min_age. Residue held only by
// leftover processes goes once reap has ended them.
void judge_tmp(Judging& j) {
  const HygieneOptions& o = j.o;
  if (j.m.tmp_error) {
    j.rep.notes.push_back("temp dir not inspected: " + *j.m.tmp_error);
    return;
  }
  for (const auto& [name, e] : j.m.tmp) {
    HygieneTmp t;
    t.name = name;
    t.kind = e.kind;
    t.bytes = e.bytes;
    t.bytes_partial = e.bytes_partial;
    t.uid = e.uid;
    t.age = j.m.now_wall_ns - e.mtime_ns;
    t.inode = e.inode;
    const TmpHold* h = nullptr;
    if (auto it = j.m.tmp_holds.find(name); it != j.m.tmp_holds.end()) {
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
      j.rep.problems.push_back(path + " (" + std::string(to_string(t.kind)) + ", " +
                               format_bytes(t.bytes) + (t.bytes_partial ? "+" : "") + ", uid " +
                               std::to_string(t.uid) + ", " + format_age(t.age) +
                               " old): " + t.why);
    } else if (held && !t.held_by.empty() &&
               std::all_of(t.held_by.begin(), t.held_by.end(),
                           [&](int p) { return j.leftovers.count(p) > 0; })) {
      t.freed_by_reap = true;
      t.why = "leftover once leftover process(es) " + join_ints(t.held_by) + " are gone";
    } else if (!t.held_by.empty()) {
      t.why = "in use by " + join_ints(t.held_by);
    } else if (held) {
      t.why = "in use: a socket under it is bound (" + join(t.bound) + ")";
    } else {
      t.why = "young (" + format_age(t.age) + "): its maker may still be using it";
    }
    j.rep.tmp.push_back(std::move(t));
  }
}

// Who could not be inspected, whether that could change a verdict, and the
// notes on what limited the inspection.
void judge_unreadable(Judging& j) {
  for (int pid : j.m.unreadable) {
    const ProcInfo* p = j.m.processes.get(pid);
    if (!p) continue;  // gone meanwhile
    bool may_be_leftover = j.nobody.orphan(*p) && !p->zombie() && pid > 1 && !j.exempt.count(pid) &&
                           !j.o.daemon_comms.count(p->comm);
    j.rep.uninspected.push_back(judge_uninspected(*p, may_be_leftover, j.rep, j.m.caller));
  }
  j.rep.unreadable_processes = static_cast<int>(j.rep.uninspected.size());
  int shown = 0, hidden = 0;
  for (const auto& u : j.rep.uninspected) {
    if (!u.matters) continue;
    if (++shown > 5) {
      ++hidden;
      continue;
    }
    j.rep.notes.push_back("pid " + std::to_string(u.pid) + " (" + u.comm + ", uid " +
                          std::to_string(u.uid) + ") could not be inspected: " + u.why + "; " +
                          u.matters_why);
  }
  if (hidden)
    j.rep.notes.push_back(std::to_string(hidden) +
                          " more process(es) could not be inspected (see --json)");
  if (!j.rep.gpu_unavailable.empty())
    j.rep.notes.push_back("GPU memory not inspected: " + j.rep.gpu_unavailable);
  if (!j.rep.probe_unavailable.empty())
    j.rep.notes.push_back("no allocation probe: " + j.rep.probe_unavailable);
}

}  // namespace

InspectReport judge_machine(const MachineSnapshot& m, const HygieneOptions& o) {
  InspectReport rep;
  rep.proc_root = o.proc_root;
  rep.shm_dir = o.shm_dir;
  rep.device_pattern = o.device_pattern;
  Judging j{m, o, rep, {}, {}, {}, {}};
  j.nobody.orphan_parents = o.orphan_parents;
  j.exempt.insert(m.self_pid);
  for (int a : m.processes.ancestors(m.self_pid)) j.exempt.insert(a);

  auto gpu_use = judge_gpus(j);
  judge_probe(j);
  if (m.pattern_error) rep.problems.push_back(*m.pattern_error);
  const ShmUse use = shm_use(j);
  judge_processes(j, use, gpu_use);
  judge_shm(j, use);
  judge_cgroups(j);
  rep.tmp_dir = o.tmp_dir;
  if (!o.tmp_dir.empty()) judge_tmp(j);
  judge_unreadable(j);
  return rep;
}

Uninspected judge_uninspected(const ProcInfo& p, bool may_be_leftover, const InspectReport& report,
                              const Caller& caller) {
  Uninspected u;
  u.pid = p.pid;
  u.comm = p.comm;
  u.uid = p.uid;
  if (!caller.root && p.uid != caller.uid)
    u.why = "owned by uid " + std::to_string(p.uid) + " (run as root to see other users')";
  else if (caller.root && !caller.ptrace_cap)
    u.why =
        "refused: this process lacks CAP_SYS_PTRACE and that one holds capabilities it does not";
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

}  // namespace aftermath
