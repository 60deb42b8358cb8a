// A python3 child of the test running a script, with a handshake: the test
// waits (bounded) for a line the script prints once it is where the test
// wants it, then for it to be asleep in the kernel. SIGKILLed and reaped on
// destruction. Its stdin is a pipe the test holds: a script that reads it
// blocks until the test ends.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/support/children.h"
#include "tests/support/files.h"

namespace aftermath::testing {

class PythonChild {
 public:
  // Runs `python` (an absolute path) with `args`; nothing runs when it cannot start.
  PythonChild(const std::string& python, const std::vector<std::string>& args) {
    int out[2], in[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return;
    if (::pipe2(in, O_CLOEXEC) != 0) {
      ::close(out[0]);
      ::close(out[1]);
      return;
    }
    std::vector<std::string> argv{python};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv = testing_children::exec_argv(argv);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::execv(cargv[0], cargv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    ::close(in[0]);
    from_child_ = out[0];
    to_child_ = in[1];
    child_.adopt(pid);
  }
  ~PythonChild() {
    child_.kill_and_reap();
    for (int fd : {from_child_, to_child_})
      if (fd >= 0) ::close(fd);
  }
  PythonChild(const PythonChild&) = delete;
  PythonChild& operator=(const PythonChild&) = delete;

  int pid() const { return child_.pid(); }

  // Waits (bounded) until it printed `line` and then sleeps in the kernel
  // (state S): it is past the print and blocked where the script blocks.
  bool wait_for(const std::string& line, int timeout_ms = 30000) {
    if (pid() <= 0) return false;
    Clock start;
    std::string got;
    while (got.find(line + "\n") == std::string::npos) {
      int left = timeout_ms - start.ms();
      if (left <= 0 || !testing_children::readable_within(from_child_, left)) return false;
      char buf[256];
      ssize_t n = ::read(from_child_, buf, sizeof buf);
      if (n <= 0) return false;
      got.append(buf, static_cast<size_t>(n));
    }
    while (state() != 'S') {
      if (start.ms() > timeout_ms) return false;
      pollfd none{-1, 0, 0};
      ::poll(&none, 0, 2);  // bounded polling of /proc: it is between print and block
    }
    return true;
  }

  char state() const { return aftermath::testing::proc_state(pid()); }

 private:
  struct Clock {
    timespec t0;
    Clock() { ::clock_gettime(CLOCK_MONOTONIC, &t0); }
    int ms() const {
      timespec now;
      ::clock_gettime(CLOCK_MONOTONIC, &now);
      return static_cast<int>((now.tv_sec - t0.tv_sec) * 1000 +
                              (now.tv_nsec - t0.tv_nsec) / 1000000);
    }
  };
  testing_children::OwnedChild child_;
  int from_child_ = -1;
  int to_child_ = -1;
};

}  // namespace aftermath::testing
