// The coordinator of a multi-node run (`nodes:` 2 or more), inside a Slurm
// allocation: it listens, starts one `aftermath agent` per node with srun
// (one task per node, --overlap), takes each agent's clock offset, starts
// every node's part at once, gathers what each node streams, tells the
// agents to finish once every node is done (or lost), and merges it all
// into one result (merge.h). Every wait has a deadline: an agent that never
// connects, or whose connection ends early, is itself an observation.
#pragma once

#include <optional>
#include <string>

#include "harness/os/expected.h"
#include "harness/supervise/runner.h"

namespace aftermath {

// Whether this process can coordinate an N-node run here; the error says why
// not (no allocation, too few nodes in it, no srun). Reads the environment.
Status multinode_available(int nodes);

// The address agents connect to: `configured` when set (the option, or
// $AFTERMATH_COORDINATOR_ADDR), else what this host's name resolved to,
// unless that is a loopback address (Debian's /etc/hosts maps the host's
// own name to 127.0.1.1), which no other node can reach; why not, then.
Expected<std::string> pick_coordinator_address(const std::string& configured,
                                               const std::string& host,
                                               const Expected<std::string>& resolved);

struct CoordinatorOptions {
  // The address agents connect to: $AFTERMATH_COORDINATOR_ADDR, else this
  // host's name as it resolves.
  std::string address;
  Nanos connect_timeout = 60 * kSecond;  // from srun's start to every agent's hello
  int clock_pings = 8;
};

// Runs one multi-node scenario (RunOptions::multinode's signature).
ScenarioResult run_multinode(const Scenario& sc, const RunOptions& o, int run_index, int runs,
                             const CoordinatorOptions& c = {});

}  // namespace aftermath
