#include "reports/hang_summary.h"

#include <string_view>

#include "reports/hang_view.h"
#include "reports/summary.h"
#include "reports/view.h"

namespace aftermath {

namespace {

using report::DiagnosedProcess;

// A CI summary is read at a glance; a job of 64 ranks has the rest in the report.
constexpr size_t kMaxRows = 8;

// The innermost Python frame, and the user's own innermost frame when the
// first is Python's or a package's: "distributed_c10d.py:1234 in all_reduce
// ← train.py:42 in step — dist.all_reduce(t)".
std::string where(const DiagnosedProcess& p) {
  if (p.frames.empty()) return p.python_note.empty() ? "-" : "(" + p.python_note + ")";
  const report::PyFrame& top = p.frames.front();
  const report::PyFrame* user = report::innermost_user_frame(p);
  if (!user || user == &top) return report::frame_text(top);
  return report::frame_where(top) + " \u2190 " + report::frame_text(*user);
}

// md_cell, and '_' escaped too: a frame's text is full of dunders and
// leading underscores ("__main__", "_invoke_run") that GitHub would turn
// into emphasis, unlike the check names md_cell leaves alone.
std::string md_frames(std::string_view text) {
  std::string out;
  for (char c : md_cell(text)) {
    if (c == '_') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string hang_summary_md(const ScenarioResult& scenario) {
  auto diag = report::hang_diagnosis(scenario.timeline.facts);
  if (!diag) return "";
  size_t n = diag->processes.size();
  std::string out =
      "\n**Hang diagnosis**: " + std::to_string(n) + " live process" + (n == 1 ? "" : "es");
  if (diag->took_ms) out += ", diagnosed in " + report::format_ms(diag->took_ms);
  out += "\n\n";
  if (n > 0) {
    out += "| role | pid | state | waiting in | where |\n|---|--:|---|---|---|\n";
    for (size_t i = 0; i < n && i < kMaxRows; ++i) {
      const DiagnosedProcess& p = diag->processes[i];
      out += "| " + md_cell(report::process_name(p)) + " | " + std::to_string(p.pid) + " | " +
             md_cell(report::state_text(p.state)) + " | " +
             md_cell(p.waiting_in.empty() ? "-" : p.waiting_in) + " | " + md_frames(where(p)) +
             " |\n";
    }
    out += "\n";
    if (n > kMaxRows) out += "… and " + std::to_string(n - kMaxRows) + " more.\n";
  }
  if (!diag->note.empty()) out += "Note: " + md_cell(diag->note) + "\n";
  out +=
      "Full Python, C and kernel stacks: report.html (Hang diagnosis) and result.json "
      "(`hang_diagnosis`).\n";
  return out;
}

}  // namespace aftermath
