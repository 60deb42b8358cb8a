#include "harness/cluster/node_part.h"

#include "harness/check/check_params.h"

namespace aftermath {

int fault_owner(const FaultSpec& f) {
  bool names_node =
      f.target.kind == TargetSpec::Kind::Node || f.target.kind == TargetSpec::Kind::Agent;
  return names_node ? f.target.node : f.node;
}

std::vector<size_t> node_fault_indices(const Scenario& sc, int node) {
  std::vector<size_t> out;
  for (size_t i = 0; i < sc.faults.size(); ++i) {
    int only = fault_owner(sc.faults[i]);
    if (only < 0 || only == node) out.push_back(i);
  }
  return out;
}

Scenario node_part(const Scenario& sc, int node) {
  Scenario part = sc;
  part.nodes = 1;  // the node's own run: one machine
  part.faults.clear();
  for (size_t i : node_fault_indices(sc, node)) part.faults.push_back(sc.faults[i]);
  for (size_t i = 0; i < sc.faults.size(); ++i) {
    int owner = fault_owner(sc.faults[i]);
    if (owner >= 0 && owner != node && sc.faults[i].at.kind == TriggerSpec::Kind::Point)
      part.remote_triggers.emplace_back(i, sc.faults[i].at);
  }
  part.checks.erase(std::string(kDiedWithAgent));
  return part;
}

}  // namespace aftermath
