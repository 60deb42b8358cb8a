// Short-lived helper commands with a deadline: gdb for a stack, python3 for a
// requirement. The child gets /dev/null on stdin and one temporary file for
// stdout and stderr together; past the deadline it is SIGKILLed through its
// pidfd and reaped. Never throws.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "harness/core/types.h"

namespace aftermath {

// Starts argv[0] (an absolute path; looked up in PATH when search_path) with
// fd 0, 1, 2 on in_fd, out_fd, err_fd (-1: /dev/null), the environment `env`
// ("KEY=value" entries; nullptr: the harness's own), default signal
// dispositions and an empty signal mask, whatever the harness has set, so
// SIGTERM and SIGKILL act on it. Its pid, or -1 with *error saying why.
pid_t spawn_process(const std::vector<std::string>& argv, const std::vector<std::string>* env,
                    int in_fd, int out_fd, int err_fd, std::string* error,
                    bool search_path = false);

struct CommandOutcome {
  bool started = false;    // false: posix_spawn failed (then `output` says why)
  bool timed_out = false;  // killed at the deadline
  int status = -1;         // the wait status (WIFEXITED ...), -1 when not started
  std::string output;      // stdout and stderr, interleaved, at most max_output bytes
  bool exited_zero() const;
};

// Runs argv[0] (an absolute path, or a name looked up in PATH) with the
// harness's environment. `while_waiting`, when set, is called at least every
// 50 ms while the command runs (the supervisor keeps reading the job's
// events during a hang diagnosis this way).
CommandOutcome run_command(const std::vector<std::string>& argv, Nanos deadline,
                           size_t max_output = 256 * 1024,
                           const std::function<void()>& while_waiting = {});

}  // namespace aftermath
