// `aftermath reap`: clean what `aftermath check` found, safely.
//
// What it may touch, and nothing else:
//  - a leftover process the check listed (an orphan holding a GPU or /dev/shm,
//    or a holder below one): SIGTERM, children before parents; SIGCONT to a
//    stopped one; SIGKILL to what is left after term_timeout. Every signal goes
//    through a pidfd opened *and then* checked against the start time and uid
//    the check recorded, so a pid reused since the check is never signalled;
//  - a zombie: never itself (it cannot be signalled); its parent only if that
//    parent is a leftover the check listed. Any other zombie is reported;
//  - a /dev/shm torch_* / sem.* entry whose creator is gone and that no live
//    process maps or holds: unlinked, after re-checking at removal time that
//    it is the same file (inode) and still unused. An entry used only by
//    leftover processes is removed once they are gone.
//  - temp-dir residue (pymp-*, torch-shm-dir-*, torchelastic_*, aftermath-torchrun-*) the check
//    called a leftover: removed with everything in it, after re-checking at
//    removal time that it is the same entry (inode) and that no live process
//    holds it (fds, cwd, bound sockets). Residue held only by leftover
//    processes is removed once they are gone.
//  - a fault cgroup whose harness is gone: removed (rmdir) once it is empty;
//    one that still holds processes reap does not terminate is left alone.
//  - only the caller's own processes and entries (uid), unless all_users
//    (which needs root); never pid 1, the caller or its ancestors.
//
// plan_reap is pure: the plan is what --dry-run shows. execute_reap does it
// and runs the check again to verify.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/hygiene/hygiene.h"

namespace aftermath {

struct ReapOptions {
  bool all_users = false;
  unsigned uid = 0;                  // whose processes and entries are ours (the caller's)
  Nanos term_timeout = 3 * kSecond;  // SIGTERM -> SIGKILL
  Nanos kill_timeout = 2 * kSecond;  // SIGKILL -> give up on it
};

struct ReapStep {
  enum class Kind { Terminate, Remove, RemoveCgroup, RemoveTmp };
  Kind kind = Kind::Terminate;
  // Terminate
  int pid = 0;
  std::uint64_t start_ticks = 0;
  unsigned uid = 0;
  std::string comm;
  int depth = 0;
  char state = '?';
  // Remove (a /dev/shm name), RemoveCgroup (a directory), RemoveTmp (the
  // entry's path in the temp dir)
  std::string name;
  std::uint64_t inode = 0;
  bool after_processes = false;  // only once the processes it depends on are gone
  std::string why;               // why it is in the plan
  std::string result;            // what happened ("" until executed)
  bool done = false;             // the process is gone / the entry was removed
};

struct ReapPlan {
  std::vector<ReapStep> steps;         // terminations (deepest first), removals, temp dir, cgroups
  std::vector<std::string> untouched;  // what the check found and reap leaves, and why
  // Processes left alone because they are no leftover ("pid N (comm, uid U):
  // why", the check's own verdict): the report's table already lists each,
  // so the text names them once, there (the JSON lists them with the rest).
  std::vector<std::string> in_use;
};

// The plan for what `report` found. Pure.
ReapPlan plan_reap(const InspectReport& report, const ReapOptions& options);

struct ReapResult {
  ReapPlan plan;        // with each step's result
  InspectReport after;  // the inspection run again
};

// Carries the plan out. `hygiene` must name the roots the report came from.
ReapResult execute_reap(ReapPlan plan, const HygieneOptions& hygiene, const ReapOptions& options);

}  // namespace aftermath
