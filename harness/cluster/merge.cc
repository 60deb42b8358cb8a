#include "harness/cluster/merge.h"

#include <algorithm>
#include <map>

#include "harness/check/check_params.h"
#include "harness/check/judge.h"
#include "harness/cluster/node_part.h"

namespace aftermath {

namespace {

int severity(CheckStatus s) {
  switch (s) {
    case CheckStatus::Error:
      return 3;
    case CheckStatus::Fail:
      return 2;
    case CheckStatus::Pass:
      return 1;
    case CheckStatus::Skipped:
      return 0;
  }
  return 0;
}

void shift(std::optional<Nanos>& t, Nanos by) {
  if (t) *t += by;
}

// The node's run time 0 on the coordinator's run clock.
std::optional<Nanos> node_shift(const NodeRun& n, Nanos coordinator_origin) {
  if (!n.origin || !n.clock) return std::nullopt;
  return to_coordinator(*n.origin, *n.clock) - coordinator_origin;
}

FaultRecord shifted(FaultRecord f, Nanos by) {
  shift(f.sent, by);
  shift(f.effect, by);
  shift(f.waiting_since, by);
  return f;
}

// One record per scenario fault: the node where it acted, else the node it
// was meant for (node:N), else the first node that had it.
std::vector<FaultRecord> merge_faults(const Scenario& sc, const std::vector<NodeRun>& nodes,
                                      const std::vector<std::optional<Nanos>>& shifts) {
  std::vector<FaultRecord> out;
  for (size_t fi = 0; fi < sc.faults.size(); ++fi) {
    const FaultRecord* chosen = nullptr;
    Nanos by = 0;
    int rank = 0;  // 3 acted, 2 its own node, 1 any
    for (size_t k = 0; k < nodes.size(); ++k) {
      const auto& n = nodes[k];
      for (size_t li = 0; li < n.fault_indices.size() && li < n.timeline.facts.faults.size();
           ++li) {
        if (n.fault_indices[li] != fi) continue;
        const FaultRecord& rec = n.timeline.facts.faults[li];
        int r = rec.status != FaultStatus::NotTriggered               ? 3
                : sc.faults[fi].target.kind == TargetSpec::Kind::Node ? 2
                                                                      : 1;
        if (r > rank) {
          rank = r;
          chosen = &rec;
          by = shifts[k].value_or(0);
        }
      }
    }
    FaultRecord rec;
    if (chosen) {
      rec = shifted(*chosen, by);
    } else {
      rec.action = sc.faults[fi].action;
      rec.target = sc.faults[fi].target.text;
      rec.trigger = sc.faults[fi].at.text;
      rec.optional = sc.faults[fi].optional;
      rec.reason = "no node reported it (its node's agent was lost)";
    }
    rec.index = static_cast<int>(fi);
    out.push_back(std::move(rec));
  }
  return out;
}

// The agent_kill fault that ended this node's agent, as its last words
// (streamed) tell it; nullopt when its agent was not lost to the scenario.
std::optional<Nanos> killed_by_fault(const NodeRun& n) {
  if (n.have_result) return std::nullopt;
  for (const auto& ob : n.timeline.observations)
    if (const auto* f = ob.as<obs::Fault>(); f && f->action == FaultAction::AgentKill) return ob.t;
  return std::nullopt;
}

// A node whose agent never reported its run's end: its fault records as its
// streamed observations tell them (a fault observation: it acted then).
std::vector<FaultRecord> streamed_faults(const Scenario& sc, const NodeRun& n) {
  std::vector<FaultRecord> out;
  for (size_t li = 0; li < n.fault_indices.size(); ++li) {
    const FaultSpec& f = sc.faults[n.fault_indices[li]];
    FaultRecord rec;
    rec.index = static_cast<int>(li);
    rec.action = f.action;
    rec.target = f.target.text;
    rec.trigger = f.at.text;
    rec.optional = f.optional;
    for (const auto& ob : n.timeline.observations) {
      const auto* fault = ob.as<obs::Fault>();
      if (!fault || fault->index != static_cast<int>(li)) continue;
      if (!rec.sent) rec.sent = ob.t;
      rec.status = FaultStatus::Injected;
      rec.pids.push_back(fault->pid);
    }
    rec.reason = rec.sent ? "as the node's agent streamed it before it was lost"
                          : "not seen before the node's agent was lost";
    out.push_back(std::move(rec));
  }
  return out;
}

// died_with_agent on one node.
CheckResult died_with_agent(const NodeRun& n) {
  CheckResult c;
  c.name = kDiedWithAgent;
  if (n.agent != AgentState::Lost) {
    c.status = CheckStatus::Skipped;
    c.reason = n.agent == AgentState::Done ? "its agent lived to the run's end"
                                           : "its agent never connected";
    return c;
  }
  if (!n.witness) {
    c.status = CheckStatus::Error;
    c.reason =
        "its agent was lost and " + (n.witness_error.empty() ? "no witness ran" : n.witness_error);
    return c;
  }
  const WitnessReport& w = *n.witness;
  c.measured["checked"] = w.checked;
  c.measured["witness_waited_ms"] = static_cast<double>(w.waited) / 1e6;
  nlohmann::json survivors = nlohmann::json::array();
  for (const auto& sv : w.survivors)
    survivors.push_back({{"pid", sv.process.pid},
                         {"role", sv.process.role},
                         {"comm", sv.comm},
                         {"state", std::string(1, sv.state)},
                         {"killed_by_witness", sv.killed}});
  c.measured["survivors"] = survivors;
  if (w.survivors.empty()) {
    c.status = CheckStatus::Pass;
    c.reason = "none of the " + std::to_string(w.checked) +
               " job process(es) its agent last saw alive " + "outlived it (the witness on " +
               w.host + " waited " + format_duration(w.waited) + ")";
    return c;
  }
  c.status = CheckStatus::Fail;
  c.reason = std::to_string(w.survivors.size()) + " of " + std::to_string(w.checked) +
             " job process(es) outlived its agent by more than " + format_duration(w.waited) + ":";
  for (const auto& sv : w.survivors)
    c.reason +=
        " " + std::to_string(sv.process.pid) + " (" + sv.comm + ", " + sv.process.role + ")";
  c.reason +=
      std::all_of(w.survivors.begin(), w.survivors.end(), [](const auto& sv) { return sv.killed; })
          ? "; the witness killed them"
          : "; the witness could not kill them all";
  return c;
}

}  // namespace

CheckResult merge_check(const std::string& name,
                        const std::vector<std::pair<int, CheckResult>>& per_node) {
  CheckResult out;
  out.name = name;
  out.status = CheckStatus::Skipped;
  for (const auto& [node, c] : per_node) {
    if (severity(c.status) > severity(out.status)) out.status = c.status;
    out.expected_to_fail = out.expected_to_fail || c.expected_to_fail;
    out.measured["nodes"][std::to_string(node)] = c.measured;
  }
  for (const auto& [node, c] : per_node) {
    if (c.status != out.status) continue;
    out.reason +=
        (out.reason.empty() ? "" : "; ") + ("node" + std::to_string(node) + ": " + c.reason);
  }
  return out;
}

void merge_nodes(ScenarioResult& r, const Scenario& sc, const RunOptions& o,
                 std::vector<NodeRun>& nodes, Nanos coordinator_origin) {
  std::vector<std::optional<Nanos>> shifts;
  std::map<std::string, std::vector<std::pair<int, CheckResult>>> by_check;
  std::vector<std::string> check_order;
  // Each node's agent_kill, when the scenario's own fault ended its agent.
  std::vector<std::optional<Nanos>> killed;
  for (const auto& n : nodes) killed.push_back(killed_by_fault(n));
  Timeline merged;
  merged.facts.python = r.timeline.facts.python;
  r.nodes.clear();
  r.processes.clear();
  for (size_t k = 0; k < nodes.size(); ++k) {
    NodeRun& n = nodes[k];
    if (!n.have_result && n.fault_indices.empty())
      n.fault_indices = node_fault_indices(sc, n.index);
    NodeResult nr;
    nr.index = n.index;
    nr.host = n.host;
    nr.address = n.address;
    nr.agent = n.agent;
    nr.lost_at = n.lost_at;
    if (n.clock) {
      nr.clock_offset = n.clock->offset;
      nr.clock_uncertainty = n.clock->uncertainty;
      nr.round_trip = n.clock->round_trip;
      nr.clock_samples = n.clock->samples;
    }
    nr.out_dir = n.out_dir;
    std::optional<Nanos> by = node_shift(n, coordinator_origin);
    shifts.push_back(by);
    nr.started = by.value_or(0);
    ScenarioResult part = r;
    part.out_dir = n.out_dir;
    part.stdout_path = n.out_dir + "/stdout.log";
    part.stderr_path = n.out_dir + "/stderr.log";
    if (!n.have_result) n.timeline.facts.faults = streamed_faults(sc, n);
    // Every node runs the coordinator's interpreter: its PyTorch's facts.
    n.timeline.facts.python = r.timeline.facts.python;
    part.timeline = n.timeline;
    if (!n.have_result) {
      part.processes = build_histories(part.timeline);
      nr.processes = static_cast<int>(part.processes.size());
      nr.verdict = Verdict::Error;
      nr.verdict_reason = n.agent == AgentState::Absent
                              ? "its agent never connected"
                              : "its agent was lost before it reported its run's end";
      if (killed[k]) {
        // Lost as the scenario asked: what is judged there is what outlived it.
        nr.verdict = Verdict::Pass;
        // On the merged clock, as the fault's record is.
        nr.verdict_reason = "its agent was killed by the scenario's agent_kill at " +
                            format_duration(*killed[k] + by.value_or(0));
      }
    } else if (n.verdict == Verdict::Skipped || !n.error.empty()) {
      nr.verdict = n.verdict;
      nr.verdict_reason = n.verdict_reason;
    } else {
      judge_run(part, node_part(sc, n.index), o);
      nr.verdict = part.verdict;
      nr.verdict_reason = part.verdict_reason;
      nr.checks = part.checks;
      nr.processes = static_cast<int>(part.processes.size());
      for (const auto& c : part.checks) {
        if (!by_check.count(c.name)) check_order.push_back(c.name);
        by_check[c.name].emplace_back(n.index, c);
      }
    }
    Nanos s = by.value_or(0);
    for (auto p : part.processes) {
      p.node = n.index;
      p.started += s;
      shift(p.orphaned_at, s);
      shift(p.exited_at, s);
      shift(p.gone_at, s);
      shift(p.zombie_since, s);
      shift(p.stopped_since, s);
      r.processes.push_back(std::move(p));
    }
    for (auto ob : n.timeline.observations) {
      ob.t += s;
      ob.node = n.index;
      merged.observations.push_back(std::move(ob));
    }
    if (n.index == 0 || merged.facts.containment == JobContainment::Unknown) {
      const RunFacts& f = n.timeline.facts;
      merged.facts.top_pid = f.top_pid;
      merged.facts.init_pid = f.init_pid;
      merged.facts.top_outcome = f.top_outcome;
      merged.facts.stdout_text = f.stdout_text;
      merged.facts.stderr_text = f.stderr_text;
      merged.facts.containment = f.containment;
      merged.facts.containment_note = f.containment_note;
      merged.facts.shm = f.shm;
      merged.facts.stall_window = f.stall_window;
      merged.device = n.timeline.device;
      r.job_environment = part.job_environment;
    }
    // Each node's per-process logs, relative to the run's folder (they are
    // relative to the node's).
    std::string node_dir = "node" + std::to_string(n.index) + "/";
    for (auto [pid, logs] : part.process_logs) {
      for (std::string* path : {&logs.stdout_path, &logs.stderr_path})
        if (!path->empty() && (*path)[0] != '/') *path = node_dir + *path;
      r.process_logs[process_key(n.index, pid)] = logs;
    }
    const RunFacts& f = n.timeline.facts;
    merged.facts.deadline_hit = merged.facts.deadline_hit || f.deadline_hit;
    // The first node's verdict: when its progress stopped and how long its
    // job waited for a CPU after.
    if (auto at = stall_verdict_at(f)) {
      auto first = stall_verdict_at(merged.facts);
      if (!first || *at + s < *first) {
        merged.facts.stalled_since = *f.stalled_since + s;
        merged.facts.stall_cpu_wait = f.stall_cpu_wait;
      }
    }
    for (const auto& d : f.diagnosis) merged.facts.diagnosis.push_back(d);
    merged.facts.diagnosis_took = std::max(merged.facts.diagnosis_took, f.diagnosis_took);
    if (!f.diagnosis_note.empty()) merged.facts.diagnosis_note = f.diagnosis_note;
    r.nodes.push_back(std::move(nr));
  }
  std::stable_sort(merged.observations.begin(), merged.observations.end(),
                   [](const Observation& a, const Observation& b) { return a.t < b.t; });
  merged.facts.faults = merge_faults(sc, nodes, shifts);
  r.timeline = std::move(merged);

  r.checks.clear();
  for (const auto& name : check_order) r.checks.push_back(merge_check(name, by_check[name]));
  auto named = sc.checks.find(kDiedWithAgent);
  std::vector<std::pair<int, CheckResult>> per_node;  // died_with_agent, node by node
  if (named != sc.checks.end() && named->second.enabled) {
    for (const auto& n : nodes) per_node.emplace_back(n.index, died_with_agent(n));
    CheckResult merged_check = merge_check(kDiedWithAgent, per_node);
    merged_check.expected_to_fail = sc.expect.failing.count(kDiedWithAgent) > 0;
    r.checks.push_back(std::move(merged_check));
  }
  decide(r, sc);
  for (size_t k = 0; k < r.nodes.size(); ++k) {
    const NodeResult& nr = r.nodes[k];
    if (nr.agent == AgentState::Done && (nr.verdict != Verdict::Error || nr.checks.size()))
      continue;
    if (killed[k]) continue;  // judged by died_with_agent
    r.verdict = nr.verdict == Verdict::Skipped ? Verdict::Skipped : Verdict::Error;
    r.verdict_reason = "node" + std::to_string(nr.index) + ": " + nr.verdict_reason;
    if (r.verdict == Verdict::Error) r.error = r.verdict_reason;
    break;
  }
  for (size_t k = 0; k < per_node.size(); ++k) {
    CheckResult& c = per_node[k].second;
    c.expected_to_fail = sc.expect.failing.count(kDiedWithAgent) > 0;
    if (killed[k] && c.status != CheckStatus::Pass) {
      r.nodes[k].verdict = c.status == CheckStatus::Fail ? Verdict::Fail : Verdict::Error;
      r.nodes[k].verdict_reason = c.reason;
    }
    r.nodes[k].checks.push_back(std::move(c));
  }
}

}  // namespace aftermath
