#include "reports/html.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/repeat_stats.h"
#include "reports/assets/report_assets.h"
#include "reports/escape.h"
#include "reports/hang_section.h"
#include "reports/json.h"
#include "reports/repeat_view.h"
#include "reports/svg.h"
#include "reports/timeline_svg.h"
#include "reports/view.h"

namespace aftermath {

namespace {

using nlohmann::json;
using report::format_ms;
using svg::fmt;

std::string esc(std::string_view s) { return html_escape(s); }

// HTML ids from scenario names: names are [a-z0-9._-] by the scenario
// grammar, but an ad-hoc command's name is derived from a path, so anything
// else is replaced; the index keeps two sanitised names apart.
std::string section_id(size_t index, const std::string& name) {
  std::string id = "s" + std::to_string(index) + "-";
  for (unsigned char c : name) {
    id += (std::isalnum(c) || c == '-' || c == '_' || c == '.') ? static_cast<char>(c) : '_';
  }
  return id;
}

const char* verdict_class(Verdict verdict) { return report::verdict_ok(verdict) ? "ok" : "bad"; }

const char* status_class(CheckStatus status, bool expected_to_fail) {
  switch (status) {
    case CheckStatus::Pass:
      return "st-pass";
    case CheckStatus::Fail:
      return expected_to_fail ? "st-xfail" : "st-fail";
    case CheckStatus::Skipped:
      return "st-skip";
    default:
      return "st-fail";
  }
}

std::string text(std::string_view s) { return std::string(s); }

std::optional<double> ms_of(const std::optional<Nanos>& t) {
  return t ? std::optional<double>(to_ms(*t)) : std::nullopt;
}

// A scenario's name as listed, or its place when it has none.
std::string name_of(const ScenarioResult& sc, size_t index) {
  return sc.name.empty() ? "scenario " + std::to_string(index + 1) : sc.name;
}

std::string pretty_json(const json& j) {
  return j.dump(2, ' ', false, json::error_handler_t::replace);
}

// ---------------------------------------------------------------------------
// The rest of a scenario's section.

std::string row(const std::string& key, const std::string& value_html) {
  return "<tr><th>" + esc(key) + "</th><td>" + value_html + "</td></tr>";
}

// What the job reported about itself (job_environment): "k=v; k=v", or "".
std::string job_environment_text(const ScenarioResult& sc) {
  std::string out;
  for (const auto& [k, v] : sc.job_environment) out += (out.empty() ? "" : "; ") + k + "=" + v;
  return out;
}

std::string facts_table(const ScenarioResult& sc) {
  const RunFacts& facts = sc.timeline.facts;
  std::string out = "<table class=\"facts\">";
  if (!sc.description.empty()) out += row("description", esc(sc.description));
  out += row("file", "<code>" + esc(sc.file) + "</code>");
  std::string tags;
  for (const std::string& t : sc.tags) tags += "<span class=\"tag\">" + esc(t) + "</span> ";
  if (!tags.empty()) out += row("tags", tags);
  out += row("expect", esc(to_string(sc.expect)));
  out += row("seed", esc(std::to_string(sc.seed)));
  out += row("started", esc(sc.started_at.empty() ? "-" : sc.started_at));
  std::string cont = text(to_string(facts.containment));
  if (cont.empty()) cont = "-";
  if (facts.shm != ShmPlace::Unknown) cont += ", /dev/shm " + text(to_string(facts.shm));
  if (!facts.containment_note.empty()) cont += " (" + facts.containment_note + ")";
  out += row("containment", esc(cont));
  std::string top_text =
      "pid " + std::to_string(facts.top_pid) + ", " +
      (facts.top_outcome ? facts.top_outcome->to_string() : std::string("outcome unknown"));
  if (facts.deadline_hit) top_text += ", the job deadline passed with it alive";
  out += row("top process", esc(top_text));
  std::string job_env = job_environment_text(sc);
  if (!job_env.empty()) out += row("job environment", "<code>" + esc(job_env) + "</code>");
  return out + "</table>";
}

std::string checks_table(const ScenarioResult& sc) {
  if (sc.checks.empty()) return "<p class=\"muted\">No checks were recorded.</p>";
  std::string out =
      "<table class=\"checks\"><thead><tr><th>check</th><th>status</th><th>reason</th>"
      "<th>measured</th></tr></thead><tbody>";
  // The same reason for several skipped checks (the three device checks on
  // a machine without a GPU) is said once: the others point at the first.
  std::map<std::string, std::string> first_skipped_with;
  for (const CheckResult& c : sc.checks) {
    const bool expected = c.expected_to_fail;
    out += fmt("<tr class=\"check %s\">", status_class(c.status, expected));
    out += "<td><code>" + esc(c.name) + "</code></td>";
    out += "<td><span class=\"status\">" + esc(to_string(c.status)) + "</span>" +
           (expected ? "<br><span class=\"muted\">expected to fail</span>" : "") + "</td>";
    std::string reason = c.reason;
    if (c.status == CheckStatus::Skipped && !reason.empty()) {
      auto [it, first] = first_skipped_with.emplace(reason, c.name);
      if (!first) reason = "as " + it->second + ": skipped for the same reason";
    }
    out += "<td class=\"reason\">" + esc(reason) + "</td>";
    const json& m = c.measured;
    if (m.is_null() || (m.is_object() && m.empty())) {
      out += "<td class=\"muted\">-</td>";
    } else {
      out += std::string("<td><details") + (report::check_failed(c.status) ? " open" : "") +
             "><summary>measured</summary><pre>" + esc(pretty_json(m)) + "</pre></details></td>";
    }
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

std::string timings_table(const ScenarioResult& sc) {
  auto keys = report::timing_keys(sc.timings_ms);
  if (keys.empty()) return "<p class=\"muted\">No timings were recorded.</p>";
  std::string out = "<table class=\"timings\"><tbody>";
  for (const auto& k : keys) {
    auto v = report::timing_ms(sc, k);
    out += "<tr><th><code>" + esc(k) + "</code></th><td class=\"num\">" +
           (v ? esc(format_ms(v)) : std::string("<span class=\"muted\">not reached</span>")) +
           "</td></tr>";
  }
  out += "</tbody></table>";
  std::string origin = text(to_string(sc.timings_origin));
  if (!origin.empty()) {
    out += "<p class=\"muted\">Recovery timings are measured from the " + esc(origin) + ".</p>";
  }
  return out;
}

std::string faults_table(const ScenarioResult& sc) {
  const auto& faults = sc.timeline.facts.faults;
  if (faults.empty()) return "";
  std::string out =
      "<h3>Faults</h3><table class=\"faults\"><thead><tr><th>#</th><th>action</th><th>target</th>"
      "<th>trigger</th><th>status</th><th>sent</th><th>effect</th><th>reason</th></tr></thead>"
      "<tbody>";
  for (const FaultRecord& f : faults) {
    // How it acted, and what the kernel's OOM killer did in its cgroup.
    std::string status = text(to_string(f.status));
    std::string mechanism = text(to_string(f.mechanism));
    if (!mechanism.empty()) status += " (" + mechanism + ")";
    if (f.oom_kills) status += ", oom_kill " + std::to_string(*f.oom_kills);
    std::string reason = f.reason;
    for (const std::string& line : f.kernel_log) reason += "\nkernel: " + line;
    out += "<tr><td>" + std::to_string(f.index) + "</td><td>" + esc(to_string(f.action)) +
           "</td><td>" + esc(f.target) + "</td><td>" + esc(f.trigger) + "</td><td>" + esc(status) +
           "</td><td class=\"num\">" + esc(format_ms(ms_of(f.sent))) + "</td><td class=\"num\">" +
           esc(format_ms(ms_of(f.effect))) + "</td><td>" + esc(reason) + "</td></tr>";
  }
  return out + "</tbody></table>";
}

// A pytest suite's tests, those that left something behind first; "" when
// the job reported none.
std::string tests_table(const ScenarioResult& sc) {
  if (sc.tests.empty()) return "";
  std::vector<const TestResult*> tests;
  for (const TestResult& t : sc.tests) tests.push_back(&t);
  std::stable_partition(tests.begin(), tests.end(),
                        [](const TestResult* t) { return !t->leaks.empty(); });
  size_t leaking = 0;
  for (const TestResult* t : tests) leaking += t->leaks.empty() ? 0 : 1;
  std::string out =
      fmt("<h3>Tests (%zu, %zu left something behind)</h3>", tests.size(), leaking) +
      "<table class=\"tests\"><thead><tr><th>test</th><th>worker</th><th>pid</th>"
      "<th>started</th><th>ended</th><th>outcome</th><th>left behind</th></tr></thead><tbody>";
  for (const TestResult* t : tests) {
    std::string left;
    for (const TestLeak& l : t->leaks)
      left += (left.empty() ? "" : "<br>") + esc(text(to_string(l.kind)) + ": " + l.what);
    std::string outcome = text(to_string(t->outcome));
    out += std::string("<tr class=\"") + (left.empty() ? "pass" : "fail") + "\"><td><code>" +
           esc(t->nodeid) + "</code></td><td>" + esc(t->worker.empty() ? "-" : t->worker) +
           "</td><td class=\"num\">" + std::to_string(t->pid) + "</td><td class=\"num\">" +
           esc(format_ms(to_ms(t->started))) + "</td><td class=\"num\">" +
           esc(t->ended ? format_ms(to_ms(*t->ended)) : std::string("never")) + "</td><td>" +
           esc(outcome.empty() ? "-" : outcome) + "</td><td>" + (left.empty() ? "-" : left) +
           "</td></tr>";
  }
  return out + "</tbody></table>";
}

std::string processes_table(const std::vector<report::ProcessView>& procs) {
  std::string out =
      fmt("<details class=\"procs\"><summary>Processes (%zu)</summary>", procs.size());
  out +=
      "<table><thead><tr><th>pid</th><th>role</th><th>ppid</th><th>comm</th><th>started</th>"
      "<th>exited</th><th>gone</th><th>orphaned</th><th>zombie since</th><th>outcome</th>"
      "<th>command line</th></tr></thead><tbody>";
  for (const auto& p : procs) {
    std::string ppid = std::to_string(p.ppid);
    if (p.last_ppid != p.ppid) ppid += " \u2192 " + std::to_string(p.last_ppid);
    out += "<tr><td>" + std::to_string(p.pid) + (p.top ? " \u2605" : "") + "</td><td>" +
           esc(p.role) + "</td><td>" + esc(ppid) + "</td><td>" + esc(p.comm) +
           "</td><td class=\"num\">" + esc(format_ms(p.start_ms)) + "</td><td class=\"num\">" +
           esc(format_ms(p.exited_ms)) + "</td><td class=\"num\">" + esc(format_ms(p.gone_ms)) +
           "</td><td class=\"num\">" + esc(format_ms(p.orphaned_ms)) + "</td><td class=\"num\">" +
           esc(format_ms(p.zombie_since_ms)) + "</td><td>" +
           esc(p.outcome.empty() ? "-" : p.outcome) + "</td><td><code>" + esc(p.cmdline) +
           "</code></td></tr>";
  }
  return out + "</tbody></table></details>";
}

std::string logs_block(const ScenarioResult& sc, const std::vector<report::ProcessView>& procs,
                       const std::string& report_dir) {
  std::string out = "<ul class=\"logs\">";
  for (const auto& [path, name] :
       {std::pair{&sc.stdout_path, "stdout"}, std::pair{&sc.stderr_path, "stderr"}}) {
    if (path->empty()) {
      out += std::string("<li>") + name + ": <span class=\"muted\">not captured</span></li>";
    } else {
      out += std::string("<li>") + name + ": <a href=\"" +
             esc(report::log_href(*path, report_dir)) + "\">" + esc(*path) + "</a></li>";
    }
  }
  out += "</ul>";
  // Each announced process's own stdout and stderr (AFTERMATH_LOG_DIR).
  std::string rows;
  size_t with_logs = 0;
  for (const auto& p : procs) {
    if (p.log_stdout.empty() && p.log_stderr.empty()) continue;
    ++with_logs;
    std::string who;
    if (p.rank) who += "r" + std::to_string(*p.rank);
    if (p.worker) who += (who.empty() ? "w" : " w") + std::to_string(*p.worker);
    rows += fmt("<tr data-pid=\"%lld\"><td>", p.pid) + esc(p.role) + "</td><td class=\"num\">" +
            esc(report::pid_text(p)) + "</td><td>" + esc(who.empty() ? "-" : who) + "</td><td>" +
            esc(p.comm) + "</td>";
    for (const std::string* path : {&p.log_stdout, &p.log_stderr}) {
      if (path->empty()) {
        rows += "<td class=\"muted\">-</td>";
      } else {
        std::string file = report::scenario_file(sc, *path);
        rows += "<td><a href=\"" + esc(report::log_href(file, report_dir)) + "\">" + esc(*path) +
                "</a></td>";
      }
    }
    rows += "</tr>";
  }
  if (with_logs > 0) {
    out += fmt("<table class=\"proc-logs\"><caption>Per-process logs (%zu process%s)</caption>",
               with_logs, with_logs == 1 ? "" : "es") +
           "<thead><tr><th>role</th><th>pid</th><th>rank/worker</th><th>comm</th><th>stdout</th>"
           "<th>stderr</th></tr></thead><tbody>" +
           rows + "</tbody></table>";
  }
  // The tail result.json keeps, so a report re-rendered from it reads the same.
  std::string tail = utf8_tail(sc.timeline.facts.stderr_text);
  if (!tail.empty()) {
    out += "<details open><summary>stderr (tail)</summary><pre class=\"stderr\">" + esc(tail) +
           "</pre></details>";
  }
  return out;
}

std::string legend() {
  auto swatch = [](const char* cls, const char* label) {
    return std::string(
               "<span class=\"key\"><svg width=\"22\" height=\"12\" aria-hidden=\"true\">"
               "<rect class=\"") +
           cls + "\" x=\"1\" y=\"2\" width=\"20\" height=\"8\"/></svg>" + label + "</span>";
  };
  auto tri = [](const char* cls, const char* label) {
    return std::string(
               "<span class=\"key\"><svg width=\"14\" height=\"12\" aria-hidden=\"true\">"
               "<g class=\"") +
           cls + "\"><path d=\"M3,2 L11,2 L7,9 Z\"/></g></svg>" + label + "</span>";
  };
  return "<div class=\"legend\">" + swatch("life", "running") + swatch("orphan", "orphaned") +
         swatch("stopped", "stopped (T)") + swatch("uninterruptible", "uninterruptible (D)") +
         swatch("zombie", "zombie (not reaped)") + swatch("life alive", "alive at the end") +
         tri("sig sig-term", "SIGTERM") + tri("sig sig-kill", "SIGKILL") +
         tri("sig sig-other", "other signal") +
         "<span class=\"key\"><span class=\"phase-key\"></span>phase</span>"
         "<span class=\"key\"><span class=\"fault-key\"></span>fault</span>"
         "<span class=\"hint\">Drag across the timeline to zoom, double-click to reset; hover "
         "for details.</span></div>";
}

// A multi-node run's nodes: each one's agent, clock and own verdict.
std::string nodes_table(const ScenarioResult& sc) {
  if (sc.nodes.empty()) return "";
  std::string out =
      "<h3>Nodes</h3><table class=\"nodes\"><thead><tr><th>node</th><th>host</th><th>address</th>"
      "<th>agent</th><th>clock "
      "offset</th><th>started</th><th>processes</th><th>verdict</th></tr></thead><tbody>";
  for (const NodeResult& n : sc.nodes) {
    std::string agent = text(to_string(n.agent));
    if (n.lost_at) agent += " at " + format_ms(to_ms(*n.lost_at));
    out +=
        "<tr><td>node" + std::to_string(n.index) + "</td><td>" + esc(n.host) + "</td><td>" +
        esc(n.address) + "</td><td>" + esc(agent) + "</td><td>" +
        esc(format_ms(to_ms(n.clock_offset)) + " \u00b1 " + format_ms(to_ms(n.clock_uncertainty))) +
        "</td><td>" + esc(format_ms(to_ms(n.started))) + "</td><td>" + std::to_string(n.processes) +
        "</td><td class=\"" + verdict_class(n.verdict) + "\">" + esc(to_string(n.verdict)) +
        " <span class=\"why\">" + esc(n.verdict_reason) + "</span></td></tr>";
  }
  return out + "</tbody></table>";
}

std::string scenario_section(const ScenarioResult& sc, size_t index,
                             const std::string& report_dir) {
  const std::string id = section_id(index, name_of(sc, index));
  const std::vector<report::ProcessView> procs = report::processes_by_role(sc);
  std::string out = "<section class=\"scenario\" id=\"" + esc(id) + "\">";
  out += std::string("<div class=\"banner ") + verdict_class(sc.verdict) +
         "\"><span class=\"verdict\">" + esc(to_string(sc.verdict)) + "</span><h2>" +
         esc(report::run_label(sc)) + "</h2><span class=\"why\">" + esc(sc.verdict_reason) +
         "</span></div>";
  if (!sc.error.empty())
    out += "<p class=\"error\">The run itself failed: " + esc(sc.error) + "</p>";
  out += hang_section_html(sc, id);
  out += nodes_table(sc);
  out += facts_table(sc);
  if (!sc.repro.empty()) {
    out += "<h3>Reproduce</h3><div class=\"repro\"><pre class=\"cmd\">" + esc(sc.repro) +
           "</pre><button type=\"button\" class=\"copy\">copy</button></div>";
  }
  out +=
      "<h3>Timeline</h3><div class=\"tl-wrap\">" + svg::timeline_svg(sc, id, report_dir) + "</div>";
  out += legend();
  out += "<button type=\"button\" class=\"reset-zoom\" data-for=\"tl-" + esc(id) +
         "\">reset zoom</button>";
  out += "<h3>Checks</h3>" + checks_table(sc);
  out += tests_table(sc);
  out += "<h3>Recovery timings</h3>" + timings_table(sc);
  out += faults_table(sc);
  out += "<h3>Logs</h3>" + logs_block(sc, procs, report_dir);
  out += processes_table(procs);
  if (!sc.scenario_text.empty()) {
    out += "<details><summary>Scenario file (" + esc(sc.scenario_hash) + ")</summary><pre>" +
           esc(sc.scenario_text) + "</pre></details>";
  }
  out += "<p class=\"top-link\"><a href=\"#top\">back to top</a></p>";
  return out + "</section>";
}

std::string overview(const RunResult& run) {
  std::string out =
      "<section id=\"overview\"><h2>Overview</h2><table class=\"overview\"><thead><tr>"
      "<th>scenario</th><th>verdict</th><th>failed checks</th><th>job</th><th>all gone</th>"
      "<th>shm baseline</th><th>processes</th></tr></thead><tbody>";
  for (size_t i = 0; i < run.scenarios.size(); ++i) {
    const ScenarioResult& sc = run.scenarios[i];
    std::string failed;
    for (const auto& c : report::failed_checks(sc)) failed += (failed.empty() ? "" : ", ") + c;
    out += std::string("<tr class=\"") + verdict_class(sc.verdict) + "\"><td><a href=\"#" +
           esc(section_id(i, name_of(sc, i))) + "\">" + esc(report::run_label(sc)) +
           "</a></td><td><span class=\"pill\">" + esc(to_string(sc.verdict)) + "</span></td><td>" +
           esc(failed.empty() ? "-" : failed) + "</td><td class=\"num\">" +
           esc(format_ms(report::timing_ms(sc, "job_ms"))) + "</td><td class=\"num\">" +
           esc(format_ms(report::timing_ms(sc, "to_all_gone_ms"))) + "</td><td class=\"num\">" +
           esc(format_ms(report::timing_ms(sc, "to_shm_baseline_ms"))) + "</td><td class=\"num\">" +
           std::to_string(sc.processes.size()) + "</td></tr>";
  }
  return out + "</tbody></table></section>";
}

// With --repeat: per scenario, its runs, verdicts, rate with its interval and
// the all-gone time's spread; under a flaky one, the outcomes that occurred.
// Each name links to the scenario's first run. Empty without repeats.
std::string repeats_section(const RunResult& run) {
  if (run.aggregates.empty()) return "";
  std::string out =
      "<section id=\"repeats\"><h2>Repeated runs</h2><table class=\"repeats\"><thead><tr>"
      "<th>scenario</th><th>runs</th><th>verdicts</th><th>rate (95% interval)</th>"
      "<th>all gone (min / median / p95 / max)</th></tr></thead><tbody>";
  for (const auto& a : run.aggregates) {
    std::string link = esc(a.name);
    for (size_t i = 0; i < run.scenarios.size(); ++i) {
      if (name_of(run.scenarios[i], i) != a.name) continue;
      link = "<a href=\"#" + esc(section_id(i, a.name)) + "\">" + esc(a.name) + "</a>";
      break;
    }
    out += "<tr class=\"repeat\"><td>" + link + "</td><td class=\"num\">" + std::to_string(a.runs) +
           "</td><td>" + esc(report::verdicts_text(a)) +
           (a.flaky ? " <span class=\"flaky\">flaky</span>" : "") + "</td><td class=\"rate\">" +
           esc(rate_text(a)) + "</td><td class=\"num\">" + esc(report::all_gone_text(a)) +
           "</td></tr>";
    if (a.flaky && !a.outcomes.empty())
      out += "<tr class=\"flaky-why\"><td colspan=\"5\">flaky: " + esc(outcomes_text(a)) +
             "</td></tr>";
  }
  return out + "</tbody></table></section>";
}

std::string environment_table(const RunResult& run) {
  std::string out = "<details class=\"env\"><summary>Environment</summary><table><tbody>";
  out += row("tool version", esc(run.tool_version.empty() ? "-" : run.tool_version));
  out += row("schema", esc(std::string(kResultSchema) + " v" + std::to_string(run.schema_version)));
  out += row("command line",
             "<code>" + esc(run.command_line.empty() ? "-" : run.command_line) + "</code>");
  for (const auto& [k, v] : run.environment) out += row(k, esc(v));
  // What each job reported about itself (sharing strategy, start method, ...).
  for (const ScenarioResult& sc : run.scenarios) {
    std::string prefix = run.scenarios.size() == 1 ? "job " : "job (" + sc.name + ") ";
    for (const auto& [k, v] : sc.job_environment) {
      out += "<tr class=\"job-env\">" + std::string("<th>") + esc(prefix + k) + "</th><td>" +
             esc(v) + "</td></tr>";
    }
  }
  return out + "</tbody></table></details>";
}

}  // namespace

std::string render_html(const RunResult& run, const std::string& report_dir) {
  std::string title = "aftermath report";
  if (run.scenarios.size() == 1) title += ": " + run.scenarios[0].name;

  std::string out;
  out.reserve(64 * 1024);
  out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">";
  // Each asset follows a newline, as it did when it was a raw literal here.
  out += "<title>" + esc(title) + "</title><style>\n";
  out += report_assets::report_css;
  out += "</style><script>\n";
  out += report_assets::error_hook_js;
  out += "</script></head><body><main id=\"top\">";
  out += "<h1>" + esc(title) + "</h1>";

  out += "<p class=\"summary\">";
  out += "<span>" + esc(report::scenarios_text(run)) + "</span>";
  const auto counts = report::verdict_counts(run);
  for (Verdict v : report::kVerdictOrder)
    if (auto n = counts.find(v); n != counts.end())
      out += "<span>" + std::to_string(n->second) + " " + text(to_string(v)) + "</span>";
  out += "</p>";
  // A merge of shards that does not make the whole run.
  for (const auto& why : report::merge_gaps(run))
    out += "<p class=\"error\">Incomplete: " + esc(why) + "</p>";
  out += environment_table(run);
  // The rate over the runs comes first: with --repeat it is the headline.
  out += repeats_section(run);
  if (run.scenarios.size() > 1) out += overview(run);
  if (run.scenarios.empty()) out += "<p class=\"muted\">This run has no scenarios.</p>";
  for (size_t i = 0; i < run.scenarios.size(); ++i)
    out += scenario_section(run.scenarios[i], i, report_dir);
  out += "<footer>Rendered from result.json (" + std::string(kResultSchema) + " v" +
         std::to_string(run.schema_version) + ") by aftermath " + esc(run.tool_version) +
         ". JavaScript errors: <span id=\"js-errors\">not run</span></footer>";
  out += "</main><script>\n";
  out += report_assets::report_js;
  out += "</script></body></html>\n";
  return out;
}

}  // namespace aftermath
