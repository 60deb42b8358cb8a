// From each node's part to one result: every node judged on its own (its
// checks, its verdict), then one timeline on the coordinator's clock (each
// node's observations shifted by its run's start and its clock offset), one
// record per fault, and every check merged over the nodes (it fails where
// any node fails it, and says which). Pure: tested on hand-made node runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/cluster/clock_sync.h"
#include "harness/cluster/witness.h"
#include "harness/core/result.h"
#include "harness/scenario/scenario.h"
#include "harness/supervise/runner.h"

namespace aftermath {

struct NodeRun {
  int index = 0;
  std::string host;
  std::string address;
  AgentState agent = AgentState::Absent;
  std::optional<Nanos> lost_at;  // coordinator run time
  std::optional<ClockOffset> clock;
  std::optional<Nanos> origin;       // the agent's clock at its run's time 0
  Timeline timeline;                 // in the node's own run time
  bool have_result = false;          // its facts arrived
  Verdict verdict = Verdict::Error;  // the agent's verdict of its part (skipped, error carry over)
  std::string verdict_reason;
  std::string error;
  std::vector<size_t> fault_indices;  // its fault i is the scenario's fault_indices[i]
  std::string out_dir;
  // Its agent was lost: what of its job the witness found left (witness.h),
  // or why the witness could not say; when it started (coordinator run time).
  std::optional<WitnessReport> witness;
  std::string witness_error;
  std::optional<Nanos> witness_at;
};

// Fills r's checks, verdict, timeline, processes, timings and nodes from the
// node runs. `coordinator_origin`: the coordinator's clock at the run's time 0.
void merge_nodes(ScenarioResult& r, const Scenario& sc, const RunOptions& o,
                 std::vector<NodeRun>& nodes, Nanos coordinator_origin);

// One check over the nodes: error if any node errs, else fail if any fails,
// else pass if any passes, else skipped; the reason names the nodes that
// decided it; `measured` holds each node's under "nodes".
CheckResult merge_check(const std::string& name,
                        const std::vector<std::pair<int, CheckResult>>& per_node);

}  // namespace aftermath
