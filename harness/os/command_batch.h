// Several short-lived commands side by side: at most `parallel` at once, each
// with its own deadline, all within one budget. The hang diagnosis runs one
// gdb per hung process this way, so N processes take about N / parallel
// times one, not N times. Never throws.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness/os/clock.h"
#include "harness/os/spawn.h"

namespace aftermath {

struct CommandBatchOptions {
  int parallel = 1;                  // at most this many at once (less than 1 counts as 1)
  Nanos per_command = 10 * kSecond;  // each command's deadline, from its own start
  Nanos total = 30 * kSecond;        // from the call: no command runs past it
  // A command does not start with less than this left of the total: a start
  // that could not finish is not worth its cost.
  Nanos min_start = 0;
  size_t max_output = 256 * 1024;  // per command
  // Called at least every 50 ms while commands run (as run_command's).
  std::function<void()> while_waiting;
};

struct BatchedCommand {
  CommandOutcome outcome;  // as run_command's; started == false when it could not start
  bool ran = false;        // false: the total ran out before its turn (outcome.output says so)
  Nanos took = 0;          // from its start to its reaping
};

// Runs argvs[i] (as run_command does) in order, `parallel` at a time; the
// result has one entry per argv, in the same order. Each command is killed
// (through its pidfd) and reaped at min(its start + per_command, the call +
// total). Returns once every command has ended; nothing is left running.
std::vector<BatchedCommand> run_commands(const std::vector<std::vector<std::string>>& argvs,
                                         const CommandBatchOptions& options);

}  // namespace aftermath
