#include "harness/cluster/merge.h"

#include <algorithm>
#include <map>

#include "harness/check/verdict.h"
#include "harness/cluster/node_part.h"

namespace aftermath {

namespace {

int severity(CheckStatus s) {
  switch (s) {
    case CheckStatus::Error: return 3;
    case CheckStatus::Fail: return 2;
    case CheckStatus::Pass: return 1;
    case CheckStatus::Skipped: return 0;
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
      for (size_t li = 0; li < n.fault_indices.size() && li < n.timeline.facts.faults.size(); ++li) {
        if (n.fault_indices[li] != fi) continue;
        const FaultRecord& rec = n.timeline.facts.faults[li];
        int r = rec.status != FaultStatus::NotTriggered ? 3
                : sc.faults[fi].target.kind == TargetSpec::Kind::Node ? 2 : 1;
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

}  // namespace

CheckResult merge_check(const std::string& name, const std::vector<std::pair<int, CheckResult>>& per_node) {
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
    out.reason += (out.reason.empty() ? "" : "; ") + ("node" + std::to_string(node) + ": " + c.reason);
  }
  return out;
}

void merge_nodes(ScenarioResult& r, const Scenario& sc, const RunOptions& o, std::vector<NodeRun>& nodes,
                 Nanos coordinator_origin) {
  std::vector<std::optional<Nanos>> shifts;
  std::map<std::string, std::vector<std::pair<int, CheckResult>>> by_check;
  std::vector<std::string> check_order;
  Timeline merged;
  r.nodes.clear();
  r.processes.clear();
  for (auto& n : nodes) {
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
    part.timeline = n.timeline;
    if (!n.have_result) {
      nr.verdict = Verdict::Error;
      nr.verdict_reason = n.agent == "absent" ? "its agent never connected"
                                              : "its agent was lost before it reported its run's end";
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
    if (n.index == 0 || merged.facts.containment.empty()) {
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
      r.process_logs[pid] = logs;
    }
    const RunFacts& f = n.timeline.facts;
    merged.facts.deadline_hit = merged.facts.deadline_hit || f.deadline_hit;
    if (f.stalled_since) {
      Nanos t = *f.stalled_since + s;
      if (!merged.facts.stalled_since || t < *merged.facts.stalled_since) merged.facts.stalled_since = t;
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
  r.verdict = decide_verdict(sc, r.checks, &r.verdict_reason);
  if (auto fv = fault_verdict(r.timeline.facts.faults)) {
    r.verdict = fv->verdict;
    r.verdict_reason = fv->reason;
  }
  for (const auto& nr : r.nodes) {
    if (nr.agent == "done" && (nr.verdict != Verdict::Error || nr.checks.size())) continue;
    r.verdict = nr.verdict == Verdict::Skipped ? Verdict::Skipped : Verdict::Error;
    r.verdict_reason = "node" + std::to_string(nr.index) + ": " + nr.verdict_reason;
    if (r.verdict == Verdict::Error) r.error = r.verdict_reason;
    break;
  }
  auto t = compute_timings(r.timeline, r.processes);
  r.timings_ms = std::move(t.ms);
  r.timings_origin = t.origin;
}

}  // namespace aftermath
