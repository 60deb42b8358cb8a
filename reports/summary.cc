#include "reports/summary.h"

#include <algorithm>
#include <string>
#include <vector>

#include "harness/core/repeat_stats.h"
#include "reports/hang_summary.h"
#include "reports/json.h"
#include "reports/repeat_view.h"
#include "reports/view.h"

namespace aftermath {

namespace {

using report::format_ms;

// Inline code that survives backticks inside the text: the fence is one
// backtick longer than the longest run inside, as CommonMark specifies.
std::string md_code(std::string_view text) {
  size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  std::string fence(longest + 1, '`');
  std::string pad = (!text.empty() && (text.front() == '`' || text.back() == '`')) ? " " : "";
  return fence + pad + std::string(text) + pad + fence;
}

// Backslash-escapes the Markdown characters that could turn a reason or a
// command line into emphasis, code or a link. '_' is left alone: GitHub does
// not emphasise inside words, and check names are full of underscores.
bool md_special(unsigned char c) {
  return c == '\\' || c == '*' || c == '`' || c == '[' || c == ']';
}

// One line of list text: a newline would end the list item.
std::string md_line(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7F) {
      out += ' ';
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '&') {
      out += "&amp;";
    } else {
      if (md_special(c)) out += '\\';
      out += static_cast<char>(c);
    }
  }
  return out;
}

// Code spans are literal (no entities, no escapes), so only line breaks and
// control characters need replacing.
std::string code_line(std::string_view text) {
  std::string out;
  for (unsigned char c : text) out += (c < 0x20 || c == 0x7F) ? ' ' : static_cast<char>(c);
  return out;
}

}  // namespace

namespace {

// With --repeat: one row per scenario over its runs, then what made each
// flaky one flaky. Empty without repeats.
std::string repeats_md(const std::vector<Aggregate>& aggs) {
  if (aggs.empty()) return "";
  std::string out =
      "\n### Repeated runs\n\n| scenario | runs | verdicts | rate (95% interval) | all gone "
      "(min / median / p95 / max) |\n|---|--:|---|---|---|\n";
  for (const auto& a : aggs)
    out += "| " + md_cell(a.name) + " | " + std::to_string(a.runs) + " | " +
           md_cell(report::verdicts_text(a)) + (a.flaky ? " (flaky)" : "") + " | " +
           md_cell(rate_text(a)) + " | " + md_cell(report::all_gone_text(a)) + " |\n";
  std::string flaky;
  for (const auto& a : aggs)
    if (a.flaky && !a.outcomes.empty())
      flaky += "- **" + md_line(a.name) + "** is flaky: " + md_line(outcomes_text(a)) + "\n";
  if (!flaky.empty()) out += "\n" + flaky;
  return out;
}

}  // namespace

std::string md_cell(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    switch (c) {
      case '|':
        out += "\\|";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          out += ' ';
          break;
        }
        if (md_special(c)) out += '\\';
        out += static_cast<char>(c);
    }
  }
  return out;
}

std::string render_summary_md(const RunResult& run) {
  const auto& scenarios = run.scenarios;
  std::string out = "## aftermath: " + report::scenarios_text(run);
  const std::string counts = report::counts_text(report::verdict_counts(run));
  if (!counts.empty()) out += " (" + counts + ")";
  out += "\n\n";
  // A merge of shards that does not make the whole run: said before the table.
  const auto gaps = report::merge_gaps(run);
  for (const auto& why : gaps) out += "- \u26A0 **incomplete**: " + md_line(why) + "\n";
  if (!gaps.empty()) out += "\n";
  if (scenarios.empty()) return out + "No scenarios ran.\n";

  out += "| scenario | verdict | failed checks | job | all gone | shm baseline |\n";
  out += "|---|---|---|--:|--:|--:|\n";
  auto timing = [](const ScenarioResult& sc, const std::string& key) {
    return format_ms(report::timing_ms(sc, key));
  };
  std::vector<const ScenarioResult*> bad;
  for (const ScenarioResult& sc : scenarios) {
    const std::string verdict(to_string(sc.verdict));
    bool ok = report::verdict_ok(sc.verdict);
    if (!ok) bad.push_back(&sc);
    std::string failed;
    for (const auto& c : report::failed_checks(sc)) failed += (failed.empty() ? "" : ", ") + c;
    out += "| " + md_cell(report::run_label(sc)) + " | " + (ok ? "\u2705 " : "\u274C ") +
           md_cell(verdict) + " | " + md_cell(failed.empty() ? "-" : failed) + " | " +
           timing(sc, "job_ms") + " | " + timing(sc, "to_all_gone_ms") + " | " +
           timing(sc, "to_shm_baseline_ms") + " |\n";
  }

  out += repeats_md(run.aggregates);

  for (const ScenarioResult* sc : bad) {
    out += "\n### \u274C " + md_line(report::run_label(*sc)) + ": " +
           md_line(to_string(sc->verdict)) + "\n\n";
    if (!sc->verdict_reason.empty()) out += md_line(sc->verdict_reason) + "\n\n";
    if (!sc->error.empty()) out += "- **run error**: " + md_line(sc->error) + "\n";
    for (const CheckResult& c : sc->checks) {
      if (!report::check_failed(c.status)) continue;
      out += "- **" + md_line(c.name) + "** (" + md_line(to_string(c.status)) +
             "): " + md_line(c.reason) + "\n";
    }
    // What the job reported about itself: part of what reproducing it needs.
    if (!sc->job_environment.empty()) {
      std::string text;
      for (const auto& [k, v] : sc->job_environment)
        text += (text.empty() ? "" : "; ") + k + "=" + v;
      out += "- job environment: " + md_line(text) + "\n";
    }
    // A pytest suite's leaking tests, by name: what CI readers look for.
    for (const TestResult& t : sc->tests) {
      std::string left;
      for (const TestLeak& l : t.leaks)
        left += (left.empty() ? "" : "; ") + std::string(to_string(l.kind)) + ": " + l.what;
      if (!left.empty())
        out += "- test " + md_code(code_line(t.nodeid)) + " left " + md_line(left) + "\n";
    }
    if (!sc->repro.empty()) out += "- repro: " + md_code(code_line(sc->repro)) + "\n";
    // The job's own last words: often the whole story ("No module named 'torch'").
    std::string tail = report::last_lines(utf8_tail(sc->timeline.facts.stderr_text), 5);
    if (!tail.empty()) {
      std::string fence = "```";
      while (tail.find(fence) != std::string::npos) fence += "`";
      out += "- the job's last stderr lines:\n\n" + fence + "\n" + tail + fence + "\n";
    }
    out += hang_summary_md(*sc);
  }
  // A hang that was expected (a reproduced bug: xfail) still shows where the
  // job was stuck: that is what reproducing a hang is for.
  for (const ScenarioResult& sc : scenarios) {
    std::string hang = report::verdict_ok(sc.verdict) ? hang_summary_md(sc) : "";
    if (hang.empty()) continue;
    out += "\n### \u23F8 " + md_line(sc.name) + ": " + md_line(to_string(sc.verdict)) + "\n" + hang;
  }
  return out;
}

}  // namespace aftermath
