// Host out-of-memory, for real: the mechanisms the kernel offers, each with
// the reason it is unavailable where it is. Never a fake. The cgroup one (the
// kernel's OOM killer) is in cgroup.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "harness/os/expected.h"

namespace aftermath {

// Lowers RLIMIT_AS of `pid` (prlimit) to its current address-space size plus
// `headroom` bytes: its next allocation larger than that fails with ENOMEM.
// What was done, in words for the fault's record; else why it could not be.
Expected<std::string> lower_address_space(int pid, std::int64_t headroom,
                                          const std::string& proc_root = "/proc");

// VmSize of /proc/PID/status in bytes; nullopt if absent.
std::optional<std::int64_t> parse_vm_size(const std::string& status_contents);

}  // namespace aftermath
