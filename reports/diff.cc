#include "reports/diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/repeat_stats.h"
#include "reports/repeat_view.h"
#include "reports/view.h"

namespace aftermath {

namespace {

// A scenario's place in a run: its name and, with --repeat, its run number
// (1 when it ran once). Names are unique within a run but for repeats, so
// run k of one run pairs with run k of the other.
struct Key {
  std::string name;
  int run = 1;
  bool operator==(const Key&) const = default;
};

Key key_of(const ScenarioResult& sc) { return {sc.name, sc.runs > 1 ? sc.run_index + 1 : 1}; }

// Scenarios by key, in the run's order. A key seen twice (it cannot be, by
// the runner's validation, but a hand-edited file might) keeps the first.
std::vector<std::pair<Key, const ScenarioResult*>> by_key(const RunResult& run) {
  std::vector<std::pair<Key, const ScenarioResult*>> out;
  for (const ScenarioResult& sc : run.scenarios) {
    Key k = key_of(sc);
    bool seen = std::any_of(out.begin(), out.end(), [&](const auto& p) { return p.first == k; });
    if (!seen) out.emplace_back(k, &sc);
  }
  return out;
}

const ScenarioResult* find(const std::vector<std::pair<Key, const ScenarioResult*>>& v,
                           const Key& key) {
  for (const auto& [k, sc] : v) {
    if (k == key) return sc;
  }
  return nullptr;
}

// The scenario's fault plan as written, one "ACTION TARGET TRIGGER" per
// fault ("SIGKILL rank:1 at point step hit 3", "SIGTERM launcher after 2s"),
// "; "-joined; "no faults" for none.
std::string fault_plan(const ScenarioResult& sc) {
  std::string out;
  for (const FaultRecord& f : sc.timeline.facts.faults) {
    std::string one = std::string(to_string(f.action)) + " " + f.target;
    // Triggers read "point ...", "phase ...", "after 2s", "when ...".
    bool place = f.trigger.rfind("point ", 0) == 0 || f.trigger.rfind("phase ", 0) == 0;
    if (!f.trigger.empty()) one += (place ? " at " : " ") + f.trigger;
    out += (out.empty() ? "" : "; ") + one;
  }
  return out.empty() ? "no faults" : out;
}

// Check name -> status, in the run's order.
std::vector<std::pair<std::string, std::string>> statuses(const ScenarioResult& sc) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const CheckResult& c : sc.checks) out.emplace_back(c.name, std::string(to_string(c.status)));
  return out;
}

std::optional<std::string> status_of(const std::vector<std::pair<std::string, std::string>>& v,
                                     const std::string& name) {
  for (const auto& [n, s] : v) {
    if (n == name) return s;
  }
  return std::nullopt;
}

struct ScenarioDiff {
  bool verdict_changed = false;
  bool plan_changed = false;
  int check_changes = 0;
  std::string text;
};

std::string fixed(double v, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f%s", v, unit);
  return buf;
}

// Below this base a percentage says nothing (0.1 ms -> 1890 ms would read
// +1890000%), nor beyond this many percent: there the delta speaks alone.
constexpr double kPercentMinBaseMs = 1.0;
constexpr double kPercentMax = 1000.0;

std::string signed_percent(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+.1f%%", v);
  return buf;
}

}  // namespace

std::string timing_delta(double a, double b) {
  double d = b - a;
  char buf[64];
  if (std::fabs(d) >= 1000)
    std::snprintf(buf, sizeof buf, "%+.2f s", d / 1000);
  else
    std::snprintf(buf, sizeof buf, "%+.1f ms", d);
  std::string out = buf;
  if (a == 0 || b == 0 || std::fabs(a) < kPercentMinBaseMs) return out;
  double pct = d / std::fabs(a) * 100;
  if (!std::isfinite(pct) || std::fabs(pct) > kPercentMax) return out;
  return out + " (" + signed_percent(pct) + ")";
}

namespace {

std::string timing_line(const std::string& key, std::optional<double> a, std::optional<double> b) {
  std::string va = a ? fixed(*a, " ms") : "-";
  std::string vb = b ? fixed(*b, " ms") : "-";
  std::string delta;
  if (a && b) {
    delta = timing_delta(*a, *b);
  } else if (a) {
    delta = "(not reached in b)";
  } else if (b) {
    delta = "(not reached in a)";
  } else {
    delta = "(not reached in either)";
  }
  char buf[256];
  std::snprintf(buf, sizeof buf, "    %-20s %12s -> %-12s %s\n", key.c_str(), va.c_str(),
                vb.c_str(), delta.c_str());
  return buf;
}

ScenarioDiff compare(const ScenarioResult& a, const ScenarioResult& b) {
  ScenarioDiff d;
  const std::string va(to_string(a.verdict)), vb(to_string(b.verdict));
  d.verdict_changed = va != vb;
  std::string& t = d.text;
  t += "scenario " + report::run_label(a) + ": ";
  t += d.verdict_changed ? "verdict " + va + " -> " + vb + "  [CHANGED]\n" : "verdict " + va + "\n";
  // Same name, other faults: a different experiment. Its verdict and checks
  // are still shown; its timings measure other things and are not compared.
  const std::string pa = fault_plan(a), pb = fault_plan(b);
  d.plan_changed = pa != pb;
  if (d.plan_changed) t += "  fault plans differ: a " + pa + "; b " + pb + "  [CHANGED]\n";

  auto ca = statuses(a), cb = statuses(b);
  std::vector<std::string> names;
  for (const auto& [n, s] : ca) names.push_back(n);
  for (const auto& [n, s] : cb) {
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  }
  for (const auto& n : names) {
    auto sa = status_of(ca, n), sb = status_of(cb, n);
    if (sa == sb) continue;
    ++d.check_changes;
    t += "  check " + n + ": " + sa.value_or("(absent)") + " -> " + sb.value_or("(absent)") + "\n";
  }

  auto keys = report::timing_keys(a.timings_ms);
  for (const auto& k : report::timing_keys(b.timings_ms)) {
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  if (!keys.empty() && d.plan_changed) {
    t += "  timings not compared: the runs injected different faults\n";
  } else if (!keys.empty()) {
    t += "  timings (a -> b, delta):\n";
    for (const auto& k : keys)
      t += timing_line(k, report::timing_ms(a, k), report::timing_ms(b, k));
  }
  return d;
}

// With --repeat on either side, the scenario's rate over all its runs:
// "  repeats: a reproduced 3/5 (...), flaky; b reproduced 5/5 (...)".
std::string repeats_line(const std::string& name, const std::vector<Aggregate>& a,
                         const std::vector<Aggregate>& b) {
  auto text = [&](const std::vector<Aggregate>& aggs) -> std::string {
    for (const auto& g : aggs)
      if (g.name == name) return rate_text(g) + (g.flaky ? ", flaky" : "");
    return "";
  };
  std::string ta = text(a), tb = text(b);
  if (ta.empty() && tb.empty()) return "";
  if (ta.empty()) ta = "no repeat statistics";
  if (tb.empty()) tb = "no repeat statistics";
  return "  repeats: a " + ta + "; b " + tb + "\n";
}

struct RunDiff {
  std::string text;
  int verdict_changes = 0;
  int check_changes = 0;
  int plan_changes = 0;
  int only_a = 0, only_b = 0;
  size_t compared = 0;
  bool differ() const {
    return verdict_changes || check_changes || plan_changes || only_a || only_b;
  }
};

RunDiff diff_runs(const RunResult& a, const RunResult& b) {
  RunDiff r;
  auto sa = by_key(a), sb = by_key(b);
  const auto& aggs_a = a.aggregates;
  const auto& aggs_b = b.aggregates;
  for (const auto& [key, sc] : sa) {
    const ScenarioResult* other = find(sb, key);
    if (!other) continue;
    ScenarioDiff d = compare(*sc, *other);
    r.text += d.text;
    if (key.run == 1) r.text += repeats_line(key.name, aggs_a, aggs_b);
    r.verdict_changes += d.verdict_changed;
    r.check_changes += d.check_changes;
    r.plan_changes += d.plan_changed;
    ++r.compared;
  }
  for (const auto& [key, sc] : sa) {
    if (!find(sb, key)) {
      r.text += "only in a: " + report::run_label(*sc) + " (" +
                std::string(to_string(sc->verdict)) + ")\n";
      ++r.only_a;
    }
  }
  for (const auto& [key, sc] : sb) {
    if (!find(sa, key)) {
      r.text += "only in b: " + report::run_label(*sc) + " (" +
                std::string(to_string(sc->verdict)) + ")\n";
      ++r.only_b;
    }
  }
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%zu scenario(s) compared: %d verdict change(s), %d check status change(s), "
                "%d only in a, %d only in b",
                r.compared, r.verdict_changes, r.check_changes, r.only_a, r.only_b);
  r.text += buf;
  if (r.plan_changes)
    r.text += ", " + std::to_string(r.plan_changes) + " with different fault plans";
  r.text += "\n";
  return r;
}

}  // namespace

std::string render_diff(const RunResult& a, const RunResult& b) { return diff_runs(a, b).text; }

bool runs_differ(const RunResult& a, const RunResult& b) { return diff_runs(a, b).differ(); }

}  // namespace aftermath
