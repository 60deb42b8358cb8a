// A snapshot of the process table with what device and hygiene checks need
// from it (parent, state, uid, start time, NSpid chain), and the rule that
// says whether a process is the job's or an orphan of it.
//
// PID namespaces. A pid only means something in a namespace. /proc/PID/status's
// NSpid lists a process's pid in every namespace from the one the procfs was
// mounted for (level 0: the directory name) down to its own. NVML reports
// pids in the driver's view (the host's on most drivers, the caller's on
// newer ones), the supervisor knows the job by the pids it sees, and a job in
// its own PID namespace knows itself by pids counted from 1. Each is "the
// pid at level L", and find_at_level() translates.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "harness/observe/proc.h"

namespace aftermath {

struct ProcInfo {
  int pid = 0;  // level 0: the proc root's namespace
  int ppid = 0;
  char state = '?';
  std::string comm;
  unsigned uid = 0;  // real uid
  std::uint64_t start_ticks = 0;
  std::vector<int> nspid;  // outermost first; {pid} when the kernel has no NSpid
  // The pid `level` namespaces below the proc root's; 0 when it has none there.
  int pid_at(int level) const;
  bool zombie() const { return state == 'Z' || state == 'X'; }
};

// The real uid: the first value of status's "Uid:" line. nullopt if absent.
std::optional<unsigned> parse_status_uid(std::string_view contents);

// One process's ProcInfo from stat and status; nullopt when it is gone.
std::optional<ProcInfo> read_proc_info(const ProcReader& proc, int pid);

class ProcessIndex {
 public:
  // Reads stat and status of every process under the reader's root; processes
  // that vanish mid-scan are skipped.
  static ProcessIndex scan(const ProcReader& proc);
  void add(ProcInfo p);
  // By pid in the proc root's namespace; nullptr when absent.
  const ProcInfo* get(int pid) const;
  // The process whose pid `level` namespaces down is `pid`; nullptr when none,
  // or when several (the level holds sibling namespaces, and pids repeat).
  const ProcInfo* find_at_level(int pid, int level) const;
  const std::map<int, ProcInfo>& all() const { return procs_; }
  // pid's ancestors, parent first, up to (not including) pid 0.
  std::vector<int> ancestors(int pid) const;

 private:
  std::map<int, ProcInfo> procs_;
};

// Who the job is, to mark processes as the job's or an orphan of it.
struct JobRef {
  std::set<int> pids;  // the job's processes, as pids at pid_level
  int pid_level = 0;   // the namespace level those pids are counted in
  // A process whose parent is one of these (proc-root pids) was re-parented:
  // init (1), or the job's reaper / a subreaper that collects orphans.
  std::set<int> orphan_parents = {1};

  bool contains(const ProcInfo& p) const { return pids.count(p.pid_at(pid_level)) > 0; }
  bool orphan(const ProcInfo& p) const { return orphan_parents.count(p.ppid) > 0; }
};

}  // namespace aftermath
