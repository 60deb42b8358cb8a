// A process handle by pidfd: the one way the supervisor signals a process.
// Opening a pidfd and then re-checking the process's start time proves the
// handle names the process we observed, not a later one that reused its pid.
#pragma once

#include <cstdint>
#include <system_error>

namespace aftermath {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  // Closes now and reports the error, unlike the destructor.
  std::error_code close();

 private:
  int fd_ = -1;
};

// pidfd_open(2). Errors: ESRCH (gone), ENOSYS (kernel < 5.3).
[[nodiscard]] std::error_code pidfd_open(int pid, UniqueFd& out);
// pidfd_send_signal(2). Async-signal-safe.
[[nodiscard]] std::error_code pidfd_signal(int pidfd, int sig);

}  // namespace aftermath
