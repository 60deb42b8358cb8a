// The one way the harness starts a child process (the reaper, gdb for a
// stack, python3 for a requirement, a device probe, the device hog), and
// short-lived commands run with a deadline. Never throws.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "harness/os/clock.h"
#include "harness/os/expected.h"

namespace aftermath {

struct SpawnOptions {
  // argv[0] is an absolute path, or a name looked up in PATH when search_path.
  std::vector<std::string> argv;
  bool search_path = false;
  // "KEY=value" entries; nullptr: the harness's own environment.
  const std::vector<std::string>* env = nullptr;
  // fd 0, 1, 2 of the child; -1: /dev/null.
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  // Further descriptors the child inherits at the same numbers (their
  // close-on-exec flag is cleared in the child only).
  std::vector<int> keep_fds;
  // Default signal dispositions and an empty signal mask, whatever the harness
  // has set, so SIGTERM and SIGKILL act on it. Off: the child inherits both.
  bool reset_signals = true;
  // The child gets SIGKILL when the harness dies (PR_SET_PDEATHSIG); if the
  // harness died before that was armed, the child never runs its program.
  bool die_with_parent = false;
};

// Starts the child; its pid, or why it could not start (including a failed
// exec: the error comes back before this returns).
Expected<pid_t> spawn(const SpawnOptions& options);

// How a short-lived command ended, closed: every reader sees one of four.
struct CommandOutcome {
  enum class End {
    NotStarted,  // it could not start: `output` says why
    TimedOut,    // killed at its deadline (SIGKILL) and reaped
    Exited,      // it exited by itself: `code` is its exit status
    Signaled,    // a signal it did not catch ended it: `code` is the signal
  };
  End end = End::NotStarted;
  int code = 0;        // Exited: the exit status; Signaled: the signal; else 0
  std::string output;  // stdout and stderr, interleaved, at most max_output bytes
  bool started() const { return end != End::NotStarted; }
  bool timed_out() const { return end == End::TimedOut; }
  bool exited_zero() const { return end == End::Exited && code == 0; }
  // "exited 3", "killed by SIGSEGV", "timed out", "not started: ..."
  std::string describe() const;
};

// A command started by start_command: its stdout and stderr go to one
// unlinked temporary file. Owned by the caller until finish_command.
struct StartedCommand {
  pid_t pid = -1;
  int pidfd = -1;  // -1 where pidfd_open failed: finish_command then kills it at once
  int out = -1;    // the output file
};

// Starts argv[0] (an absolute path, or a name looked up in PATH) with the
// harness's environment and /dev/null on stdin; or why it could not start.
Expected<StartedCommand> start_command(const std::vector<std::string>& argv);

// Ends a started command: SIGKILLs it through its pidfd first when `kill`
// (then timed_out is set), reaps it, and reads at most max_output bytes of
// its output. Closes its descriptors; `c` is spent afterwards.
CommandOutcome finish_command(StartedCommand& c, bool kill, size_t max_output);

// Runs argv[0] (an absolute path, or a name looked up in PATH) with the
// harness's environment, /dev/null on stdin and one temporary file for stdout
// and stderr together; past the deadline it is SIGKILLed through its pidfd
// and reaped. `while_waiting`, when set, is called at least every 50 ms while
// the command runs (the supervisor keeps reading the job's events during a
// hang diagnosis this way).
CommandOutcome run_command(const std::vector<std::string>& argv, Nanos deadline,
                           size_t max_output = 256 * 1024,
                           const std::function<void()>& while_waiting = {});

}  // namespace aftermath
