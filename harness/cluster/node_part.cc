#include "harness/cluster/node_part.h"

namespace aftermath {

std::vector<size_t> node_fault_indices(const Scenario& sc, int node) {
  std::vector<size_t> out;
  for (size_t i = 0; i < sc.faults.size(); ++i) {
    const TargetSpec& t = sc.faults[i].target;
    if (t.kind != TargetSpec::Kind::Node || t.node == node) out.push_back(i);
  }
  return out;
}

Scenario node_part(const Scenario& sc, int node) {
  Scenario part = sc;
  part.nodes = 1;  // the node's own run: one machine
  part.faults.clear();
  for (size_t i : node_fault_indices(sc, node)) part.faults.push_back(sc.faults[i]);
  return part;
}

}  // namespace aftermath
