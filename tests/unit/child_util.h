// Bounded waits on the children a test forks: readable within a deadline,
// and reaped within one (killed past it), so no test can hang or leave a
// process behind.
#pragma once

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

namespace aftermath::testing_children {

// True when fd is readable (or at EOF) within timeout_ms.
inline bool readable_within(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  for (;;) {
    int r = ::poll(&p, 1, timeout_ms);
    if (r < 0 && errno == EINTR) continue;
    return r == 1;
  }
}

// Waits (bounded) for a child of ours to exit; SIGKILLs it past the
// deadline; reaps it. Its wait status.
inline int reap_within(pid_t pid, int timeout_ms) {
  int status = -1;
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0 || !readable_within(pidfd, timeout_ms)) ::kill(pid, SIGKILL);
  if (pidfd >= 0) ::close(pidfd);
  ::waitpid(pid, &status, 0);
  return status;
}

}  // namespace aftermath::testing_children
