// Target selection, trigger matching and predicates: pure functions over the
// supervisor's view of the job, so each is unit-tested on hand-made processes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/core/types.h"
#include "harness/scenario/fault.h"

namespace aftermath {

// A live (or just-exited) job process as the injector sees it.
struct JobProcess {
  int pid = 0;
  int ppid = 0;
  Role role = Role::Unknown;
  int rank = -1;
  int worker = -1;
  std::string cmdline;
  char state = 'R';
  int depth = 0;
  bool is_top = false;
  bool alive = true;      // not yet exited
  bool orphaned = false;  // its parent exited while it lived (reparented to the job's init)
};

// The live processes a target names. `self_pid` is the process at the point
// (0 when the trigger is not a point). Deepest first, so that signalling in
// order reaches children before parents. `launcher` is every process whose
// role is launcher: the top process unless it announced another role, and any
// process that announced itself as one.
std::vector<int> select_targets(const TargetSpec& t, const std::vector<JobProcess>& procs,
                                int self_pid);

// Does the predicate hold now? `new_shm_entries`: entries present beyond the
// baseline.
bool predicate_holds(const Predicate& p, const std::vector<JobProcess>& procs, int new_shm_entries);

// Does a point reached by a process match a trigger? Labels match when every
// trigger label equals the point's label of the same name, or the sender's
// announced rank / worker / role for those keys. The hit must equal the
// trigger's (when it names one).
bool point_matches(const TriggerSpec& t, const std::string& name, long long hit,
                   const nlohmann::json& labels, const JobProcess* sender);

}  // namespace aftermath
