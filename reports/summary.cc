#include "reports/summary.h"

#include <algorithm>
#include <string>
#include <vector>

#include "harness/core/repeat_stats.h"
#include "reports/hang_summary.h"
#include "reports/repeat_view.h"
#include "reports/view.h"

namespace aftermath {

namespace {

using nlohmann::json;
using report::format_ms;
using report::items;
using report::member;
using report::num;
using report::str;

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
std::string repeats_md(const json& result, const std::vector<Aggregate>& aggs) {
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

std::string render_summary_md(const json& result) {
  auto scenarios = items(result, "scenarios");
  const auto aggs = report::aggregates_of(result);
  std::string out = "## aftermath: " + report::scenarios_text(result, aggs);
  std::string counts;
  const json& summary = member(result, "summary");
  for (const char* v : {"pass", "xfail", "fail", "xpass", "error", "skipped"}) {
    // The run's own tally; counting verdicts is only the fallback.
    auto n = num(summary, v);
    if (!n) {
      n = 0;
      for (const json* sc : scenarios) *n += str(*sc, "verdict") == v;
    }
    if (*n > 0) counts += (counts.empty() ? "" : ", ") + report::format_number(*n, 0) + " " + v;
  }
  if (!counts.empty()) out += " (" + counts + ")";
  out += "\n\n";
  // A merge of shards that does not make the whole run: said before the table.
  const auto gaps = report::merge_gaps(result);
  for (const auto& why : gaps) out += "- \u26A0 **incomplete**: " + md_line(why) + "\n";
  if (!gaps.empty()) out += "\n";
  if (scenarios.empty()) return out + "No scenarios ran.\n";

  out += "| scenario | verdict | failed checks | job | all gone | shm baseline |\n";
  out += "|---|---|---|--:|--:|--:|\n";
  std::vector<const json*> bad;
  for (const json* sc : scenarios) {
    std::string verdict = str(*sc, "verdict", "unknown");
    bool ok = report::verdict_ok(verdict);
    if (!ok) bad.push_back(sc);
    std::string failed;
    for (const auto& c : report::failed_checks(*sc)) failed += (failed.empty() ? "" : ", ") + c;
    const json& t = member(*sc, "timings_ms");
    out += "| " + md_cell(report::run_label(*sc)) + " | " + (ok ? "\u2705 " : "\u274C ") +
           md_cell(verdict) + " | " + md_cell(failed.empty() ? "-" : failed) + " | " +
           format_ms(num(t, "job_ms")) + " | " + format_ms(num(t, "to_all_gone_ms")) + " | " +
           format_ms(num(t, "to_shm_baseline_ms")) + " |\n";
  }

  out += repeats_md(result, aggs);

  for (const json* sc : bad) {
    out += "\n### \u274C " + md_line(report::run_label(*sc)) + ": " +
           md_line(str(*sc, "verdict", "unknown")) + "\n\n";
    std::string reason = str(*sc, "verdict_reason");
    if (!reason.empty()) out += md_line(reason) + "\n\n";
    std::string error = str(*sc, "error");
    if (!error.empty()) out += "- **run error**: " + md_line(error) + "\n";
    for (const json* c : items(*sc, "checks")) {
      std::string status = str(*c, "status");
      if (!report::check_failed(status)) continue;
      out += "- **" + md_line(str(*c, "name", "?")) + "** (" + md_line(status) +
             "): " + md_line(str(*c, "reason")) + "\n";
    }
    // What the job reported about itself: part of what reproducing it needs.
    const json& job_env = member(*sc, "job_environment");
    if (job_env.is_object() && !job_env.empty()) {
      std::string text;
      for (const auto& [k, v] : job_env.items())
        text += (text.empty() ? "" : "; ") + k + "=" +
                (v.is_string() ? v.get<std::string>() : v.dump());
      out += "- job environment: " + md_line(text) + "\n";
    }
    // A pytest suite's leaking tests, by name: what CI readers look for.
    for (const json* t : items(*sc, "tests")) {
      std::string left;
      for (const json* l : items(*t, "leaks"))
        left += (left.empty() ? "" : "; ") + str(*l, "kind") + ": " + str(*l, "what");
      if (!left.empty())
        out += "- test " + md_code(code_line(str(*t, "nodeid"))) + " left " + md_line(left) + "\n";
    }
    std::string repro = str(*sc, "repro");
    if (!repro.empty()) out += "- repro: " + md_code(code_line(repro)) + "\n";
    // The job's own last words: often the whole story ("No module named 'torch'").
    std::string tail = report::last_lines(str(member(*sc, "top"), "stderr_tail"), 5);
    if (!tail.empty()) {
      std::string fence = "```";
      while (tail.find(fence) != std::string::npos) fence += "`";
      out += "- the job's last stderr lines:\n\n" + fence + "\n" + tail + fence + "\n";
    }
    out += hang_summary_md(*sc);
  }
  // A hang that was expected (a reproduced bug: xfail) still shows where the
  // job was stuck: that is what reproducing a hang is for.
  for (const json* sc : scenarios) {
    std::string verdict = str(*sc, "verdict", "unknown");
    std::string hang = report::verdict_ok(verdict) ? hang_summary_md(*sc) : "";
    if (hang.empty()) continue;
    out += "\n### \u23F8 " + md_line(str(*sc, "name", "?")) + ": " + md_line(verdict) + "\n" + hang;
  }
  return out;
}

}  // namespace aftermath
