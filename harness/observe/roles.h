// Roles for processes that never announce themselves, from what the kernel
// shows of them.
//
// A job wrapped as `aftermath run -- python3 train.py` runs no points client,
// yet users target `rank:1` and `worker:0/3` and read reports that should say
// "16 workers orphaned", not "16 unknown". What identifies each kind of
// process without its help:
//
//  - helpers: `torch_shm_manager` (its comm or command line), Python's
//    `multiprocessing.resource_tracker`, `semaphore_tracker` and
//    `forkserver` (their `-c from multiprocessing.X import main` lines);
//  - the launcher: the job's top process, and torchrun's elastic agent
//    wherever it sits (`torchrun`, `python3 -m torch.distributed.run` or
//    `.launch` on its command line);
//  - ranks: a process with RANK in its environment that its parent does not
//    have with the same value (torchrun and torch.distributed.launch give
//    each worker RANK, LOCAL_RANK, WORLD_SIZE; a rank's own children inherit
//    it, which is how they are told apart); the `multiprocessing.spawn`
//    children of the top process (mp.spawn's ranks, in start order);
//  - DataLoader workers: a process that catches SIGBUS, SIGFPE, SIGSEGV and
//    SIGTERM (torch/csrc/DataLoader.cpp installs exactly these handlers
//    first thing in `_worker_loop`; Python itself catches only SIGINT, and
//    faulthandler never SIGTERM). Its rank is its parent's; its index is its
//    start order among its parent's workers (DataLoader starts worker i
//    i-th).
//
// A worker shows its signature only once it reaches its loop, and a process
// seen between fork and exec still carries its parent's command line and
// environment: callers look again (on exec, and for a while after birth)
// until a role is final. Announced roles always win.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "harness/core/types.h"

namespace aftermath {

// What the kernel shows of one process (all of it optional: a zombie has no
// command line, another user's environment may be unreadable).
struct RoleEvidence {
  std::string comm;
  std::string cmdline;                  // arguments joined by spaces
  std::optional<int> env_rank;          // RANK in /proc/PID/environ
  std::optional<std::uint64_t> caught;  // SigCgt of /proc/PID/status
  bool is_top = false;
};

// The parent as the caller already knows it.
struct RoleParent {
  Role role = Role::Unknown;
  int rank = -1;
  std::string cmdline;  // a child with the same one is a fork not yet exec'd
  std::optional<int> env_rank;
  bool is_top = false;
};

struct InferredRole {
  Role role = Role::Unknown;
  int rank = -1;
  // Worker: the caller numbers it among its parent's workers; -1 here.
  int worker = -1;
  // mp.spawn rank: numbered by the caller among the top's spawn children.
  bool rank_by_spawn_order = false;
  // No later evidence can change it (a helper, a rank by RANK, a worker by
  // its signature); otherwise the caller looks again later.
  bool final = false;
  std::string why;  // "env RANK=1", "DataLoader worker signal handlers", ...
};

// The DataLoader worker's handlers: SIGBUS, SIGFPE, SIGSEGV and SIGTERM caught.
bool has_loader_worker_handlers(std::uint64_t sigcgt);
// A Python helper process of PyTorch or multiprocessing.
bool is_helper_process(std::string_view comm, std::string_view cmdline);
// torchrun's elastic agent (torchrun, torch.distributed.run or .launch).
bool is_torchrun_agent(std::string_view cmdline);
// A child started by multiprocessing's spawn start method.
bool is_spawn_child(std::string_view cmdline);

// How often a launcher reaps (polls) its children, read from its command
// line: torchrun's `--monitor_interval` / `--monitor-interval`, else
// `default_interval` (the running PyTorch's default: 5 s before 2.4, 0.1 s
// since; PythonFacts::torchrun_monitor_interval). nullopt for a launcher not
// known to poll.
std::optional<Nanos> launcher_poll_interval(std::string_view cmdline, Nanos default_interval);

// The role of a process that did not announce one. `parent` is null when the
// parent is not a job process (the top's parent is the harness's reaper).
InferredRole infer_role(const RoleEvidence& self, const RoleParent* parent);

// Parses "RANK=1"-style values: a non-negative integer, else nullopt.
std::optional<int> parse_rank_value(std::string_view text);

}  // namespace aftermath
