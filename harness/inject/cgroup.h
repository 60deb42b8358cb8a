// Host OOM by the kernel's own OOM killer. A target process is moved into a
// fresh memory cgroup of its own whose limit is `headroom` bytes. Neither
// cgroup v2 nor v1 (with move_charge_at_immigrate off, its default) moves the
// memory a process already holds, so the limit counts only what it charges
// from then on: once it touches `headroom` more bytes the kernel reclaims,
// fails, and kills it (SIGKILL), and the cgroup's oom_kill counter says so.
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
// plant a fake /proc and cgroup tree (files in a temporary folder) and watch
// what would be written.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/os/expected.h"

namespace aftermath {

struct CgroupHome {
  int version = 2;        // 1 or 2
  std::string dir;        // fault cgroups are made in here
};

// Where a memory limit can be put on a job process, or an Error saying why
// nowhere (see above). `configured` empty: $AFTERMATH_CGROUP when set.
Expected<CgroupHome> find_memory_cgroup_home(const std::string& proc_root = "/proc",
                                        const std::string& configured = "");

// The "oom_kill N" line of memory.events (v2) or memory.oom_control (v1).
std::optional<long long> parse_oom_kill(const std::string& contents);

// A fresh name for a fault cgroup: aftermath-<harness pid>-<serial>-f<fault>-p<pid>.
std::string fault_cgroup_name(int fault_index, int pid);

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

// Removes the (empty) cgroup `dir`, retrying until `deadline` from now while
// the kernel still holds an exited member (EBUSY). Ok on success or when it
// is already gone, else why (errnum: the rmdir's errno, EBUSY when members remain).
Status remove_cgroup_dir(const std::string& dir, Nanos deadline = kSecond);

// One fault cgroup: made with its limit, processes moved in, removed by
// close() (the destructor closes too, ignoring the error).
class MemoryCgroup {
 public:
  // Makes home.dir/name limited to `limit` bytes, swap off where the kernel
  // accounts it. An Error when it cannot (nothing is left behind).
  static Expected<std::unique_ptr<MemoryCgroup>> create(const CgroupHome& home,
                                                        const std::string& name, std::int64_t limit);
  ~MemoryCgroup();
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;

  // Moves `pid` (its whole thread group) in.
  Status add(int pid);
  // The OOM killer's kills in here so far; nullopt if unreadable.
  std::optional<long long> oom_kills() const;
  // Removes the directory once the kernel has let go of its exited members,
  // trying until `deadline` from now. Ok on success (or if already closed).
  Status close(Nanos deadline = kSecond);

  const std::string& dir() const { return dir_; }
  int version() const { return version_; }

 private:
  MemoryCgroup(std::string dir, int version) : dir_(std::move(dir)), version_(version) {}
  std::string dir_;
  int version_;
  bool open_ = true;
};

}  // namespace aftermath
