#include "harness/core/repeat_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>

namespace aftermath {

std::pair<double, double> wilson_interval(int k, int n) {
  if (n <= 0) return {0.0, 1.0};
  const double z = 1.959963984540054;
  double p = static_cast<double>(k) / n;
  double denom = 1 + z * z / n;
  double centre = (p + z * z / (2.0 * n)) / denom;
  double half = z * std::sqrt(p * (1 - p) / n + z * z / (4.0 * n * n)) / denom;
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

namespace {
// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

std::vector<std::string> failed_checks(const ScenarioResult& r) {
  std::vector<std::string> out;
  for (const auto& c : r.checks)
    if (c.status == CheckStatus::Fail || c.status == CheckStatus::Error) out.push_back(c.name);
  return out;
}

// Two runs had the same outcome: the same verdict and the same failed checks,
// whatever their order.
bool same_outcome(const Aggregate::Outcome& o, Verdict verdict, std::vector<std::string> failed) {
  if (o.verdict != verdict) return false;
  std::vector<std::string> mine = o.failed_checks;
  std::sort(mine.begin(), mine.end());
  std::sort(failed.begin(), failed.end());
  return mine == failed;
}

// A share in whole percent, without the sign: 0.231 is "23".
std::string whole_percent(double v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f", v * 100);
  return buf;
}
}  // namespace

std::vector<Aggregate> aggregate(const std::vector<ScenarioResult>& results) {
  std::vector<Aggregate> out;
  std::map<std::string, size_t> index;
  std::map<std::string, std::map<std::string, std::vector<double>>> values;
  for (const auto& r : results) {
    auto [it, fresh] = index.emplace(r.name, out.size());
    if (fresh) {
      out.push_back(Aggregate{});
      out.back().name = r.name;
      out.back().expects_failure = !r.expect.pass;
    }
    Aggregate& a = out[it->second];
    ++a.runs;
    const Verdict verdict = r.verdict;
    a.verdicts[verdict]++;
    if (r.verdict == Verdict::XFail) ++a.reproduced;
    if (r.verdict == Verdict::Fail || r.verdict == Verdict::XPass || r.verdict == Verdict::Error)
      ++a.failed;
    if (r.verdict == Verdict::Skipped) ++a.skipped;
    int number = r.runs > 1 ? r.run_index + 1 : a.runs;
    auto failed = failed_checks(r);
    auto o = std::find_if(a.outcomes.begin(), a.outcomes.end(),
                          [&](const auto& o) { return same_outcome(o, verdict, failed); });
    if (o == a.outcomes.end()) {
      a.outcomes.push_back({verdict, failed, {}});
      o = a.outcomes.end() - 1;
    }
    o->runs.push_back(number);
    for (const auto& [k, v] : r.timings_ms)
      if (v) values[r.name][k].push_back(*v);
  }
  for (auto& a : out) {
    a.flaky = a.outcomes.size() > 1;
    a.judged = a.runs - a.skipped;
    int hits = a.expects_failure ? a.reproduced : a.failed;
    a.rate = a.judged ? static_cast<double>(hits) / a.judged : 0;
    std::tie(a.rate_low, a.rate_high) = wilson_interval(hits, a.judged);
    for (auto& [k, v] : values[a.name]) {
      std::sort(v.begin(), v.end());
      Aggregate::Dist d;
      d.n = static_cast<int>(v.size());
      d.min = v.front();
      d.max = v.back();
      d.median = percentile(v, 0.5);
      d.p95 = percentile(v, 0.95);
      a.timings_ms[k] = d;
    }
  }
  return out;
}

std::string rate_counts(const Aggregate& a) { return a.expects_failure ? "reproduced" : "failed"; }

std::string rate_text(const Aggregate& a) {
  if (a.judged <= 0)
    return "not judged: " + std::to_string(a.skipped) + "/" + std::to_string(a.runs) + " skipped";
  int hits = a.expects_failure ? a.reproduced : a.failed;
  std::string out = rate_counts(a) + " " + std::to_string(hits) + "/" + std::to_string(a.judged) +
                    " (" + whole_percent(a.rate) + "%, 95% interval " + whole_percent(a.rate_low) +
                    "\u2013" + whole_percent(a.rate_high) + "%)";
  if (a.skipped > 0) out += ", " + std::to_string(a.skipped) + " skipped";
  return out;
}

std::string outcomes_text(const Aggregate& a) {
  std::vector<const Aggregate::Outcome*> order;
  for (const auto& o : a.outcomes) order.push_back(&o);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto* x, const auto* y) { return x->runs.size() > y->runs.size(); });
  std::string out;
  for (const auto* o : order) {
    std::string checks;
    for (const auto& c : o->failed_checks) checks += (checks.empty() ? "" : ", ") + c;
    std::string numbers;
    for (int n : o->runs) numbers += (numbers.empty() ? "" : ", ") + std::to_string(n);
    out += (out.empty() ? "" : "; ") + std::to_string(o->runs.size()) + "/" +
           std::to_string(a.runs) + " " + std::string(to_string(o->verdict)) +
           (checks.empty() ? " with no failed check" : " on " + checks) +
           (o->runs.size() == 1 ? " (run " : " (runs ") + numbers + ")";
  }
  return out;
}

}  // namespace aftermath
