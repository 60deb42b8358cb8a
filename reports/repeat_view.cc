#include "reports/repeat_view.h"

#include <algorithm>

#include "reports/view.h"

namespace aftermath::report {

namespace {

int count_of(const json& j, std::string_view key, int fallback) {
  auto n = num(j, key);
  return n ? static_cast<int>(*n) : fallback;
}

std::vector<std::string> strings(const json& j, std::string_view key) {
  std::vector<std::string> out;
  for (const json* s : items(j, key))
    if (s->is_string()) out.push_back(s->get<std::string>());
  return out;
}

}  // namespace

std::vector<Aggregate> aggregates_of(const json& result) {
  std::vector<Aggregate> out;
  for (const json* aj : items(result, "aggregates")) {
    Aggregate a;
    a.name = str(*aj, "name", "?");
    a.runs = count_of(*aj, "runs", 0);
    const json& verdicts = member(*aj, "verdicts");
    if (verdicts.is_object())
      for (const auto& [v, n] : verdicts.items())
        if (n.is_number()) a.verdicts[v] = n.get<int>();
    auto verdict = [&](const char* v) {
      auto it = a.verdicts.find(v);
      return it == a.verdicts.end() ? 0 : it->second;
    };
    a.flaky = member(*aj, "flaky").is_boolean() && member(*aj, "flaky").get<bool>();
    a.expects_failure =
        member(*aj, "expects_failure").is_boolean() && member(*aj, "expects_failure").get<bool>();
    a.reproduced = count_of(*aj, "reproduced", verdict("xfail"));
    a.failed = count_of(*aj, "failed", verdict("fail") + verdict("xpass") + verdict("error"));
    a.skipped = count_of(*aj, "skipped", verdict("skipped"));
    a.judged = count_of(*aj, "judged", a.runs - a.skipped);
    a.rate = num(*aj, "reproduction_rate").value_or(0);
    auto ci = items(*aj, "rate_ci95");
    if (ci.size() == 2 && ci[0]->is_number() && ci[1]->is_number()) {
      a.rate_low = ci[0]->get<double>();
      a.rate_high = ci[1]->get<double>();
    } else {
      a.rate_high = 1;
    }
    for (const json* oj : items(*aj, "outcomes")) {
      Aggregate::Outcome o;
      o.verdict = str(*oj, "verdict", "unknown");
      o.failed_checks = strings(*oj, "failed_checks");
      for (const json* r : items(*oj, "runs"))
        if (r->is_number()) o.runs.push_back(r->get<int>());
      a.outcomes.push_back(std::move(o));
    }
    const json& timings = member(*aj, "timings_ms");
    if (timings.is_object()) {
      for (const auto& [k, d] : timings.items()) {
        Aggregate::Dist dist;
        dist.n = count_of(d, "n", 0);
        dist.min = num(d, "min").value_or(0);
        dist.median = num(d, "median").value_or(0);
        dist.p95 = num(d, "p95").value_or(0);
        dist.max = num(d, "max").value_or(0);
        a.timings_ms[k] = dist;
      }
    }
    out.push_back(std::move(a));
  }
  return out;
}

std::string run_label(const json& scenario) {
  std::string name = str(scenario, "name", "?");
  auto run = num(scenario, "run"), runs = num(scenario, "runs");
  if (!run || !runs || *runs <= 1) return name;
  return name + " run " + format_number(*run, 0) + "/" + format_number(*runs, 0);
}

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

std::string scenarios_text(const json& result, const std::vector<Aggregate>& aggs) {
  if (aggs.empty()) return plural(items(result, "scenarios").size(), "scenario");
  return repeated_text(aggs);
}

std::string scenarios_text(const RunResult& run) {
  if (run.aggregates.empty()) return plural(run.scenarios.size(), "scenario");
  return repeated_text(run.aggregates);
}

std::string verdicts_text(const Aggregate& a) {
  std::string out;
  for (const char* v : {"pass", "xfail", "fail", "xpass", "error", "skipped"}) {
    auto it = a.verdicts.find(v);
    if (it != a.verdicts.end() && it->second > 0)
      out += (out.empty() ? "" : ", ") + std::to_string(it->second) + " " + v;
  }
  // A verdict this version does not know is still counted.
  for (const auto& [v, n] : a.verdicts) {
    bool known = v == "pass" || v == "xfail" || v == "fail" || v == "xpass" || v == "error" ||
                 v == "skipped";
    if (!known && n > 0) out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + v;
  }
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
