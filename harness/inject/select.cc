#include "harness/inject/select.h"

#include <algorithm>
#include <regex>

namespace aftermath {

std::vector<int> select_targets(const TargetSpec& t, const std::vector<JobProcess>& procs,
                                int self_pid) {
  std::vector<const JobProcess*> hit;
  std::regex re;
  if (t.kind == TargetSpec::Kind::Match) re = std::regex(t.regex, std::regex::ECMAScript);
  for (const auto& p : procs) {
    if (!p.alive) continue;
    bool take = false;
    switch (t.kind) {
      case TargetSpec::Kind::Launcher:
        // The top process is the launcher unless it announced otherwise.
        take = p.role == Role::Launcher;
        break;
      case TargetSpec::Kind::Rank:
        take = p.role == Role::Rank && p.rank == t.rank;
        break;
      case TargetSpec::Kind::Worker:
        take = p.role == Role::Worker && p.rank == t.rank && p.worker == t.worker;
        break;
      case TargetSpec::Kind::Workers:
        take = p.role == Role::Worker && p.rank == t.rank;
        break;
      case TargetSpec::Kind::Match:
        take = std::regex_search(p.cmdline, re);
        break;
      case TargetSpec::Kind::All:
      case TargetSpec::Kind::Node:   // the run of node N's agent sees only node N's processes
      case TargetSpec::Kind::Agent:  // agent_kill: what must die with the agent
        take = true;
        break;
      case TargetSpec::Kind::Self:
        take = self_pid != 0 && p.pid == self_pid;
        break;
    }
    if (take) hit.push_back(&p);
  }
  std::stable_sort(hit.begin(), hit.end(),
                   [](const JobProcess* a, const JobProcess* b) { return a->depth > b->depth; });
  std::vector<int> out;
  for (const auto* p : hit) out.push_back(p->pid);
  return out;
}

bool predicate_holds(const Predicate& p, const std::vector<JobProcess>& procs,
                     int new_shm_entries) {
  switch (p.kind) {
    case Predicate::Kind::Workers: {
      int n = 0;
      for (const auto& q : procs)
        if (q.alive && q.role == Role::Worker && (p.rank < 0 || q.rank == p.rank)) ++n;
      return n >= p.count;
    }
    case Predicate::Kind::Processes: {
      int n = 0;
      for (const auto& q : procs)
        if (q.alive) ++n;
      return n >= p.count;
    }
    case Predicate::Kind::ShmEntries:
      return new_shm_entries >= p.count;
    case Predicate::Kind::Orphans: {
      int n = 0;
      for (const auto& q : procs)
        if (q.alive && q.orphaned) ++n;
      return n >= p.count;
    }
    case Predicate::Kind::State:
      for (const auto& q : procs)
        if (q.state == p.state && (q.alive || p.state == 'Z')) return true;
      return false;
  }
  return false;
}

namespace {
std::string label_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return v.dump();
}
}  // namespace

bool point_matches(const TriggerSpec& t, const std::string& name, long long hit,
                   const nlohmann::json& labels, const JobProcess* sender) {
  if (t.kind != TriggerSpec::Kind::Point || t.point != name) return false;
  if (t.hit && *t.hit != hit) return false;
  for (const auto& [k, want] : t.labels) {
    std::string have;
    if (labels.is_object() && labels.contains(k)) {
      have = label_text(labels[k]);
    } else if (sender && k == "rank" && sender->rank >= 0) {
      have = std::to_string(sender->rank);
    } else if (sender && k == "worker" && sender->worker >= 0) {
      have = std::to_string(sender->worker);
    } else if (sender && k == "role") {
      have = std::string(to_string(sender->role));
    } else {
      return false;
    }
    if (have != want) return false;
  }
  return true;
}

}  // namespace aftermath
