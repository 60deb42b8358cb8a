#include "harness/core/repeat_stats.h"

#include <algorithm>
#include <cmath>
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
      out.back().expects_failure = r.expect != "pass";
    }
    Aggregate& a = out[it->second];
    ++a.runs;
    a.verdicts[std::string(to_string(r.verdict))]++;
    if (r.verdict == Verdict::XFail) ++a.reproduced;
    for (const auto& [k, v] : r.timings_ms)
      if (v) values[r.name][k].push_back(*v);
  }
  for (auto& a : out) {
    a.flaky = a.verdicts.size() > 1;
    a.rate = a.runs ? static_cast<double>(a.reproduced) / a.runs : 0;
    std::tie(a.rate_low, a.rate_high) = wilson_interval(a.reproduced, a.runs);
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

}  // namespace aftermath
