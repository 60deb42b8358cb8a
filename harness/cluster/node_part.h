// A node's part of a multi-node scenario: the same job, the faults that can
// act there. A node:N or agent:N fault, or one with `node: N`, belongs to node
// N alone; every other fault goes to every node, acts where its target lives (rank:2 on the node
// that hosts rank 2) and is merged back into one record (merge.h).
#pragma once

#include <cstddef>
#include <vector>

#include "harness/scenario/scenario.h"

namespace aftermath {

// The node a fault belongs to: N for a node:N or agent:N target or a `node: N`
// field; -1 when it goes to every node.
int fault_owner(const FaultSpec& f);

// The indices (into sc.faults) of the faults node `node` runs, in order.
std::vector<size_t> node_fault_indices(const Scenario& sc, int node);

// The scenario as node `node` runs it: one machine's run, only those faults,
// without the checks only the coordinator can judge (died_with_agent); the
// point triggers of the other nodes' own faults as its remote_triggers.
Scenario node_part(const Scenario& sc, int node);

}  // namespace aftermath
