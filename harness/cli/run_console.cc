#include "harness/cli/run_console.h"

#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include "harness/core/repeat_stats.h"
#include "reports/escape.h"
#include "reports/repeat_view.h"
#include "reports/view.h"

namespace aftermath {

namespace {

std::string fmt_ms(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[32];
  if (*v >= 1000)
    std::snprintf(buf, sizeof buf, "%.2fs", *v / 1000);
  else
    std::snprintf(buf, sizeof buf, "%.1fms", *v);
  return buf;
}

}  // namespace

void print_status(const Scenario& sc, const LiveStatus& s, bool tty) {
  // One last phase per run (parallel jobs may run one scenario twice at once).
  std::string label = sc.name;
  if (s.runs > 1) label += " run " + std::to_string(s.run) + "/" + std::to_string(s.runs);
  static std::map<std::string, std::string> last_phases;
  std::string& last_phase = last_phases[label];
  char line[256];
  std::snprintf(line, sizeof line, "[%s] %6.1fs  procs %-4d  %s", label.c_str(), s.elapsed / 1e9,
                s.processes, s.phase.c_str());
  if (tty) {
    std::printf("\r\033[K%s", line);
    std::fflush(stdout);
  } else if (s.phase != last_phase) {
    std::printf("%s\n", line);
    std::fflush(stdout);
  }
  last_phase = s.phase;
}

void print_table(const RunResult& run, bool tty) {
  auto colour = [&](Verdict v) -> std::string {
    std::string s(to_string(v));
    if (!tty) return s;
    bool good = v == Verdict::Pass || v == Verdict::XFail;
    const char* c = v == Verdict::Skipped ? "\033[33m" : good ? "\033[32m" : "\033[31m";
    return c + s + "\033[0m";
  };
  std::printf("\n%-36s %-7s %-30s %10s %10s %10s\n", "scenario", "verdict", "failed checks", "job",
              "all gone", "shm base");
  for (const auto& s : run.scenarios) {
    std::string failed;
    for (const auto& c : s.checks)
      if (c.status == CheckStatus::Fail || c.status == CheckStatus::Error)
        failed += (failed.empty() ? "" : ",") + c.name;
    if (failed.empty()) failed = "-";
    auto get = [&](const char* k) {
      auto it = s.timings_ms.find(k);
      return it == s.timings_ms.end() ? std::optional<double>() : it->second;
    };
    std::string v = colour(s.verdict);
    int pad = tty ? 7 + 9 : 7;
    std::printf("%-36s %-*s %-30s %10s %10s %10s\n", report::run_label(s).c_str(), pad, v.c_str(),
                failed.c_str(), fmt_ms(get("job_ms")).c_str(),
                fmt_ms(get("to_all_gone_ms")).c_str(), fmt_ms(get("to_shm_baseline_ms")).c_str());
    if (s.verdict != Verdict::Pass && s.verdict != Verdict::XFail) {
      std::printf("    %s\n", s.verdict_reason.c_str());
      // Each failed check's own reason, then the job's last words: together
      // they say why ("job_exit: exited(1), expected 0" and "ModuleNotFoundError: No module named
      // 'torch'").
      for (const auto& c : s.checks)
        if (c.status == CheckStatus::Fail || c.status == CheckStatus::Error)
          std::printf("    %s: %s\n", c.name.c_str(), c.reason.c_str());
      // What the faults did: a signal the target ignored explains a verdict.
      for (const auto& f : s.timeline.facts.faults)
        std::printf("    fault %d (%s, %s): %s: %s\n", f.index,
                    std::string(to_string(f.action)).c_str(), f.trigger.c_str(),
                    std::string(to_string(f.status)).c_str(), f.reason.c_str());
      std::string tail = report::last_lines(s.timeline.facts.stderr_text, 3);
      for (size_t at = 0; at < tail.size();) {
        size_t nl = tail.find('\n', at);
        std::printf("    | %s\n", tail.substr(at, nl - at).c_str());
        at = nl + 1;
      }
    }
    for (const auto& line : leaking_test_lines(s)) std::printf("    %s\n", line.c_str());
  }
  std::map<Verdict, int> n = report::verdict_counts(run);
  std::printf("\n%zu scenario(s): %d pass, %d xfail, %d fail, %d xpass, %d error",
              run.scenarios.size(), n[Verdict::Pass], n[Verdict::XFail], n[Verdict::Fail],
              n[Verdict::XPass], n[Verdict::Error]);
  if (n[Verdict::Skipped]) std::printf(", %d skipped", n[Verdict::Skipped]);
  std::printf("\n");
}

std::vector<std::string> leaking_test_lines(const ScenarioResult& r) {
  std::vector<std::string> out;
  for (const auto& t : r.tests) {
    if (t.leaks.empty()) continue;
    std::string line =
        "test " + t.nodeid + (t.worker.empty() ? "" : " [" + t.worker + "]") + " left ";
    for (size_t i = 0; i < t.leaks.size(); ++i) {
      if (i == 3) {
        line += "; ... (" + std::to_string(t.leaks.size()) + " in all)";
        break;
      }
      line += (i ? "; " : "") + std::string(to_string(t.leaks[i].kind)) + ": " + t.leaks[i].what;
    }
    out.push_back(std::move(line));
  }
  return out;
}

void print_aggregates(const RunResult& run) {
  std::printf("\n%-36s %5s %-28s %-44s %s\n", "scenario", "runs", "verdicts", "rate (95% interval)",
              "all gone ms: min / median / p95 / max");
  for (const auto& a : run.aggregates) {
    // By the verdict's word, as result.json lists them.
    std::map<std::string, int> by_word;
    for (const auto& [verdict, n] : a.verdicts) by_word[std::string(to_string(verdict))] = n;
    std::string v;
    for (const auto& [name, n] : by_word)
      v += (v.empty() ? "" : " ") + name + "=" + std::to_string(n);
    if (a.flaky) v += " FLAKY";
    char dist[96] = "-";
    if (auto it = a.timings_ms.find("to_all_gone_ms"); it != a.timings_ms.end())
      std::snprintf(dist, sizeof dist, "%.1f / %.1f / %.1f / %.1f", it->second.min,
                    it->second.median, it->second.p95, it->second.max);
    // The interval's dash is one column wide but three bytes: pad by hand.
    std::string rate = rate_text(a);
    size_t columns = char_count(rate);
    std::printf("%-36s %5d %-28s %s%*s %s\n", a.name.c_str(), a.runs, v.c_str(), rate.c_str(),
                static_cast<int>(columns < 44 ? 44 - columns : 0), "", dist);
    if (a.flaky) std::printf("    flaky: %s\n", outcomes_text(a).c_str());
  }
}

void print_scenario_done(const ScenarioResult& r, bool live_line) {
  if (live_line) std::printf("\r\033[K");
  std::printf("[%s] %s: %s\n", report::run_label(r).c_str(),
              std::string(to_string(r.verdict)).c_str(), r.verdict_reason.c_str());
  if (!r.timeline.facts.containment_note.empty() && r.run_index == 0)
    std::printf("[%s] containment: %s\n", r.name.c_str(),
                r.timeline.facts.containment_note.c_str());
  std::fflush(stdout);
}

}  // namespace aftermath
