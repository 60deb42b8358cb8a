// The fault driver: acts out one fault on the processes a selector chose, one
// function per action, and keeps what must outlive the moment (the fault
// cgroups, the device hogs, the interposer's arm folder) until teardown.
//
// It knows nothing of the supervisor: targets come as plain data (pid, a
// borrowed pidfd, the pid the process sees itself as), and what it did comes
// back as a FaultAct (status, mechanism, words for the report, the answer for
// a waiting point), so each action is tested on a real child of the test's
// own. What happens at a point inside the job (delay, hang, device_oom by
// point, host_oom at a point) is an answer the fixture acts on.
//
// Not thread-safe: the supervisor calls it from its one loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/fault_kind.h"
#include "harness/inject/cgroup.h"
#include "harness/inject/device_fault.h"
#include "harness/inject/network_cut.h"
#include "harness/observe/kmsg.h"
#include "harness/os/unique_fd.h"
#include "harness/scenario/fault.h"

namespace aftermath {

// One process a fault acts on.
struct FaultTarget {
  int pid = 0;        // as the harness sees it (the proc root's namespace)
  int pidfd = -1;     // borrowed, never closed here; -1: none (the process is not signalled)
  int inner_pid = 0;  // as it sees itself (its PID namespace); 0: read from NSpid when needed
};

// What one action did.
struct FaultAct {
  FaultStatus status = FaultStatus::Failed;
  FaultMechanism mechanism = FaultMechanism::None;
  std::string reason;                  // how it was done, or why it was not
  std::string answer = "continue";     // the reply to the point that fired it (if any)
  std::vector<int> signalled;          // pids a signal reached (each a Fault observation)
  std::vector<std::string> cgroups;    // fault cgroups made (host_oom by cgroup)
  std::optional<long long> oom_kills;  // host_oom by cgroup, once tried: 0, counted from then on
  std::vector<std::string> notes;      // side remarks for the timeline
  bool ends_agent = false;             // agent_kill: end_agent() once this is recorded
};

// A new OOM kill seen in a fault cgroup.
struct OomKillSeen {
  size_t fault = 0;           // the fault's index
  int pid = 0;                // the process moved into that cgroup
  long long kills = 0;        // the kills in that cgroup so far
  long long fault_total = 0;  // the kills in all of that fault's cgroups so far
  std::string cgroup;
  std::string kernel_line;  // the OOM killer's own words on it ("": not readable)
};

// What the faults act with on this machine: one struct, passed down as it is
// from the command line (RunOptions) through the supervisor to the driver.
struct InjectTools {
  // Device OOM: the device nodes and CUDA runtimes that decide whether it can
  // act here (empty candidates: cudart_candidates()), and the folder of
  // aftermath-device-hog and libaftermath-cudafail.so (empty: the reaper's).
  std::string dev_root = "/dev";
  std::vector<std::string> cudart_candidates;
  std::string tools_dir;
  // Host OOM by cgroup: where fault cgroups go (empty: $AFTERMATH_CGROUP,
  // else found from our own; see cgroup.h).
  std::string cgroup_parent;
  // The node actions (node_loss, partition) cut this node's network through
  // it (not owned); null outside a multi-node agent: they are skipped.
  NetworkCut* network = nullptr;
  // agent_kill ends the node's agent through it (it never returns), once the
  // fault is recorded; null outside a multi-node agent: agent_kill is skipped.
  std::function<void()> end_agent;
};

struct FaultDriverOptions {
  std::string proc_root = "/proc";
  InjectTools tools;
  // The hog's deadline from spawn to its answer.
  Nanos hog_deadline = 30 * kSecond;
};

class FaultDriver {
 public:
  explicit FaultDriver(FaultDriverOptions options);
  ~FaultDriver();
  FaultDriver(const FaultDriver&) = delete;
  FaultDriver& operator=(const FaultDriver&) = delete;

  // Before the launch: when a fault uses the interposer (and it can act
  // here), makes the arm folder and adds to `env` what preloads it.
  void prepare_job_env(const std::vector<FaultSpec>& faults,
                       std::map<std::string, std::string>& env);

  // Acts out fault `index` on `targets` (not empty). `at_point`: its trigger
  // is a point whose process waits for the answer. Dispatches to one of the
  // functions below by the fault's action.
  FaultAct act(size_t index, const FaultSpec& f, const std::vector<FaultTarget>& targets,
               bool at_point);

  // The signal actions: f.signal to each target by its pidfd.
  // `proc_root`: where a target's signal dispositions are read (SigIgn).
  static FaultAct send_signal(const FaultSpec& f, const std::vector<FaultTarget>& targets,
                              const std::string& proc_root = "/proc");
  // host_oom at a point, by RLIMIT_AS: the fixture then makes its allocation.
  FaultAct host_oom_rlimit(const FaultSpec& f, const std::vector<FaultTarget>& targets) const;
  // host_oom by a memory cgroup per target, the kernel's OOM killer acting.
  FaultAct host_oom_cgroup(size_t index, const FaultSpec& f,
                           const std::vector<FaultTarget>& targets);
  // device_oom: a hog, the interposer armed for the targets, or a point reply.
  FaultAct device_oom(const FaultSpec& f, const std::vector<FaultTarget>& targets);
  // delay and hang: the point's process is held (a reply to the point).
  static FaultAct hold_at_point(const FaultSpec& f);
  // node_loss: the network cut, then SIGKILL to every target at once;
  // partition: the network cut (healed by heal_network after its duration).
  FaultAct node_fault(const FaultSpec& f, const std::vector<FaultTarget>& targets);
  // SIGSTOP to `targets`, then to every descendant of theirs (found through
  // children files, their pidfds kept in `opened`), until a pass finds none
  // new and all are stopped or gone (2 s at most). Returns them all.
  std::vector<FaultTarget> stop_with_descendants(const std::vector<FaultTarget>& targets,
                                                 std::vector<UniqueFd>& opened) const;
  // agent_kill: the agent is to end (ends_agent) once the fault is recorded;
  // the node's job processes (`targets`) must die with it.
  FaultAct agent_kill(const std::vector<FaultTarget>& targets) const;
  // scancel: SIGCONT then SIGTERM (or the fault's own signal) to the step's
  // processes, `targets` (the step_tree).
  FaultAct scancel(const FaultSpec& f, const std::vector<FaultTarget>& targets);
  // The processes Slurm's proctrack/linuxproc finds for a step whose task is
  // `task`: the task and every one of `candidates` descended from it through
  // parents alive now (each parent read from its /proc stat at this moment),
  // the task first, then by depth. A process whose parent died has been
  // reparented and is not found, as Slurm does not find it (measured on
  // Slurm 22.05: `scancel` signals a step's task and its children, never a
  // child of a dead parent). Empty when the task is gone.
  std::vector<int> step_tree(int task, const std::vector<int>& candidates) const;
  // The agent's end, for agent_kill (see FaultDriverOptions::end_agent).
  void end_agent() const;
  // Ends a partition's cut (nothing to do outside a multi-node agent).
  Status heal_network();

  // New OOM kills in the fault cgroups since the last call (a small read each).
  std::vector<OomKillSeen> poll_oom_kills();
  bool has_cgroups() const { return !cgroups_.empty(); }
  // Whether device OOM can act on this machine, and why not (asked once).
  const Status& device_oom_available_here();

  // At teardown, while the job is still contained: the hogs let their memory
  // go and the arm folder goes. A note for each hog.
  std::vector<std::string> release_device();
  // After the job is gone: the last kills are counted (returned), the fault
  // cgroups removed; `notes` gets a line for each that could not be.
  std::vector<OomKillSeen> close_cgroups(std::vector<std::string>& notes);

  const std::string& arm_dir() const { return cuda_arm_dir_; }

 private:
  FaultAct device_oom_hog(const FaultSpec& f);
  FaultAct device_oom_interposer(const std::vector<FaultTarget>& targets) const;
  std::string tools_dir() const;

  FaultDriverOptions opt_;
  std::optional<Status> device_oom_can_;
  std::string cuda_arm_dir_;    // the interposer's per-process arm files
  std::string cuda_env_error_;  // why the interposer could not be preloaded
  std::vector<std::unique_ptr<DeviceHog>> hogs_;
  std::optional<Expected<CgroupHome>> cgroup_home_;  // found at the first cgroup fault
  struct FaultCgroup {
    size_t fault = 0;
    int pid = 0;
    long long kills = 0;
    std::unique_ptr<MemoryCgroup> cg;
  };
  std::vector<FaultCgroup> cgroups_;
  KmsgTail kmsg_;  // the kernel's words on each OOM kill (opened at the first cgroup fault)
  std::vector<KmsgRecord> kmsg_seen_;
};

}  // namespace aftermath
