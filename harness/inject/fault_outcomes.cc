#include "harness/inject/fault_outcomes.h"

#include <set>

namespace aftermath {

void settle_fault_effects(std::vector<FaultRecord>& faults,
                          const std::vector<Observation>& events) {
  for (auto& rec : faults) {
    if (!rec.sent || rec.pids.empty() || rec.status != FaultStatus::Injected) continue;
    bool stop = rec.action == FaultAction::Sigstop;
    bool exits = rec.action == FaultAction::Sigkill || rec.action == FaultAction::Sigterm ||
                 rec.action == FaultAction::Sigint || rec.action == FaultAction::Sigsegv ||
                 rec.action == FaultAction::Sigbus || rec.action == FaultAction::HostOom;
    if (!stop && !exits) continue;
    std::set<int> pids(rec.pids.begin(), rec.pids.end());
    for (const auto& o : events) {
      if (o.t < *rec.sent || !pids.count(o.pid())) continue;
      const auto* s = o.as<obs::ProcState>();
      if ((exits && o.is<obs::ProcExit>()) || (stop && s && (s->state == 'T' || s->state == 't'))) {
        rec.effect = o.t;
        break;
      }
    }
  }
}

void explain_unfired_faults(std::vector<FaultRecord>& faults, const std::vector<FaultSpec>& specs,
                            const UnfiredContext& ctx) {
  std::string end = ctx.job_ended      ? "the job ended"
                    : ctx.deadline_hit ? "the job's deadline passed"
                                       : "the run was cut short";
  for (size_t i = 0; i < faults.size() && i < specs.size(); ++i) {
    FaultRecord& rec = faults[i];
    if (rec.status != FaultStatus::NotTriggered) continue;
    const FaultSpec& f = specs[i];
    if (i > ctx.next_fault) {
      rec.reason = "not reached: fault " + std::to_string(ctx.next_fault + 1) +
                   " before it never fired (faults fire in order)";
    } else if (rec.waiting_since) {
      rec.reason = "its trigger came at " + format_duration(*rec.waiting_since) +
                   ", but no live job process matched '" + f.target.text + "' before " + end;
    } else if (f.at.kind == TriggerSpec::Kind::Point) {
      auto it = ctx.point_hits.find(f.at.point);
      rec.reason = it == ctx.point_hits.end()
                       ? "point '" + f.at.point + "' was never reached before " + end +
                             " (does the job run the points client, and is the point's name right?)"
                       : "point '" + f.at.point + "' was reached " + std::to_string(it->second) +
                             " time(s), never matching " + f.at.text + ", before " + end;
    } else {
      rec.reason = "its trigger (" + f.at.text + ") never came before " + end;
    }
  }
}

}  // namespace aftermath
