#include "harness/os/pidfd.h"

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace aftermath {

std::error_code pidfd_open(int pid, UniqueFd& out) {
  long fd = ::syscall(SYS_pidfd_open, pid, 0);
  if (fd < 0) return {errno, std::system_category()};
  out = UniqueFd(static_cast<int>(fd));
  return {};
}

std::error_code pidfd_signal(int pidfd, int sig) {
  if (::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0) != 0)
    return {errno, std::system_category()};
  return {};
}

}  // namespace aftermath
