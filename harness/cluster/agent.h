// `aftermath agent`: one node's part of a multi-node run. Started by the
// coordinator through Slurm (srun, one task per node), it connects back,
// answers the clock-sync pings, receives the scenario, runs the node's part
// exactly as a single-node run does (contained, observed, faults injected),
// streams every observation as it is recorded, sends the run's facts, and
// stays until the coordinator says every node is done, so that a node whose
// network a fault cut stays cut until the end (then heals it and exits).
#pragma once

#include <string>

#include "harness/os/clock.h"

namespace aftermath {

struct AgentOptions {
  std::string coordinator;  // host:port
  std::string token;        // the coordinator's, proving the run is its own
  int node = -1;            // -1: $SLURM_NODEID
  std::string bin_dir;      // where aftermath-reaper lives
  Nanos connect_timeout = 60 * kSecond;
};

// Runs the agent to the end; the exit code (protocol.h). Messages for people
// go to stderr.
int run_agent(const AgentOptions& options);

}  // namespace aftermath
