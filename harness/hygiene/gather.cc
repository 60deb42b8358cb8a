#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <charconv>

#include "harness/hygiene/snapshot.h"
#include "harness/observe/device_observer.h"
#include "harness/observe/proc.h"

namespace aftermath {

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

std::string real_dir(const std::string& dir) {
  char buf[PATH_MAX];
  return ::realpath(dir.c_str(), buf) ? std::string(buf) : dir;
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

// GPUs as the driver sees them, with their processes found in the proc root.
void gather_gpus(const HygieneOptions& o, MachineSnapshot& m) {
  if (!o.nvml) {
    m.gpu_unavailable = "NVML not consulted";
    return;
  }
  if (auto why = o.nvml->init(); !why.empty()) {
    m.gpu_unavailable = why;
    return;
  }
  JobRef nobody;  // no job here: only orphanhood matters
  nobody.orphan_parents = o.orphan_parents;
  m.driver_version = o.nvml->driver_version();
  for (const auto& d : o.nvml->devices()) {
    HygieneGpu g;
    g.info = {static_cast<int>(d.index), d.uuid, d.pci_bus_id, d.name,
              static_cast<std::int64_t>(d.total)};
    g.used = static_cast<std::int64_t>(d.used);
    g.free = static_cast<std::int64_t>(d.free);
    g.error = d.error;
    g.processes = to_gpu_sample(0, d, m.processes, nobody, o.nvml_pid_level).processes;
    m.gpus.push_back(std::move(g));
  }
}

// The allocation probe: one child per GPU NVML knows, else one for all.
void gather_probe(const HygieneOptions& o, MachineSnapshot& m) {
  if (!o.probe) return;
  std::vector<GpuInfo> infos;
  for (const auto& g : m.gpus)
    if (g.error.empty() && !g.info.uuid.empty()) infos.push_back(g.info);
  m.probe = o.probe->run(infos);
}

// Who holds device files and /dev/shm entries.
void gather_holders(const HygieneOptions& o, MachineSnapshot& m) {
  auto pattern = PathPattern::parse(o.device_pattern);
  if (!pattern) {
    m.pattern_error = pattern.error().what;
  } else {
    m.device_files = scan_open_files(o.proc_root, *pattern, nullptr, &m.unreadable);
  }
  const std::string shm_real = real_dir(o.shm_dir);
  m.shm_held =
      scan_open_files(o.proc_root, PathPattern::under_dir(shm_real), nullptr, &m.unreadable);
  m.shm_mapped = scan_mapped_files(o.proc_root, shm_real, nullptr, &m.unreadable);
}

void gather_shm(const HygieneOptions& o, MachineSnapshot& m) {
  m.boot_ns = boot_time_ns(o.proc_root);
  m.clock_ticks = ::sysconf(_SC_CLK_TCK);
  int dfd = ::open(o.shm_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  for (const auto& [name, e] : scan_shm(o.shm_dir)) {
    ShmFile f;
    f.entry = e;
    f.entry.name = name;
    f.ctime_ns = e.mtime_ns;
    struct stat st;
    if (dfd >= 0 && ::fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      f.inode = st.st_ino;
      f.ctime_ns = static_cast<std::int64_t>(st.st_ctim.tv_sec) * kSecond + st.st_ctim.tv_nsec;
    }
    m.shm.push_back(std::move(f));
  }
  if (dfd >= 0) ::close(dfd);
}

// Fault cgroups: "auto" finds their home as a run does, on this machine only.
void gather_cgroups(const HygieneOptions& o, MachineSnapshot& m) {
  m.cgroup_dir = o.cgroup_dir;
  if (m.cgroup_dir == "auto") {
    m.cgroup_dir.clear();
    if (o.proc_root == "/proc") {
      auto home = find_memory_cgroup_home();
      if (home) m.cgroup_dir = home->dir;
    }
  }
  if (!m.cgroup_dir.empty()) m.cgroups = list_fault_cgroups(m.cgroup_dir, o.proc_root);
}

// The temp dir's residue of known kinds, and who holds it.
void gather_tmp(const HygieneOptions& o, MachineSnapshot& m) {
  if (o.tmp_dir.empty()) return;
  auto table = scan_tmp(o.tmp_dir);
  if (!table) {
    m.tmp_error = table.error().what;
    return;
  }
  std::vector<std::string> names;
  for (auto& [name, e] : *table) {
    if (!known_residue(e.kind)) continue;
    names.push_back(name);
    m.tmp.emplace(name, e);
  }
  m.tmp_holds = find_tmp_holders(o.proc_root, o.tmp_dir, names, nullptr, &m.unreadable);
}

// The command lines of every process the judge may list: holders of a GPU,
// a device file or a /dev/shm entry, and zombies.
void gather_cmdlines(const ProcReader& reader, MachineSnapshot& m) {
  std::set<int> pids;
  for (const auto* src : {&m.device_files, &m.shm_held, &m.shm_mapped})
    for (const auto& [pid, _] : *src) pids.insert(pid);
  for (const auto& g : m.gpus)
    for (const auto& p : g.processes)
      if (p.pid) pids.insert(p.pid);
  for (const auto& [pid, p] : m.processes.all())
    if (p.zombie()) pids.insert(pid);
  for (int pid : pids)
    if (m.processes.get(pid)) m.cmdlines[pid] = reader.cmdline(pid);
}

}  // namespace

Caller this_caller() {
  Caller c;
  c.uid = ::getuid();
  c.root = ::geteuid() == 0;
  c.ptrace_cap = has_cap_sys_ptrace();
  return c;
}

MachineSnapshot gather_machine(const HygieneOptions& o) {
  MachineSnapshot m;
  m.now_wall_ns = o.now_wall_ns ? o.now_wall_ns : realtime_ns();
  ProcReader reader(o.proc_root);
  m.processes = ProcessIndex::scan(reader);
  m.self_pid = static_cast<int>(::getpid());
  gather_gpus(o, m);
  gather_probe(o, m);
  gather_holders(o, m);
  gather_shm(o, m);
  gather_cgroups(o, m);
  gather_tmp(o, m);
  gather_cmdlines(reader, m);
  m.caller = this_caller();
  return m;
}

}  // namespace aftermath
