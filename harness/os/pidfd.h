// A process handle by pidfd: the one way the harness signals a process.
// Opening a pidfd and then re-checking the process's start time proves the
// handle names the process we observed, not a later one that reused its pid.
//
// These two are the raw system calls and return std::error_code (the errno),
// not an Expected: pidfd_signal runs in signal handlers, where nothing may
// allocate. Callers above this layer turn a code into an Error.
#pragma once

#include <system_error>

#include "harness/os/unique_fd.h"

namespace aftermath {

// pidfd_open(2). Errors: ESRCH (gone), ENOSYS (kernel < 5.3).
[[nodiscard]] std::error_code pidfd_open(int pid, UniqueFd& out);
// pidfd_send_signal(2). Async-signal-safe.
[[nodiscard]] std::error_code pidfd_signal(int pidfd, int sig);

}  // namespace aftermath
