// Faults as a scenario states them: an action, on a target, at a trigger.
//
//   faults:
//     - action: SIGKILL
//       target: worker:0/3
//       at: {point: loader.worker.getitem, labels: {rank: 0, worker: 3}, hit: 12}
//     - action: SIGSTOP
//       target: rank:1
//       at: {after: 2s}
//       resume_after: 1s
//     - action: SIGKILL
//       target: launcher
//       at: {when: {workers: {rank: 0, count: 16}}}
//
// Faults fire in order: a fault's trigger is considered only once every
// earlier fault has fired (so `after` counts from the previous fault, or
// from the job's start for the first).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/fault_kind.h"
#include "harness/core/types.h"
#include "harness/os/expected.h"

namespace aftermath {

// Which processes a fault acts on.
struct TargetSpec {
  // Node: every job process of node N of a multi-node run (node:N).
  // Agent: the harness's agent on node N (agent:N), for agent_kill.
  enum class Kind { Launcher, Rank, Worker, Workers, Match, All, Self, Node, Agent };
  Kind kind = Kind::All;
  int node = -1;      // node:N, agent:N
  int rank = -1;      // rank:R, worker:R/W, workers:R
  int worker = -1;    // worker:R/W
  std::string regex;  // match:<regex on the command line>
  std::string text;   // as written
};

// "launcher", "rank:1", "worker:0/3", "workers:0", "match:torch_shm_manager",
// "all", "self", "node:1", "agent:1"; anything else is an error saying why.
Expected<TargetSpec> parse_target(const std::string& text);

// A condition over observations.
struct Predicate {
  enum class Kind { Workers, Processes, ShmEntries, State, Orphans };
  Kind kind = Kind::Processes;
  int rank = -1;   // Workers: of this rank only (-1: any)
  int count = 0;   // Workers / Processes / ShmEntries / Orphans: at least this many
  char state = 0;  // State: some job process is in this /proc state (D, Z, T, ...)
  std::string text;
};

struct TriggerSpec {
  enum class Kind { Point, After, When, Phase };
  Kind kind = Kind::After;
  std::string point;                          // Point: its name
  std::map<std::string, std::string> labels;  // Point: labels that must match
  std::optional<long long> hit;               // Point: the hit number (1-based); none = first
  Nanos after = 0;                            // After
  Predicate when;                             // When
  std::string phase;                          // Phase: startup | steady | shutdown
  std::string text;                           // a one-line description
};

struct FaultSpec {
  FaultAction action = FaultAction::None;
  int signal = 0;  // for signal actions
  TargetSpec target;
  // `node: N` in a multi-node run: only node N acts on this fault (its
  // launcher, its rank R ...); -1: every node that has a match. node:N and
  // agent:N targets name their node themselves.
  int node = -1;
  TriggerSpec at;
  Nanos duration = 0;      // delay: how long the point is held
  Nanos resume_after = 0;  // SIGSTOP: SIGCONT after this (0: stays stopped)
  // scancel: `signal:` sends that one signal to the step, as `scancel
  // --signal` does (0: the cancel itself: SIGCONT and SIGTERM, then SIGKILL
  // after kill_wait, Slurm's KillWait; its default is Slurm's, 30 s).
  int step_signal = 0;
  Nanos kill_wait = 30'000'000'000;
  // host_oom: auto | rlimit | cgroup.
  // device_oom: point (the fixture allocates too much when its point is
  // answered), hog (aftermath-device-hog takes `share` of the free memory, or
  // `bytes`, of GPU `device` at the trigger and holds it until teardown),
  // interposer (the job runs with libaftermath-cudafail.so preloaded; the
  // trigger arms it for the target processes: their next cudaMalloc /
  // cuMemAlloc returns out-of-memory).
  FaultMechanism mechanism = FaultMechanism::Auto;
  double share = 0.95;  // device_oom hog
  std::optional<std::int64_t> bytes;
  int device = 0;
  // host_oom: how much more the target may take before its allocations fail
  // (rlimit: address space above its current size; cgroup: memory charged
  // after it was moved into its own cgroup).
  std::int64_t headroom = 16 << 20;
  // `optional: true`: the scenario is judged on its checks even when this
  // fault could not act (no matching process, a point never reached, a
  // mechanism unavailable here). By default such a fault makes the verdict
  // `error` (or `skipped` for an unavailable mechanism), never `pass`.
  bool optional = false;
  int line = 0;  // where it was written, for reports
};

// The actions a fault may name, as written (all_fault_actions() as text).
const std::vector<std::string>& known_fault_actions();

// The AFTERMATH_POINTS value that arms every point-triggered fault:
// NAME{k=v,...}#HIT entries joined by ';'.
std::string armed_points(const std::vector<FaultSpec>& faults);
// The same for point triggers (others are left out).
std::string armed_points(const std::vector<TriggerSpec>& triggers);

}  // namespace aftermath
