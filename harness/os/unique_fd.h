// An owned file descriptor: closed once, when its owner goes.
#pragma once

#include "harness/os/expected.h"

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
  // Closes now and reports the error (its errno in Error::errnum), unlike
  // the destructor. Nothing to close is no error.
  Status close();

 private:
  int fd_ = -1;
};

}  // namespace aftermath
