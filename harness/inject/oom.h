// Host out-of-memory, for real: the mechanisms the kernel offers, each with
// the reason it is unavailable where it is. Never a fake.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace aftermath {

struct OomAction {
  bool done = false;
  std::string mechanism;  // "rlimit" | "cgroup"
  std::string detail;     // what was done, or why it could not be
};

// Lowers RLIMIT_AS of `pid` (prlimit) to its current address-space size plus
// `headroom` bytes: its next allocation larger than that fails with ENOMEM.
OomAction lower_address_space(int pid, std::int64_t headroom, const std::string& proc_root = "/proc");

// Why a cgroup v2 memory limit cannot be used here, or nullopt if it can:
// the memory controller must be on cgroup v2 and our cgroup delegated
// (writable, with memory in its controllers).
std::optional<std::string> cgroup_memory_unavailable(const std::string& proc_root = "/proc",
                                                     const std::string& cgroup_root = "/sys/fs/cgroup");

// VmSize of /proc/PID/status in bytes; nullopt if absent.
std::optional<std::int64_t> parse_vm_size(const std::string& status_contents);

}  // namespace aftermath
