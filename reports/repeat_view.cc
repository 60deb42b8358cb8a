#include "reports/repeat_view.h"

#include <algorithm>

#include "reports/view.h"

namespace aftermath::report {

std::string run_label(const ScenarioResult& scenario) {
  if (scenario.runs <= 1) return scenario.name;
  return scenario.name + " run " + std::to_string(scenario.run_index + 1) + "/" +
         std::to_string(scenario.runs);
}

namespace {

std::string plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string repeated_text(const std::vector<Aggregate>& aggs) {
  int lo = aggs[0].runs, hi = aggs[0].runs;
  for (const auto& a : aggs) {
    lo = std::min(lo, a.runs);
    hi = std::max(hi, a.runs);
  }
  std::string runs = lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
  return plural(aggs.size(), "scenario") + ", " + runs + " runs each";
}

}  // namespace

std::string scenarios_text(const RunResult& run) {
  if (run.aggregates.empty()) return plural(run.scenarios.size(), "scenario");
  return repeated_text(run.aggregates);
}

std::map<Verdict, int> verdict_counts(const RunResult& run) {
  std::map<Verdict, int> counts;
  for (const ScenarioResult& sc : run.scenarios) ++counts[sc.verdict];
  return counts;
}

std::string counts_text(const std::map<Verdict, int>& counts) {
  std::string out;
  for (Verdict v : kVerdictOrder) {
    auto it = counts.find(v);
    if (it != counts.end() && it->second > 0)
      out +=
          (out.empty() ? "" : ", ") + std::to_string(it->second) + " " + std::string(to_string(v));
  }
  return out;
}

std::string verdicts_text(const Aggregate& a) {
  std::string out = counts_text(a.verdicts);
  return out.empty() ? "-" : out;
}

std::string all_gone_text(const Aggregate& a) {
  auto it = a.timings_ms.find("to_all_gone_ms");
  if (it == a.timings_ms.end() || it->second.n == 0) return "-";
  const auto& d = it->second;
  return format_ms(d.min) + " / " + format_ms(d.median) + " / " + format_ms(d.p95) + " / " +
         format_ms(d.max);
}

}  // namespace aftermath::report
