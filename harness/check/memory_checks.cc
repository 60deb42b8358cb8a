#include "harness/check/memory_checks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace aftermath {

using nlohmann::json;

namespace {

// A number from an event field sent as a number or as text; nullopt otherwise.
std::optional<double> field_number(const json& f, const std::string& key) {
  if (!f.is_object()) return std::nullopt;
  auto it = f.find(key);
  if (it == f.end()) return std::nullopt;
  if (it->is_number()) return it->get<double>();
  if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() && *end == 0 && std::isfinite(v)) return v;
  }
  return std::nullopt;
}

double round1(double v) { return std::round(v * 10.0) / 10.0; }

std::string fmt(double v, const char* f = "%.0f") {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

using Points = std::vector<std::pair<double, double>>;  // (step, KB)

// Median of the pairwise slopes; points with the same step give none.
// Past kMaxPoints, an even subsample keeps the cost bounded (and the result
// deterministic).
std::optional<double> theil_sen(const Points& all) {
  constexpr size_t kMaxPoints = 400;
  Points pts;
  if (all.size() > kMaxPoints) {
    for (size_t i = 0; i < kMaxPoints; ++i)
      pts.push_back(all[i * (all.size() - 1) / (kMaxPoints - 1)]);
  } else {
    pts = all;
  }
  std::vector<double> slopes;
  for (size_t i = 0; i < pts.size(); ++i)
    for (size_t j = i + 1; j < pts.size(); ++j) {
      double dx = pts[j].first - pts[i].first;
      if (dx != 0) slopes.push_back((pts[j].second - pts[i].second) / dx);
    }
  if (slopes.empty()) return std::nullopt;
  return median(std::move(slopes));
}

std::optional<double> least_squares(const Points& pts) {
  double n = static_cast<double>(pts.size());
  if (pts.size() < 2) return std::nullopt;
  double mx = 0, my = 0;
  for (const auto& [x, y] : pts) {
    mx += x;
    my += y;
  }
  mx /= n;
  my /= n;
  double sxx = 0, sxy = 0;
  for (const auto& [x, y] : pts) {
    sxx += (x - mx) * (x - mx);
    sxy += (x - mx) * (y - my);
  }
  if (sxx == 0) return std::nullopt;
  return sxy / sxx;
}

struct Series {
  Points points;
  const ProcessHistory* proc = nullptr;
};

std::string who(int pid, const ProcessHistory* p) {
  std::string s = std::string(p ? to_string(p->role) : "process") + " " + std::to_string(pid);
  if (p && p->rank >= 0 && p->worker >= 0)
    s += " (rank " + std::to_string(p->rank) + " worker " + std::to_string(p->worker) + ")";
  else if (p && p->rank >= 0)
    s += " (rank " + std::to_string(p->rank) + ")";
  return s;
}

std::string join_list(const std::vector<std::string>& items, size_t n) {
  std::string s;
  for (size_t i = 0; i < items.size() && i < n; ++i) s += (i ? ", " : "") + items[i];
  if (items.size() > n) s += ", ... (" + std::to_string(items.size()) + " in all)";
  return s;
}

}  // namespace

CheckResult memory_growth(const CheckInput& in) { return memory_growth(in, MemoryGrowthParams{}); }

// Long: gathering series per process, the two slope estimates and the report of each share state.
CheckResult memory_growth(const CheckInput& in, const MemoryGrowthParams& p) {
  CheckResult r;
  std::map<int, const ProcessHistory*> procs;
  for (const auto& ph : in.processes) procs[ph.pid] = &ph;

  std::map<int, Series> series;
  int events = 0, without_field = 0;
  for (const auto& o : in.timeline.observations) {
    const auto* e = event_named(o, "memory");
    if (!e) continue;
    ++events;
    json f = json::parse(e->fields_json, nullptr, false);
    auto step = field_number(f, "step");
    auto kb = field_number(f, p.field);
    if (!kb) ++without_field;
    if (!step || !kb) continue;
    auto it = procs.find(e->pid);
    const ProcessHistory* ph = it == procs.end() ? nullptr : it->second;
    if (p.role && (!ph || ph->role != *p.role)) continue;
    if (*step <= static_cast<double>(p.skip_steps)) continue;
    Series& s = series[e->pid];
    s.proc = ph;
    s.points.emplace_back(*step, *kb);
  }
  r.measured["threshold_kb_per_step"] = p.max_kb_per_step;
  r.measured["field"] = p.field;
  r.measured["events"] = events;
  if (events == 0) {
    r.status = CheckStatus::Skipped;
    r.reason = "the job sent no \"memory\" events";
    return r;
  }
  if (without_field == events) {
    r.status = CheckStatus::Skipped;
    r.reason = "no \"memory\" event carries " + p.field;
    return r;
  }

  json per = json::array();
  std::vector<std::string> over, too_few;
  int judged = 0;
  std::optional<double> steepest;
  std::string steepest_who;
  for (auto& [pid, s] : series) {
    std::stable_sort(s.points.begin(), s.points.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    json j{{"pid", pid},
           {"role", std::string(s.proc ? to_string(s.proc->role) : to_string(Role::Unknown))},
           {"rank", s.proc ? s.proc->rank : -1},
           {"worker", s.proc ? s.proc->worker : -1},
           {"points", s.points.size()},
           {"first_step", s.points.front().first},
           {"last_step", s.points.back().first},
           {"first_kb", s.points.front().second},
           {"last_kb", s.points.back().second},
           {"growth_kb", s.points.back().second - s.points.front().second}};
    auto ts = theil_sen(s.points);
    auto ls = least_squares(s.points);
    j["slope_kb_per_step"] = ts ? json(round1(*ts)) : json(nullptr);
    j["ls_slope_kb_per_step"] = ls ? json(round1(*ls)) : json(nullptr);
    bool enough = static_cast<int>(s.points.size()) >= p.min_points && ts.has_value();
    j["judged"] = enough;
    j["over"] = enough && *ts > p.max_kb_per_step;
    per.push_back(j);
    if (!enough) {
      too_few.push_back(who(pid, s.proc) + " (" + std::to_string(s.points.size()) + " point(s))");
      continue;
    }
    ++judged;
    if (!steepest || *ts > *steepest) {
      steepest = *ts;
      steepest_who = who(pid, s.proc);
    }
    if (*ts > p.max_kb_per_step)
      over.push_back(who(pid, s.proc) + " +" + fmt(*ts) + " KB/step (" +
                     fmt(s.points.front().second) + " -> " + fmt(s.points.back().second) +
                     " KB over steps " + fmt(s.points.front().first) + "-" +
                     fmt(s.points.back().first) + ")");
  }
  r.measured["processes"] = per;
  r.measured["judged"] = judged;
  r.measured["not_judged"] = too_few;
  r.measured["steepest_kb_per_step"] = steepest ? json(round1(*steepest)) : json(nullptr);
  if (judged == 0) {
    r.status = CheckStatus::Skipped;
    r.reason = "no process sent " + std::to_string(p.min_points) +
               " or more \"memory\" events with " + p.field + " and a step" +
               (p.skip_steps > 0 ? " past step " + std::to_string(p.skip_steps) : std::string()) +
               (too_few.empty() ? std::string() : ": " + join_list(too_few, 3));
    return r;
  }
  if (!over.empty()) {
    r.status = CheckStatus::Fail;
    r.reason = std::to_string(over.size()) + " of " + std::to_string(judged) +
               " process(es) grow " + p.field + " faster than " + fmt(p.max_kb_per_step, "%g") +
               " KB/step: " + join_list(over, 3);
    return r;
  }
  r.status = CheckStatus::Pass;
  r.reason = std::to_string(judged) + " process(es) judged on " + p.field + ", steepest " +
             steepest_who + " at " + fmt(*steepest, "%+.0f") + " KB/step (limit " +
             fmt(p.max_kb_per_step, "%g") + ")";
  return r;
}

}  // namespace aftermath
