// Finding where memory cgroups for faults can go, and reading what is there:
// the "home" for host-OOM fault cgroups, the fault cgroups a home holds, and
// the kernel's OOM-kill counter. Reading only; making, filling and removing a
// fault cgroup is inject/cgroup.h's.
//
// Where the fault cgroups go (the "home"):
//   - AFTERMATH_CGROUP (or the caller's `configured`): that directory, a v2
//     cgroup with memory among its controllers, or a v1 memory cgroup;
//   - memory on cgroup v2: the nearest cgroup, from our own up to the root,
//     whose cgroup.subtree_control already enables memory and where we may
//     make directories. Our own cgroup holds processes (us), so under v2's
//     no-internal-process rule it can host memory-limited children only if it
//     is the root; a systemd service's parent slice usually qualifies;
//   - memory on cgroup v1: our own memory cgroup (v1 lets children sit beside
//     processes).
// Anywhere else the fault is `skipped` with the reason; never faked.
//
// Paths come from /proc/self/cgroup and /proc/self/mountinfo, so a test can
// plant a fake /proc and cgroup tree (files in a temporary folder).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/os/expected.h"

namespace aftermath {

struct CgroupHome {
  int version = 2;  // 1 or 2
  std::string dir;  // fault cgroups are made in here
};

// Where a memory limit can be put on a job process, or an Error saying why
// nowhere (see above). `configured` empty: $AFTERMATH_CGROUP when set.
Expected<CgroupHome> find_memory_cgroup_home(const std::string& proc_root = "/proc",
                                             const std::string& configured = "");

// The "oom_kill N" line of memory.events (v2) or memory.oom_control (v1).
std::optional<long long> parse_oom_kill(const std::string& contents);

// The harness pid in a fault cgroup's name; nullopt for any other name.
std::optional<int> fault_cgroup_owner(const std::string& name);

// A fault cgroup found in a home: a harness that was SIGKILLed (or lost its
// machine) never removed it.
struct FaultCgroupEntry {
  std::string dir;
  int owner = 0;             // the harness pid in its name
  bool owner_alive = false;  // proc_root/<owner> exists (a reused pid counts as alive)
  std::vector<int> members;  // cgroup.procs
  unsigned uid = 0;          // of the directory
};
std::vector<FaultCgroupEntry> list_fault_cgroups(const std::string& home_dir,
                                                 const std::string& proc_root = "/proc");

// Whether a space- or newline-separated controller list names `word`.
bool cgroup_list_has(const std::string& list, const std::string& word);

}  // namespace aftermath
