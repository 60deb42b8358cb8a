// The closed vocabulary of faults: what a fault does (its action), how the
// harness makes it happen (its mechanism), and what became of it (its
// status). The scenario's text is parsed into these once, at the scenario's
// edge; reports render them back to the same words, so result.json, JUnit
// and HTML read as they always have.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace aftermath {

// None: not stated (a scenario fault whose action was missing or unknown;
// such a fault never reaches a run).
//
// The node actions act on a whole node of a multi-node run (target node:N):
// NodeLoss cuts the node's network and SIGKILLs every job process of it in
// one go (the node is gone: its peers see silence, not closed sockets);
// Partition cuts the node's network for the fault's duration, then heals it.
// AgentKill (target agent:N) SIGKILLs the harness's own agent on node N: the
// node's part of the job must die with it.
//
// Scancel does to a node's part of the job what Slurm's `scancel` makes
// slurmstepd do under proctrack/linuxproc: signal the step's task (the
// launcher) and every process descended from it through living parents at
// that moment, so a process reparented away from its parent is not found.
enum class FaultAction {
  None,
  Sigkill,
  Sigterm,
  Sigint,
  Sigstop,
  Sigcont,
  Sigsegv,
  Sigbus,
  HostOom,
  DeviceOom,
  Delay,
  Hang,
  NodeLoss,
  Partition,
  AgentKill,
  Scancel
};
// "SIGKILL" ... "SIGBUS", "host_oom", "device_oom", "delay", "hang",
// "node_loss", "partition", "agent_kill", "scancel"; None: "".
std::string_view to_string(FaultAction a);
// The inverse for every action but None; nullopt for any other text.
std::optional<FaultAction> parse_fault_action(std::string_view text);
// Every action a scenario may name, in the order the docs list them.
const std::vector<FaultAction>& all_fault_actions();
// node_loss and partition: they act on a node (target node:N), not on processes alone.
bool is_node_action(FaultAction a);

// A scenario states Auto (host_oom: rlimit at a point, else cgroup), Rlimit,
// Cgroup (host_oom), Point, Hog, Interposer (device_oom). A fault record says
// how it acted: Signal, Rlimit, Cgroup, PointReply, Hog, Interposer, or the
// device_oom mechanism it was asked for when that could not act; None when
// it never got as far as choosing one.
enum class FaultMechanism {
  None,
  Auto,
  Signal,
  Rlimit,
  Cgroup,
  Point,
  PointReply,
  Hog,
  Interposer
};
// "", "auto", "signal", "rlimit", "cgroup", "point", "point-reply", "hog", "interposer".
std::string_view to_string(FaultMechanism m);
// The inverse for every mechanism but None; nullopt for any other text.
std::optional<FaultMechanism> parse_fault_mechanism(std::string_view text);

// What became of a fault: it acted, could not act here (skipped: a
// mechanism unavailable on this machine), tried and failed, or its trigger
// never came.
enum class FaultStatus { NotTriggered, Injected, Skipped, Failed };
// "not_triggered", "injected", "skipped", "failed".
std::string_view to_string(FaultStatus s);
std::optional<FaultStatus> parse_fault_status(std::string_view text);

}  // namespace aftermath
