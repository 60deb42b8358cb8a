#include "reports/hang_section.h"

#include <algorithm>
#include <string_view>

#include "reports/escape.h"
#include "reports/hang_view.h"
#include "reports/timeline_states.h"
#include "reports/view.h"

namespace aftermath {

namespace {

using report::DiagnosedProcess;
using report::format_ms;
using report::PyFrame;

constexpr size_t kTopFrames = 3;

std::string esc(std::string_view s) { return html_escape(s); }

size_t line_count(std::string_view text) {
  size_t n = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  return n + (!text.empty() && text.back() != '\n');
}

// The small swatch of the timeline bar a state is drawn with, for the states
// that have one of their own; "" for the others.
std::string state_swatch(char state) {
  const char* cls = state == 'Z' ? "zombie" : svg::state_class(state);
  if (!cls) return "";
  return std::string(
             "<svg class=\"swatch\" width=\"14\" height=\"10\" aria-hidden=\"true\"><rect "
             "class=\"") +
         cls + "\" x=\"1\" y=\"1\" width=\"12\" height=\"8\"/></svg>";
}

std::string frame_item(const PyFrame& f, const char* cls) {
  return std::string("<li class=\"") + cls + "\" title=\"" + esc(f.file) + "\"><code>" +
         esc(report::frame_text(f)) + "</code></li>";
}

// The innermost Python frames, and the user's own frame below them when
// none of those is it; else why there is no Python stack.
std::string where_cell(const DiagnosedProcess& p) {
  if (p.frames.empty()) {
    if (!p.python_note.empty()) return "<span class=\"muted\">" + esc(p.python_note) + "</span>";
    if (!p.python_stacks.empty()) return "<span class=\"muted\">see the Python stacks</span>";
    return "<span class=\"muted\">-</span>";
  }
  std::string out = "<ol class=\"frames\">";
  size_t shown = std::min(kTopFrames, p.frames.size());
  for (size_t i = 0; i < shown; ++i) out += frame_item(p.frames[i], "frame");
  const PyFrame* user = report::innermost_user_frame(p);
  if (user && user >= p.frames.data() + shown) out += frame_item(*user, "frame user");
  return out + "</ol>";
}

// One kind of stack, folded: open for the one a reader wants first.
std::string stack_block(const char* what, const std::string& text, const std::string& missing,
                        bool open) {
  if (text.empty()) {
    return std::string("<p class=\"muted\">") + what + ": " + esc(missing) + "</p>";
  }
  size_t lines = line_count(text);
  return std::string("<details class=\"stack\"") + (open ? " open" : "") + "><summary>" + what +
         " (" + std::to_string(lines) + " line" + (lines == 1 ? "" : "s") + ")</summary><pre>" +
         esc(text) + "</pre></details>";
}

std::string process_rows(const DiagnosedProcess& p) {
  std::string name = report::process_name(p);
  std::string out = "<tbody class=\"hang-proc\" data-pid=\"" + std::to_string(p.pid) + "\"><tr>";
  out += "<td>" + esc(name) + "</td><td class=\"num\">" + std::to_string(p.pid) + "</td>";
  out += "<td class=\"state\" data-state=\"" + esc(std::string(1, p.state)) + "\">" +
         state_swatch(p.state) + esc(report::state_text(p.state)) + "</td>";
  out += "<td>" +
         (p.wchan.empty() ? std::string("<span class=\"muted\">-</span>")
                          : "<code>" + esc(p.wchan) + "</code>") +
         "</td>";
  out += "<td>" +
         (p.waiting_in.empty() ? std::string("<span class=\"muted\">-</span>")
                               : "<b>" + esc(p.waiting_in) + "</b>") +
         "</td>";
  out += "<td class=\"where\">" + where_cell(p) + "</td></tr>";

  bool python = !p.python_stacks.empty();
  std::string why_no_python = p.python_note.empty() ? "none taken" : p.python_note;
  out += "<tr class=\"hang-more\"><td colspan=\"6\"><details><summary>Stacks of " + esc(name) +
         " (pid " + std::to_string(p.pid) + "): Python, C, kernel</summary>";
  out += stack_block("Python stacks (py-bt, every thread)", p.python_stacks, why_no_python, true);
  out += stack_block("C stacks (gdb, every thread)", p.user_stacks, "none taken", !python);
  out += stack_block("Kernel stack (/proc/PID/stack)", p.kernel_stack, "none taken", false);
  if (p.took_ms) out += "<p class=\"muted\">Diagnosed in " + esc(format_ms(p.took_ms)) + ".</p>";
  return out + "</details></td></tr></tbody>";
}

}  // namespace

std::string hang_section_html(const ScenarioResult& scenario, const std::string& id) {
  auto diag = report::hang_diagnosis(scenario.timeline.facts);
  if (!diag) return "";
  size_t n = diag->processes.size();
  std::string out = "<div class=\"hang\" id=\"hang-" + esc(id) + "\"><h3>Hang diagnosis</h3>";
  out += "<p class=\"hang-meta\">" + std::to_string(n) + " live process" + (n == 1 ? "" : "es") +
         " when the hang was declared";
  if (diag->took_ms) out += "; diagnosed in " + esc(format_ms(diag->took_ms));
  out += ".";
  if (!diag->note.empty()) out += " <span class=\"hang-note\">" + esc(diag->note) + "</span>";
  out += "</p>";
  if (n > 0) {
    out +=
        "<table class=\"hang-procs\"><thead><tr><th>process</th><th>pid</th><th>state</th>"
        "<th>wchan</th><th>waiting in</th><th>where (Python, innermost first)</th></tr></thead>";
    for (const auto& p : diag->processes) out += process_rows(p);
    out += "</table>";
  }
  return out + "</div>";
}

}  // namespace aftermath
