// Short-lived helper commands with a deadline: gdb for a stack, python3 for a
// requirement. The child gets /dev/null on stdin and one temporary file for
// stdout and stderr together; past the deadline it is SIGKILLed through its
// pidfd and reaped. Never throws.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness/core/types.h"

namespace aftermath {

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
