#include "harness/os/unique_fd.h"

#include <errno.h>
#include <unistd.h>

#include <string>

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

Status UniqueFd::close() {
  if (fd_ < 0) return {};
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return sys_error("close fd " + std::to_string(fd));
  return {};
}

}  // namespace aftermath
