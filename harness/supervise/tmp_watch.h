// The job's temp dir over one run: what the job left there, observed, never
// arranged. The harness does not change the job's environment (no private
// TMPDIR): it takes a baseline of the dir the job will use before launch,
// watches it while the job runs, and after teardown records every entry that
// is new since the baseline and still there (TmpLeft), then removes the known
// residue (observe/tmp_residue.h) unless keep_leaks (TmpReclaim).
//
// Runs side by side (--jobs, or other harnesses on the machine) share the
// dir, so "new since launch" is not "the job's". Attribution, best evidence
// first:
//  - who made it: where the kernel says (observe/creators.h: fanotify, as
//    root), each new residue entry's creator is one of the job's processes
//    (then it is the job's) or not (then it is the creator's, never removed
//    nor blamed). mp.spawn's error file, written and closed, is held by
//    nobody: only this tells two runs' error files apart.
//  - who holds it: otherwise each new residue entry is looked at as soon as
//    it is noticed (the caller polls every 50 ms; inotify makes an idle poll
//    one read()), then with a doubling backoff up to 4 s, until some process
//    holds it: a job process makes it the job's; a socket under it bound by
//    anyone else makes it another's (once the job's list, asked again with
//    its newcomers, still lacks the holder). After teardown the job is gone,
//    so any live holder is outside the job. An entry nobody was ever seen
//    holding is the job's: a process that makes and leaves residue within
//    one poll (tens of milliseconds) is the job's far more often than a
//    neighbour's.
//
// Not thread-safe; one owner (the supervisor's loop).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "harness/core/timeline.h"
#include "harness/observe/creators.h"
#include "harness/observe/shm.h"
#include "harness/observe/tmp_residue.h"
#include "harness/os/expected.h"

namespace aftermath {

// What the watch asks of the job while it decides whose an entry is.
struct JobLookup {
  // The job's processes not yet reaped (proc-root pids): as last known, or
  // with `fresh` as of now, newcomers included (a process forked a moment
  // ago holds what looked like a neighbour's).
  std::function<std::vector<int>(bool fresh)> present;
  // Whether `pid` is or was one of the job's processes (the job's tree looked
  // at again first when it is not known). Unset: creators are not asked about.
  std::function<bool(int pid)> had;
};

class TmpDirWatch {
 public:
  struct Options {
    std::string dir;  // the job's temp dir (job_tmp_dir())
    std::string proc_root = "/proc";
    bool keep_leaks = false;
    // Where torchrun's log folders (torchelastic_*, which torchrun makes on
    // every run and never removes: its ranks' logs and error files) are moved
    // after the run, to stay with the run's other logs; empty: left in place.
    std::string logs_dir;
  };

  // The baseline, before launch. On failure (the dir cannot be listed) an
  // Error with the reason, and every later call does nothing.
  Status start(Options options);
  bool active() const { return active_; }
  const std::string& dir() const { return opt_.dir; }

  // While the job runs: notes new residue entries and who holds them.
  // `job` is asked only when an entry is due to be looked at (`present` with
  // `fresh` only when a holder is not in the list). Cheap when the dir did
  // not change and nothing is waiting to be attributed.
  void poll(Nanos now, const JobLookup& job);

  // After teardown: TmpLeft for each entry new since the baseline and still
  // there, TmpReclaim for the residue removed (or, for torchrun's log
  // folders, moved into logs_dir), notes for what could not be. `job`: for
  // the creators the kernel named since the last poll.
  std::vector<Observation> finish(Nanos now, const JobLookup& job = {});

 private:
  struct Seen {
    std::uint64_t inode = 0;
    bool job = false;  // a job process held it
    int outside = 0;   // a process outside the job made or held it (-1: a socket, holder unnamed)
    int creator = 0;   // who made it, where the kernel said
    Nanos next_try = 0;
    Nanos backoff = 0;
  };
  void note_new(const std::string& name, Nanos now);
  // The creators the kernel named since the last call, asked about.
  void note_creators(Nanos now, const JobLookup& job);

  Options opt_;
  bool active_ = false;
  TmpTable baseline_;
  ShmWatch watch_;  // the dir's changes by name (a generic directory watch)
  CreatorWatch creators_;
  std::map<std::string, Seen> seen_;
};

}  // namespace aftermath
