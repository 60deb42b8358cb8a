// The kernel's process events (the proc connector: netlink NETLINK_CONNECTOR,
// group CN_IDX_PROC): every fork, exec, exit and comm change on the machine,
// pushed to us as it happens, so a supervisor learns that its job forked
// without re-reading /proc on every tick.
//
// Subscribing needs CAP_NET_ADMIN in the initial user namespace, and the
// caller in the initial PID and network namespaces; elsewhere open() fails
// with the reason and callers fall back to polling (/proc/loadavg's last pid).
// Pids are the initial namespace's, as in the host's /proc.
//
// Events are multicast to every subscriber on the machine and the socket
// buffer is finite: when it overflows, events are lost, and drain() says so
// (the caller must then re-read what it tracks). Not thread-safe; one owner.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "harness/os/expected.h"

namespace aftermath {

struct ProcEvent {
  enum class Kind { Fork, Exec, Exit, Comm };
  Kind kind = Kind::Fork;
  int pid = 0;          // the thread the event is about (the child, for Fork)
  int tgid = 0;         // its process (thread group); pid == tgid: a process, not a thread
  int parent_pid = 0;   // Fork only: the forking thread
  int parent_tgid = 0;  // Fork only: the forking process
  int exit_status =
      0;  // Exit only: the wait status the parent will reap (exit code << 8, or the signal)
};

class ProcEvents {
 public:
  // Subscribes; an error saying why where the kernel refuses or has no proc
  // connector. Waits at most `ack_timeout_ms` for the kernel's
  // acknowledgement (a refusal in a non-initial namespace sends none).
  static Expected<std::unique_ptr<ProcEvents>> open(int ack_timeout_ms = 500);
  ~ProcEvents();  // unsubscribes
  ProcEvents(const ProcEvents&) = delete;
  ProcEvents& operator=(const ProcEvents&) = delete;

  // The socket: readable when events are pending (for poll/epoll).
  int fd() const { return fd_; }

  // Hands every pending event to `f`, in the kernel's order, without
  // blocking. False if events were lost since the last call (buffer overrun):
  // whatever the caller tracks must be re-read.
  [[nodiscard]] bool drain(const std::function<void(const ProcEvent&)>& f);

 private:
  explicit ProcEvents(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace aftermath
