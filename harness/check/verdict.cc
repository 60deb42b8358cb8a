#include "harness/check/verdict.h"

#include <algorithm>
#include <set>

#include "harness/check/shm_story.h"

namespace aftermath {

Decision decide_verdict(const Scenario& sc, const std::vector<CheckResult>& checks) {
  std::set<std::string> failed;
  std::set<std::string> allowed;  // failed, and may (expect.may_fail)
  for (const auto& c : checks) {
    if (c.status == CheckStatus::Error)
      return {Verdict::Error, "check " + c.name + " errored: " + c.reason};
    if (c.status != CheckStatus::Fail) continue;
    if (sc.expect.may_fail.count(c.name))
      allowed.insert(c.name);
    else
      failed.insert(c.name);
  }
  auto join = [](const std::set<std::string>& s) {
    std::string out;
    for (const auto& x : s) out += (out.empty() ? "" : ", ") + x;
    return out;
  };
  const std::string also =
      allowed.empty() ? "" : " (" + join(allowed) + " failed too, as the scenario says it may)";
  if (sc.expect.expect_pass) {
    if (failed.empty()) return {Verdict::Pass, "every check passed" + also};
    return {Verdict::Fail, "failed: " + join(failed)};
  }
  std::set<std::string> unexpected;
  for (const auto& f : failed)
    if (!sc.expect.failing.count(f)) unexpected.insert(f);
  if (!unexpected.empty())
    return {Verdict::Fail, "failed beyond the expected failure: " + join(unexpected)};
  if (failed == sc.expect.failing)
    return {Verdict::XFail, "expected failure reproduced: " + join(failed) + also};
  std::set<std::string> missing;
  for (const auto& e : sc.expect.failing)
    if (!failed.count(e)) missing.insert(e);
  return {Verdict::XPass, "expected failure did not reproduce: " + join(missing) + " passed"};
}

std::optional<Decision> fault_verdict(const std::vector<FaultRecord>& faults) {
  std::optional<Decision> out;
  for (const auto& f : faults) {
    if (f.optional || f.status == FaultStatus::Injected) continue;
    std::string what = "fault " + std::to_string(f.index + 1) + " (" +
                       std::string(to_string(f.action)) + " " + f.target +
                       (f.trigger.empty() ? "" : ", " + f.trigger) + ")";
    if (f.status == FaultStatus::Skipped) {
      // An error elsewhere outranks a skip.
      if (!out) out = Decision{Verdict::Skipped, what + " cannot act on this machine: " + f.reason};
      continue;
    }
    std::string verb = f.status == FaultStatus::Failed ? " failed: " : " never fired: ";
    if (!out || out->verdict != Verdict::Error)
      out = Decision{Verdict::Error, what + verb + f.reason};
    else
      out->reason += "; " + what + verb + f.reason;
  }
  return out;
}

namespace {

// One node's part of the run (the whole run when it has one node): its top
// process and its own phases.
struct NodeSpan {
  std::optional<Nanos> top_start, top_exit, teardown, done, deadline;
  std::optional<Nanos> top_end;  // top_exit unless the teardown ended it
};

std::map<int, NodeSpan> node_spans(const Timeline& tl, const std::vector<ProcessHistory>& procs) {
  std::map<int, NodeSpan> spans;
  for (const auto& p : procs)
    if (p.is_top) {
      spans[p.node].top_start = p.started;
      spans[p.node].top_exit = p.end();
    }
  for (const auto& o : tl.observations) {
    const auto* phase = o.as<obs::Phase>();
    if (!phase) continue;
    NodeSpan& s = spans[o.node];
    if (phase->name == RunPhase::Teardown && !s.teardown) s.teardown = o.t;
    if (phase->name == RunPhase::Done && !s.done) s.done = o.t;
    if (phase->name == RunPhase::Deadline && !s.deadline) s.deadline = o.t;
  }
  for (auto& [node, s] : spans)
    if (!(s.top_exit && s.teardown && *s.top_exit > *s.teardown)) s.top_end = s.top_exit;
  return spans;
}

enum class Pick { Earliest, Latest };

// One of the spans' times over the nodes; with `every`, nullopt unless every
// node has it.
std::optional<Nanos> over_nodes(const std::map<int, NodeSpan>& spans,
                                std::optional<Nanos> NodeSpan::* field, Pick pick, bool every) {
  bool any = false;
  Nanos best = 0;
  for (const auto& [node, s] : spans) {
    const std::optional<Nanos>& v = s.*field;
    if (!v) {
      if (every) return std::nullopt;
      continue;
    }
    if (!any || (pick == Pick::Latest ? *v > best : *v < best)) best = *v;
    any = true;
  }
  if (!any) return std::nullopt;
  return best;
}

}  // namespace

// A multi-node run's timeline holds every node's processes and phases (each
// observation and process with its node); the job's span is then from the
// first top's start to the last top's end, and each process is judged
// against its own node's teardown.
Timings compute_timings(const Timeline& tl, const std::vector<ProcessHistory>& procs) {
  Timings t;
  std::map<int, NodeSpan> spans = node_spans(tl, procs);
  // The last top's exit (by itself or not), and its end by itself.
  const std::optional<Nanos> top_start =
      over_nodes(spans, &NodeSpan::top_start, Pick::Earliest, false);
  const std::optional<Nanos> top_exit = over_nodes(spans, &NodeSpan::top_exit, Pick::Latest, true);
  const std::optional<Nanos> top_end = over_nodes(spans, &NodeSpan::top_end, Pick::Latest, true);
  const std::optional<Nanos> done = over_nodes(spans, &NodeSpan::done, Pick::Latest, false);
  const std::optional<Nanos> deadline =
      over_nodes(spans, &NodeSpan::deadline, Pick::Earliest, false);
  std::optional<Nanos> teardown_took;
  for (const auto& [node, s] : spans)
    if (s.teardown && s.done)
      teardown_took = std::max(teardown_took.value_or(0), *s.done - *s.teardown);
  std::optional<Nanos> origin;
  std::optional<Nanos> first_fault;
  for (const auto& f : tl.facts.faults)
    if (f.sent && f.status == FaultStatus::Injected && (!first_fault || *f.sent < *first_fault))
      first_fault = f.sent;
  if (first_fault) {
    origin = first_fault;
    t.origin = TimingsOrigin::FirstFault;
  } else if (top_exit) {
    origin = top_exit;
    t.origin = TimingsOrigin::TopExit;
  } else if (deadline) {
    origin = deadline;
    t.origin = TimingsOrigin::Deadline;
  }
  auto ms = [](std::optional<Nanos> v) -> std::optional<double> {
    if (!v) return std::nullopt;
    return to_ms(*v);
  };
  t.ms["job_ms"] = (top_start && top_end) ? ms(*top_end - *top_start) : std::nullopt;
  // Until every job process was gone by itself (nullopt: teardown was needed).
  Nanos last_end = 0, last_gone = 0;
  bool all_ended = true, all_gone = true;
  for (const auto& p : procs) {
    auto e = p.end();
    const auto& node_teardown = spans[p.node].teardown;
    if (!e || (node_teardown && *e > *node_teardown))
      all_ended = false;
    else
      last_end = std::max(last_end, *e);
    auto g = p.gone_at ? p.gone_at : e;
    if (!g)
      all_gone = false;
    else
      last_gone = std::max(last_gone, *g);
  }
  t.ms["to_all_exited_ms"] =
      (origin && all_ended) ? ms(std::max<Nanos>(0, last_end - *origin)) : std::nullopt;
  t.ms["to_all_gone_ms"] =
      (origin && all_gone) ? ms(std::max<Nanos>(0, last_gone - *origin)) : std::nullopt;
  auto s = shm_story(tl);
  if (!s.leaked.empty() || !origin) {
    t.ms["to_shm_baseline_ms"] = std::nullopt;
  } else {
    t.ms["to_shm_baseline_ms"] =
        s.back_to_baseline ? ms(std::max<Nanos>(0, *s.back_to_baseline - *origin)) : 0.0;
  }
  t.ms["teardown_ms"] = ms(teardown_took);
  // From the first fault until the job noticed: the top process's exit.
  t.ms["to_job_exit_ms"] =
      (first_fault && top_end) ? ms(std::max<Nanos>(0, *top_end - *first_fault)) : std::nullopt;
  t.ms["total_ms"] = done ? ms(*done) : std::nullopt;
  return t;
}

}  // namespace aftermath
