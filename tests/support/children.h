// Bounded waits on the children a test forks, and an owner for them: readable
// within a deadline, reaped within one (killed past it), and SIGKILLed and
// reaped on destruction, so no test can hang or leave a process behind.
#pragma once

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace aftermath::testing_children {

// argv as execv takes it, built before fork (nothing is allocated between
// fork and exec): pointers into `args`, which must outlive them, then null.
inline std::vector<char*> exec_argv(std::vector<std::string>& args) {
  std::vector<char*> out;
  for (auto& a : args) out.push_back(a.data());
  out.push_back(nullptr);
  return out;
}

// True when fd is readable (or at EOF) within timeout_ms.
inline bool readable_within(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  for (;;) {
    int r = ::poll(&p, 1, timeout_ms);
    if (r < 0 && errno == EINTR) continue;
    return r == 1;
  }
}

// A forked child of ours, held by pid and pidfd: SIGKILLed (by its pidfd;
// by pid only where none could be opened) and reaped on destruction unless
// it was reaped before. Every wait has a deadline.
class OwnedChild {
 public:
  OwnedChild() = default;
  explicit OwnedChild(pid_t pid) { adopt(pid); }
  ~OwnedChild() { kill_and_reap(); }
  OwnedChild(const OwnedChild&) = delete;
  OwnedChild& operator=(const OwnedChild&) = delete;

  // Takes on `pid`, what fork() returned in the parent (<= 0: nothing to
  // hold), ending any child held before.
  void adopt(pid_t pid) {
    kill_and_reap();
    if (pid <= 0) return;
    pid_ = pid;
    pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  }

  // Its pid; -1 when none is held (never started, or reaped).
  pid_t pid() const { return pid_; }

  // Reaps it if it exits within timeout_ms, its wait status in *status;
  // false, and still held, if it does not. Never signals it.
  bool exited_within(int timeout_ms, int* status = nullptr) {
    return pid_ > 0 && reap_if_gone_within(timeout_ms, status);
  }

  // Waits (bounded) for it to exit, SIGKILLs it past the deadline, reaps it.
  // Its wait status; -1 if there was none to reap.
  int reap_within(int timeout_ms) {
    int status = -1;
    if (pid_ > 0 && !reap_if_gone_within(timeout_ms, &status)) kill_and_reap(&status);
    return status;
  }

  // SIGKILLs and reaps it now (no-op when none is held).
  void kill_and_reap(int* status = nullptr) {
    if (pid_ <= 0) return;
    if (pidfd_ >= 0) {
      ::syscall(SYS_pidfd_send_signal, pidfd_, SIGKILL, nullptr, 0);  // ESRCH: exited already
    } else {
      ::kill(pid_, SIGKILL);  // ours and unreaped, so the pid is not reused
    }
    // SIGKILLed, it is gone at once unless stuck in the kernel: past that, it
    // is left (unreaped) rather than hang the test.
    if (!reap_if_gone_within(kKilledMs, status)) forget();
  }

 private:
  static constexpr int kKilledMs = 10000;

  bool reap_if_gone_within(int timeout_ms, int* status) {
    int st = -1;
    if (pidfd_ >= 0) {
      if (!readable_within(pidfd_, timeout_ms)) return false;
      while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
      }
    } else {  // no pidfd (kernel < 5.3): ask waitpid every 10 ms up to the deadline
      for (int waited = 0;; waited += 10) {
        pid_t r = ::waitpid(pid_, &st, WNOHANG);
        if (r == pid_ || (r < 0 && errno != EINTR)) break;
        if (waited >= timeout_ms) return false;
        ::poll(nullptr, 0, 10);
      }
    }
    if (status) *status = st;
    forget();
    return true;
  }
  void forget() {
    if (pidfd_ >= 0) ::close(pidfd_);
    pidfd_ = -1;
    pid_ = -1;
  }

  pid_t pid_ = -1;
  int pidfd_ = -1;
};

// Waits (bounded) for a child of ours to exit; SIGKILLs it past the
// deadline; reaps it. Its wait status (-1 for a pid <= 0, never signalled).
inline int reap_within(pid_t pid, int timeout_ms) {
  return OwnedChild(pid).reap_within(timeout_ms);
}

}  // namespace aftermath::testing_children
