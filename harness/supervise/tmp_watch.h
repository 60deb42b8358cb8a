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
//    (then it is the job's), shown to be another's (a run beside it had it:
//    run_registry.h; or it is alive outside the job's tree: then it is the
//    creator's, never removed nor blamed), or unknown (gone, and no run here
//    knew it: asked again at each poll, then the next rule). mp.spawn's
//    error file, written and closed, is held by nobody: only this tells two
//    runs' error files apart.
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
  // Whose process `pid` is (or was): the job's, shown to be another's (a
  // run beside it had it, or it runs outside the job's tree), or unknown (it
  // is gone and nobody here knew it: its entry is judged by its holders).
  // Unset: creators are not asked about.
  enum class Whose { Job, Outside, Unknown };
  std::function<Whose(int pid)> whose;
};

class JobTracker;
class ProcReader;

// The lookup a supervised job gives the watch. Before it answers about a
// process it does not know (or lists the job "fresh"), the tracker walks the
// job's tree from its reaper down: an entry's maker is often younger than the
// tracker's last look, and the announcement of its birth (a process event,
// the reaper's word) may still be unread. A known process is the job's; one
// a run beside this one had, or alive and not in the tree, another's; one
// gone and never known, unknown. `run_id`: this run's, in run_registry.h.
JobLookup tracker_lookup(JobTracker& tracker, const ProcReader& proc, int run_id);

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
    bool creator_known = false;  // and whose that is was settled
    Nanos next_try = 0;
    Nanos backoff = 0;
  };
  void note_new(const std::string& name, Nanos now);
  // The creators the kernel named since the last call, and those still
  // unknown that are due (all of them when `last`), asked about.
  void note_creators(Nanos now, const JobLookup& job, bool last);
  // Settles whose `s`'s creator is, where that can be known now.
  static void ask_creator(Seen& s, const JobLookup& job);

  Options opt_;
  bool active_ = false;
  TmpTable baseline_;
  ShmWatch watch_;  // the dir's changes by name (a generic directory watch)
  CreatorWatch creators_;
  std::map<std::string, Seen> seen_;
};

}  // namespace aftermath
