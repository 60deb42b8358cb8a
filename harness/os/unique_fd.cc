#include "harness/os/unique_fd.h"

#include <errno.h>
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

}  // namespace aftermath
