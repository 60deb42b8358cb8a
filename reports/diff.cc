#include "reports/diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reports/view.h"

namespace aftermath {

namespace {

using nlohmann::json;
using report::items;
using report::member;
using report::num;
using report::str;

// Scenarios by name, in document order. A name seen twice (it cannot be, by
// the runner's validation, but a hand-edited file might) keeps the first.
std::vector<std::pair<std::string, const json*>> by_name(const json& run) {
  std::vector<std::pair<std::string, const json*>> out;
  for (const json* sc : items(run, "scenarios")) {
    std::string name = str(*sc, "name");
    bool seen = std::any_of(out.begin(), out.end(), [&](const auto& p) { return p.first == name; });
    if (!seen) out.emplace_back(name, sc);
  }
  return out;
}

const json* find(const std::vector<std::pair<std::string, const json*>>& v,
                 const std::string& name) {
  for (const auto& [n, sc] : v) {
    if (n == name) return sc;
  }
  return nullptr;
}

// Check name -> status, in document order.
std::vector<std::pair<std::string, std::string>> statuses(const json& sc) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const json* c : items(sc, "checks")) out.emplace_back(str(*c, "name"), str(*c, "status"));
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
  int check_changes = 0;
  std::string text;
};

std::string fixed(double v, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f%s", v, unit);
  return buf;
}

std::string signed_fixed(double v, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+.1f%s", v, unit);
  return buf;
}

std::string timing_line(const std::string& key, std::optional<double> a, std::optional<double> b) {
  std::string va = a ? fixed(*a, " ms") : "-";
  std::string vb = b ? fixed(*b, " ms") : "-";
  std::string delta;
  if (a && b) {
    delta = signed_fixed(*b - *a, " ms");
    // A percentage of zero is meaningless; say so rather than print inf.
    delta += *a != 0 ? " (" + signed_fixed((*b - *a) / std::fabs(*a) * 100, "%") + ")" : " (n/a %)";
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

ScenarioDiff compare(const std::string& name, const json& a, const json& b) {
  ScenarioDiff d;
  std::string va = str(a, "verdict", "unknown"), vb = str(b, "verdict", "unknown");
  d.verdict_changed = va != vb;
  std::string& t = d.text;
  t += "scenario " + name + ": ";
  t += d.verdict_changed ? "verdict " + va + " -> " + vb + "  [CHANGED]\n" : "verdict " + va + "\n";

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

  const json& ta = member(a, "timings_ms");
  const json& tb = member(b, "timings_ms");
  auto keys = report::timing_keys(ta);
  for (const auto& k : report::timing_keys(tb)) {
    if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  }
  if (!keys.empty()) {
    t += "  timings (a -> b, delta):\n";
    for (const auto& k : keys) t += timing_line(k, num(ta, k), num(tb, k));
  }
  return d;
}

struct RunDiff {
  std::string text;
  int verdict_changes = 0;
  int check_changes = 0;
  int only_a = 0, only_b = 0;
  size_t compared = 0;
  bool differ() const { return verdict_changes || check_changes || only_a || only_b; }
};

RunDiff diff_runs(const json& a, const json& b) {
  RunDiff r;
  auto sa = by_name(a), sb = by_name(b);
  for (const auto& [name, sc] : sa) {
    const json* other = find(sb, name);
    if (!other) continue;
    ScenarioDiff d = compare(name, *sc, *other);
    r.text += d.text;
    r.verdict_changes += d.verdict_changed;
    r.check_changes += d.check_changes;
    ++r.compared;
  }
  for (const auto& [name, sc] : sa) {
    if (!find(sb, name)) {
      r.text += "only in a: " + name + " (" + str(*sc, "verdict", "unknown") + ")\n";
      ++r.only_a;
    }
  }
  for (const auto& [name, sc] : sb) {
    if (!find(sa, name)) {
      r.text += "only in b: " + name + " (" + str(*sc, "verdict", "unknown") + ")\n";
      ++r.only_b;
    }
  }
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%zu scenario(s) compared: %d verdict change(s), %d check status change(s), "
                "%d only in a, %d only in b\n",
                r.compared, r.verdict_changes, r.check_changes, r.only_a, r.only_b);
  r.text += buf;
  return r;
}

}  // namespace

std::string render_diff(const json& a, const json& b) { return diff_runs(a, b).text; }

bool runs_differ(const json& a, const json& b) { return diff_runs(a, b).differ(); }

}  // namespace aftermath
