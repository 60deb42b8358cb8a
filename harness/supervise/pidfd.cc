#include "harness/supervise/pidfd.h"

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace aftermath {

UniqueFd& UniqueFd::operator=(UniqueFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

std::error_code UniqueFd::close() {
  if (fd_ < 0) return {};
  int r = ::close(fd_);
  fd_ = -1;
  return r == 0 ? std::error_code() : std::error_code(errno, std::system_category());
}

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
