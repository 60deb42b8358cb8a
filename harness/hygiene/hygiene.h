// `aftermath check`: is this machine clean right now, without running a job?
// It looks at what a dead job leaves behind:
//
//  - GPUs: memory and compute processes per GPU (NVML), and an allocation
//    probe per GPU (a fresh process must be able to allocate);
//  - device-file holders: processes with /dev/nvidia* open (like fuser -v);
//  - /dev/shm: torch_* and sem.* entries with size, age, their creator
//    (torch_<pid>_... names carry it) and whether it is alive, and which live
//    processes map (/proc/*/maps) or hold (/proc/*/fd) them;
//  - the temp dir ($TMPDIR or /tmp): PyTorch's and multiprocessing's residue
//    (pymp-*, torch-shm-dir-*, torchelastic_*; observe/tmp_residue.h) with
//    size, owner, age and who still holds it;
//  - leftover processes: an orphan (its parent is init or a given reaper,
//    and it is not a known daemon) that holds a GPU device file, GPU memory or
//    a /dev/shm entry, with every holder below it in its tree; zombies that
//    hold something, or whose parent is such a leftover;
//  - fault cgroups (aftermath-<pid>-..., made by host_oom's cgroup mechanism)
//    whose harness is gone: it was killed before it could remove them.
//
// "Clean" means no leftover: no leftover process, no /dev/shm entry whose
// creator is gone and that nobody uses, no temp-dir residue nobody holds, no
// GPU failing its probe. Live, parented processes using a GPU are reported as
// in use, not as leftovers.
//
// When an entry is a leftover. Nobody may map or hold it, and its maker must
// be gone: a /dev/shm segment whose creator (named in torch_<pid>_...) is
// provably gone is a leftover at once; while the creator is alive or unknown
// (sem.*, a pid that may be another PID namespace's), only once it is older
// than shm_min_age, since its creator may not have mapped it yet. Temp-dir
// residue likewise: at once when the sockets its maker bound in it are no
// longer bound (the maker is gone), else after tmp_min_age.
//
// Everything the check reads comes from HygieneOptions (proc root, shm dir,
// device pattern, NVML, probe runner), so tests point it at planted files.
// A process of another user cannot be inspected without privileges (nor one a
// security module guards, even from root): the report names those, and why,
// wherever they could change a verdict (an orphan that may be a leftover, or
// a possible user of an entry called a leftover); the others are only listed
// in the JSON.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/core/device.h"
#include "harness/core/types.h"
#include "harness/inject/cgroup.h"
#include "harness/observe/holders.h"
#include "harness/observe/nvml.h"
#include "harness/observe/probe.h"
#include "harness/observe/process_index.h"
#include "harness/observe/tmp_residue.h"

namespace aftermath {

struct HygieneOptions {
  std::string proc_root = "/proc";
  std::string shm_dir = "/dev/shm";
  std::string device_pattern = std::string(kNvidiaDevicePattern);  // glob, or "re:" regex
  std::vector<std::string> shm_prefixes = {"torch_", "sem."};
  // A process whose parent is one of these was orphaned. Add the pid of a
  // subreaper that collects orphans (a test that made itself one).
  std::set<int> orphan_parents = {1};
  // Services that legitimately run under init and hold GPUs (comm, as /proc
  // truncates it to 15 characters): never leftovers.
  std::set<std::string> daemon_comms = {"nvidia-persiste", "nv-fabricmanage", "nv-hostengine",
                                        "nvidia-smi",      "dcgm-exporter",   "Xorg",
                                        "Xwayland",        "gnome-shell",     "nvidia-powerd"};
  Nvml* nvml = nullptr;          // not owned; null: GPU memory is not inspected
  int nvml_pid_level = 0;        // see DeviceObserverOptions::nvml_pid_level
  ProbeRunner* probe = nullptr;  // not owned; null: no allocation probe
  // Younger /dev/shm entries are never leftovers while their creator is alive
  // or unknown: it may not have mapped them yet. One whose creator is
  // provably gone is a leftover at any age.
  Nanos shm_min_age = 30 * kSecond;
  // The temp dir whose residue is judged ("" looks nowhere; the CLI passes
  // $TMPDIR or /tmp), and the age from which residue nobody holds is a
  // leftover even when its maker cannot be proven gone.
  std::string tmp_dir;
  Nanos tmp_min_age = 30 * kSecond;
  // Where fault cgroups are made: "auto" finds it as the harness does
  // (inject/cgroup.h) when proc_root is this machine's /proc; "" looks
  // nowhere.
  std::string cgroup_dir = "auto";
  std::int64_t now_wall_ns = 0;  // CLOCK_REALTIME for ages; 0: read the clock
};

struct HygieneGpu {
  GpuInfo info;
  std::int64_t used = 0;
  std::int64_t free = 0;
  std::vector<GpuProcess> processes;
  std::optional<GpuProbe> probe;
  std::string error;
};

// A process the check lists: it holds a GPU or a /dev/shm entry, or it is a
// zombie child of a leftover.
struct HygieneProcess {
  int pid = 0;
  int ppid = 0;
  char state = '?';
  unsigned uid = 0;
  std::uint64_t start_ticks = 0;  // with pid, what reap verifies before signalling
  std::string comm;
  std::string cmdline;
  std::vector<int> nspid;
  std::vector<std::string> devices;  // device files it holds open
  std::vector<std::string> shm;      // /dev/shm entries it maps or holds ("(deleted)" marked)
  std::vector<int> gpus;             // NVML indices where it owns memory
  std::int64_t gpu_bytes = 0;
  bool orphan = false;
  bool zombie = false;
  bool daemon = false;
  bool leftover = false;  // what reap may act on
  int leftover_root = 0;  // the orphan at the top of its leftover tree
  int depth = 0;          // below that root (0: the root itself)
  std::string why;        // the verdict in words
};

enum class CreatorState { Alive, Gone, Unknown };
std::string_view to_string(CreatorState s);

struct HygieneShm {
  std::string name;
  std::int64_t bytes = 0;
  std::int64_t allocated = 0;
  unsigned uid = 0;
  Nanos age = 0;
  std::uint64_t inode = 0;  // reap removes only this very file
  std::optional<int> creator_pid;
  CreatorState creator = CreatorState::Unknown;
  std::vector<int> mapped_by;  // live processes
  std::vector<int> held_by;
  bool leftover = false;       // creator gone (or unknown), unused, old enough
  bool freed_by_reap = false;  // used only by leftover processes: free once they are gone
  std::string why;
};

// A temp-dir entry of a known residue kind (observe/tmp_residue.h).
struct HygieneTmp {
  std::string name;
  TmpKind kind = TmpKind::Other;
  std::int64_t bytes = 0;
  bool bytes_partial = false;
  unsigned uid = 0;
  Nanos age = 0;            // since its newest mtime
  std::uint64_t inode = 0;  // reap removes only this very entry
  std::vector<int> held_by;        // live processes
  std::vector<std::string> bound;  // live sockets bound under it
  bool maker_gone = false;   // its sockets are no longer bound
  bool leftover = false;
  bool freed_by_reap = false;  // held only by leftover processes
  std::string why;
};

// A process whose fds, cwd or maps could not be read.
struct Uninspected {
  int pid = 0;
  std::string comm;
  unsigned uid = 0;
  std::string why;       // why it could not be read
  bool matters = false;  // it could change a verdict (see machine_check)
  std::string matters_why;
};

// A fault cgroup the check found (inject/cgroup.h), with its verdict.
struct HygieneCgroup : FaultCgroupEntry {
  bool leftover = false;  // its harness is gone
  std::string why;
};

struct CheckReport {
  std::string gpu_unavailable;    // why GPU memory was not inspected
  std::string probe_unavailable;  // why nothing was probed
  std::string driver_version;
  std::vector<HygieneGpu> gpus;
  std::vector<GpuProbe> unmapped_probes;  // probe results tied to no NVML GPU
  std::vector<HygieneProcess> processes;
  std::vector<HygieneShm> shm;
  std::vector<HygieneTmp> tmp;
  std::vector<HygieneCgroup> cgroups;
  std::string cgroup_dir;             // where fault cgroups were looked for ("" nowhere)
  std::vector<std::string> problems;  // one line per leftover; empty: clean
  std::vector<std::string> notes;     // what limits the check, and what is in use
  int unreadable_processes = 0;
  std::vector<Uninspected> uninspected;
  std::string proc_root, shm_dir, tmp_dir, device_pattern;
  bool clean() const { return problems.empty(); }
};

// Who runs the check, for judging what it could not inspect.
struct Caller {
  unsigned uid = 0;
  bool root = false;        // euid 0
  bool ptrace_cap = false;  // CAP_SYS_PTRACE in the effective set
};
Caller this_caller();

// Why process `p` could not be inspected, and whether that could change a
// verdict of `report`: it may be a leftover itself (`may_be_leftover`: an
// orphan that is not init, a known daemon or an ancestor of the check), or a
// hidden user of an entry the report calls a leftover. Pure.
Uninspected judge_uninspected(const ProcInfo& p, bool may_be_leftover, const CheckReport& report,
                              const Caller& caller);

// Looks at the machine now. Never throws for what it finds; a bad device
// pattern is a problem line.
CheckReport machine_check(const HygieneOptions& options);

// The human table.
std::string format_check_table(const CheckReport& report);
// The JSON document for CI (schema: {"clean", "problems", "notes", "gpus",
// "processes", "shm", ...}).
nlohmann::json to_json(const CheckReport& report);

// "3h12m", "45s", "250ms".
std::string format_age(Nanos age);

// "12, 34, 56".
std::string join_ints(const std::vector<int>& v);

// The creator pid in a torch_<pid>_<rand>_<n> name; nullopt for other names.
std::optional<int> torch_creator_pid(std::string_view name);

}  // namespace aftermath
