// `aftermath inspect`: is this machine clean right now, without running a job?
// It looks at what a dead job leaves behind:
//
//  - GPUs: memory and compute processes per GPU (NVML), and an allocation
//    probe per GPU (a fresh process must be able to allocate);
//  - device-file holders: processes with /dev/nvidia* open (like fuser -v);
//  - /dev/shm: torch_* and sem.* entries with size, age, their creator
//    (torch_<pid>_... names carry it) and whether it is alive, and which live
//    processes map (/proc/*/maps) or hold (/proc/*/fd) them;
//  - the temp dir ($TMPDIR or /tmp): PyTorch's and multiprocessing's residue
//    (pymp-*, torch-shm-dir-*, torchelastic_*, aftermath-torchrun-*; observe/tmp_residue.h) with
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
// The inspection gathers (snapshot.h: gather_machine reads the machine into a
// MachineSnapshot) and then judges (judge_machine, pure); inspect_machine does
// both. Rendering the report (its table and JSON) is reports/inspect.h's.
// A process of another user cannot be inspected without privileges (nor one a
// security module guards, even from root): the report names those, and why,
// wherever they could change a verdict (an orphan that may be a leftover, or
// a possible user of an entry called a leftover); the others are only listed
// in the JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/core/device.h"
#include "harness/core/types.h"
#include "harness/hygiene/snapshot.h"

namespace aftermath {

// A process the inspection lists: it holds a GPU or a /dev/shm entry, or it is a
// zombie child of a leftover.
struct HygieneProcess {
  // As the process table had it: pid, parent, state, uid, start time (with
  // the pid, what reap verifies before signalling), comm, NSpid chain.
  ProcInfo proc;
  std::string cmdline;
  std::vector<std::string> devices;  // device files it holds open
  std::vector<std::string> shm;      // /dev/shm entries it maps or holds ("(deleted)" marked)
  std::vector<int> gpus;             // NVML indices where it owns memory
  std::int64_t gpu_bytes = 0;
  bool orphan = false;
  bool daemon = false;
  bool leftover = false;  // what reap may act on
  int leftover_root = 0;  // the orphan at the top of its leftover tree
  int depth = 0;          // below that root (0: the root itself)
  std::string why;        // the verdict in words
  bool zombie() const { return proc.zombie(); }
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
  Nanos age = 0;                   // since its newest mtime
  std::uint64_t inode = 0;         // reap removes only this very entry
  std::vector<int> held_by;        // live processes
  std::vector<std::string> bound;  // live sockets bound under it
  bool maker_gone = false;         // its sockets are no longer bound
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
  bool matters = false;  // it could change a verdict (see inspect_machine)
  std::string matters_why;
};

// A fault cgroup the inspection found (observe/cgroup_home.h), with its verdict.
struct HygieneCgroup : FaultCgroupEntry {
  bool leftover = false;  // its harness is gone
  std::string why;
};

struct InspectReport {
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
  std::vector<std::string> notes;     // what limits the inspection, and what is in use
  int unreadable_processes = 0;
  std::vector<Uninspected> uninspected;
  std::string proc_root, shm_dir, tmp_dir, device_pattern;
  bool clean() const { return problems.empty(); }
};

// Why process `p` could not be inspected, and whether that could change a
// verdict of `report`: it may be a leftover itself (`may_be_leftover`: an
// orphan that is not init, a known daemon or an ancestor of the inspector), or a
// hidden user of an entry the report calls a leftover. Pure.
Uninspected judge_uninspected(const ProcInfo& p, bool may_be_leftover, const InspectReport& report,
                              const Caller& caller);

// Judges a snapshot: which processes, /dev/shm entries, temp-dir residue and
// fault cgroups are leftovers, which GPUs fail, and what could not be
// inspected. Pure: reads only `snapshot` and the policy in `options` (prefixes,
// orphan parents, daemons, minimum ages; its roots only name things in the
// report's text; nvml and probe are not used). A bad device pattern (in the
// snapshot) is a problem line.
InspectReport judge_machine(const MachineSnapshot& snapshot, const HygieneOptions& options);

// Looks at the machine now: judge_machine(gather_machine(options), options).
InspectReport inspect_machine(const HygieneOptions& options);

// What a process holds, in words: "/dev/nvidia0, torch_1_2_3, 1.0 GiB on GPU 0".
std::string holdings(const HygieneProcess& p);

// "3h12m", "45s", "250ms".
std::string format_age(Nanos age);

// "12, 34, 56".
std::string join_ints(const std::vector<int>& v);

// The creator pid in a torch_<pid>_<rand>_<n> name; nullopt for other names.
std::optional<int> torch_creator_pid(std::string_view name);

}  // namespace aftermath
