// Host OOM by the kernel's own OOM killer. A target process is moved into a
// fresh memory cgroup of its own whose limit is `headroom` bytes. Neither
// cgroup v2 nor v1 (with move_charge_at_immigrate off, its default) moves the
// memory a process already holds, so the limit counts only what it charges
// from then on: once it touches `headroom` more bytes the kernel reclaims,
// fails, and kills it (SIGKILL), and the cgroup's oom_kill counter says so.
//
// Where they go is observe/cgroup_home.h's.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/observe/cgroup_home.h"
#include "harness/os/expected.h"

namespace aftermath {

// A fresh name for a fault cgroup: aftermath-<harness pid>-<serial>-f<fault>-p<pid>.
std::string fault_cgroup_name(int fault_index, int pid);

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
                                                        const std::string& name,
                                                        std::int64_t limit);
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
