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
#include "reports/repeat_view.h"
#include "reports/svg.h"
#include "reports/timeline_svg.h"
#include "reports/view.h"

namespace aftermath {

namespace {

using nlohmann::json;
using report::format_bytes;
using report::format_ms;
using report::items;
using report::member;
using report::num;
using report::opt_int;
using report::ProcessView;
using report::str;
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

const char* verdict_class(const std::string& verdict) {
  return report::verdict_ok(verdict) ? "ok" : "bad";
}

const char* status_class(const std::string& status, bool expected_to_fail) {
  if (status == "pass") return "st-pass";
  if (status == "fail") return expected_to_fail ? "st-xfail" : "st-fail";
  if (status == "skipped") return "st-skip";
  return "st-fail";
}

std::string pretty_json(const json& j) {
  return j.dump(2, ' ', false, json::error_handler_t::replace);
}

// ---------------------------------------------------------------------------
// The rest of a scenario's section.

std::string row(const std::string& key, const std::string& value_html) {
  return "<tr><th>" + esc(key) + "</th><td>" + value_html + "</td></tr>";
}

// What the job reported about itself ("job_environment"): "k=v, k=v", or "".
std::string job_environment_text(const json& sc) {
  const json& env = member(sc, "job_environment");
  std::string out;
  if (!env.is_object()) return out;
  for (const auto& [k, v] : env.items())
    out += (out.empty() ? "" : "; ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  return out;
}

std::string facts_table(const json& sc) {
  std::string out = "<table class=\"facts\">";
  std::string desc = str(sc, "description");
  if (!desc.empty()) out += row("description", esc(desc));
  out += row("file", "<code>" + esc(str(sc, "file")) + "</code>");
  std::string tags;
  for (const json* t : items(sc, "tags")) {
    tags += "<span class=\"tag\">" + esc(t->is_string() ? t->get<std::string>() : t->dump()) +
            "</span> ";
  }
  if (!tags.empty()) out += row("tags", tags);
  out += row("expect", esc(str(sc, "expect", "pass")));
  out += row("seed", esc(str(sc, "seed", "-")));
  out += row("started", esc(str(sc, "started_at", "-")));
  const json& c = member(sc, "containment");
  std::string cont = str(c, "mode", "-");
  if (!str(c, "shm").empty()) cont += ", /dev/shm " + str(c, "shm");
  if (!str(c, "note").empty()) cont += " (" + str(c, "note") + ")";
  out += row("containment", esc(cont));
  const json& top = member(sc, "top");
  std::string top_text =
      "pid " + str(top, "pid", "?") + ", " + str(member(top, "outcome"), "text", "outcome unknown");
  if (member(top, "deadline_hit").is_boolean() && member(top, "deadline_hit").get<bool>()) {
    top_text += ", the job deadline passed with it alive";
  }
  out += row("top process", esc(top_text));
  std::string job_env = job_environment_text(sc);
  if (!job_env.empty()) out += row("job environment", "<code>" + esc(job_env) + "</code>");
  return out + "</table>";
}

std::string checks_table(const json& sc) {
  auto checks = items(sc, "checks");
  if (checks.empty()) return "<p class=\"muted\">No checks were recorded.</p>";
  std::string out =
      "<table class=\"checks\"><thead><tr><th>check</th><th>status</th><th>reason</th>"
      "<th>measured</th></tr></thead><tbody>";
  // The same reason for several skipped checks (the three device checks on
  // a machine without a GPU) is said once: the others point at the first.
  std::map<std::string, std::string> first_skipped_with;
  for (const json* c : checks) {
    std::string status = str(*c, "status", "?");
    bool expected =
        member(*c, "expected_to_fail").is_boolean() && member(*c, "expected_to_fail").get<bool>();
    out += fmt("<tr class=\"check %s\">", status_class(status, expected));
    out += "<td><code>" + esc(str(*c, "name", "?")) + "</code></td>";
    out += "<td><span class=\"status\">" + esc(status) + "</span>" +
           (expected ? "<br><span class=\"muted\">expected to fail</span>" : "") + "</td>";
    std::string reason = str(*c, "reason");
    if (status == "skipped" && !reason.empty()) {
      auto [it, first] = first_skipped_with.emplace(reason, str(*c, "name", "?"));
      if (!first) reason = "as " + it->second + ": skipped for the same reason";
    }
    out += "<td class=\"reason\">" + esc(reason) + "</td>";
    const json& m = member(*c, "measured");
    if (m.is_null() || (m.is_object() && m.empty())) {
      out += "<td class=\"muted\">-</td>";
    } else {
      out += std::string("<td><details") + (report::check_failed(status) ? " open" : "") +
             "><summary>measured</summary><pre>" + esc(pretty_json(m)) + "</pre></details></td>";
    }
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

std::string timings_table(const json& sc) {
  const json& timings = member(sc, "timings_ms");
  auto keys = report::timing_keys(timings);
  if (keys.empty()) return "<p class=\"muted\">No timings were recorded.</p>";
  std::string out = "<table class=\"timings\"><tbody>";
  for (const auto& k : keys) {
    auto v = num(timings, k);
    out += "<tr><th><code>" + esc(k) + "</code></th><td class=\"num\">" +
           (v ? esc(format_ms(v)) : std::string("<span class=\"muted\">not reached</span>")) +
           "</td></tr>";
  }
  out += "</tbody></table>";
  std::string origin = str(sc, "timings_origin");
  if (!origin.empty()) {
    out += "<p class=\"muted\">Recovery timings are measured from the " + esc(origin) + ".</p>";
  }
  return out;
}

std::string faults_table(const json& sc) {
  auto faults = items(sc, "faults");
  if (faults.empty()) return "";
  std::string out =
      "<h3>Faults</h3><table class=\"faults\"><thead><tr><th>#</th><th>action</th><th>target</th>"
      "<th>trigger</th><th>status</th><th>sent</th><th>effect</th><th>reason</th></tr></thead>"
      "<tbody>";
  for (const json* f : faults) {
    // How it acted, and what the kernel's OOM killer did in its cgroup.
    std::string status = str(*f, "status");
    if (!str(*f, "mechanism").empty()) status += " (" + str(*f, "mechanism") + ")";
    if (auto k = num(*f, "oom_kills")) status += fmt(", oom_kill %.0f", *k);
    std::string reason = str(*f, "reason");
    for (const json* line : items(*f, "kernel_log"))
      if (line->is_string()) reason += "\nkernel: " + line->get<std::string>();
    out += "<tr><td>" + esc(str(*f, "index")) + "</td><td>" + esc(str(*f, "action")) + "</td><td>" +
           esc(str(*f, "target")) + "</td><td>" + esc(str(*f, "trigger")) + "</td><td>" +
           esc(status) + "</td><td class=\"num\">" + esc(format_ms(num(*f, "sent_ms"))) +
           "</td><td class=\"num\">" + esc(format_ms(num(*f, "effect_ms"))) + "</td><td>" +
           esc(reason) + "</td></tr>";
  }
  return out + "</tbody></table>";
}

// A pytest suite's tests (result.json "tests"), those that left something
// behind first; "" when the job reported none.
std::string tests_table(const json& sc) {
  auto tests = items(sc, "tests");
  if (tests.empty()) return "";
  std::stable_partition(tests.begin(), tests.end(),
                        [](const json* t) { return !items(*t, "leaks").empty(); });
  size_t leaking = 0;
  for (const json* t : tests) leaking += items(*t, "leaks").empty() ? 0 : 1;
  std::string out =
      fmt("<h3>Tests (%zu, %zu left something behind)</h3>", tests.size(), leaking) +
      "<table class=\"tests\"><thead><tr><th>test</th><th>worker</th><th>pid</th>"
      "<th>started</th><th>ended</th><th>outcome</th><th>left behind</th></tr></thead><tbody>";
  for (const json* t : tests) {
    std::string left;
    for (const json* l : items(*t, "leaks"))
      left += (left.empty() ? "" : "<br>") + esc(str(*l, "kind") + ": " + str(*l, "what"));
    auto end = num(*t, "end_ms");
    out += std::string("<tr class=\"") + (left.empty() ? "pass" : "fail") + "\"><td><code>" +
           esc(str(*t, "nodeid")) + "</code></td><td>" +
           esc(str(*t, "worker").empty() ? std::string("-") : str(*t, "worker")) +
           "</td><td class=\"num\">" + esc(str(*t, "pid")) + "</td><td class=\"num\">" +
           esc(format_ms(num(*t, "start_ms"))) + "</td><td class=\"num\">" +
           esc(end ? format_ms(end) : std::string("never")) + "</td><td>" +
           esc(str(*t, "outcome").empty() ? std::string("-") : str(*t, "outcome")) + "</td><td>" +
           (left.empty() ? "-" : left) + "</td></tr>";
  }
  return out + "</tbody></table>";
}

std::string processes_table(const json& sc) {
  auto procs = report::processes_by_role(sc);
  std::string out =
      fmt("<details class=\"procs\"><summary>Processes (%zu)</summary>", procs.size());
  out +=
      "<table><thead><tr><th>pid</th><th>role</th><th>ppid</th><th>comm</th><th>started</th>"
      "<th>exited</th><th>gone</th><th>orphaned</th><th>zombie since</th><th>outcome</th>"
      "<th>command line</th></tr></thead><tbody>";
  for (const auto& p : procs) {
    std::string ppid = str(*p.src, "ppid", "?");
    std::string last = str(*p.src, "last_ppid");
    if (!last.empty() && last != ppid) ppid += " \u2192 " + last;
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

std::string logs_block(const json& sc, const std::string& report_dir) {
  std::string out = "<ul class=\"logs\">";
  for (const char* key : {"stdout_path", "stderr_path"}) {
    std::string path = str(sc, key);
    std::string name = std::string(key).substr(0, 6);
    if (path.empty()) {
      out += "<li>" + name + ": <span class=\"muted\">not captured</span></li>";
    } else {
      out += "<li>" + name + ": <a href=\"" + esc(report::log_href(path, report_dir)) + "\">" +
             esc(path) + "</a></li>";
    }
  }
  out += "</ul>";
  // Each announced process's own stdout and stderr (AFTERMATH_LOG_DIR).
  std::string rows;
  size_t with_logs = 0;
  for (const auto& p : report::processes_by_role(sc)) {
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
  std::string tail = str(member(sc, "top"), "stderr_tail");
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
std::string nodes_table(const json& sc) {
  const json& nodes = member(sc, "nodes");
  if (!nodes.is_array() || nodes.empty()) return "";
  std::string out =
      "<h3>Nodes</h3><table class=\"nodes\"><thead><tr><th>node</th><th>host</th><th>address</th>"
      "<th>agent</th><th>clock "
      "offset</th><th>started</th><th>processes</th><th>verdict</th></tr></thead><tbody>";
  for (const json& n : nodes) {
    const json& clock = member(n, "clock");
    std::string agent = str(n, "agent");
    if (auto lost = num(n, "lost_ms")) agent += " at " + format_ms(lost);
    std::string verdict = str(n, "verdict");
    out += "<tr><td>node" + std::to_string(opt_int(n, "index").value_or(0)) + "</td><td>" +
           esc(str(n, "host")) + "</td><td>" + esc(str(n, "address")) + "</td><td>" + esc(agent) +
           "</td><td>" +
           esc(format_ms(num(clock, "offset_ms")) + " \u00b1 " +
               format_ms(num(clock, "uncertainty_ms"))) +
           "</td><td>" + esc(format_ms(num(n, "started_ms"))) + "</td><td>" +
           std::to_string(opt_int(n, "processes").value_or(0)) + "</td><td class=\"" +
           verdict_class(verdict) + "\">" + esc(verdict) + " <span class=\"why\">" +
           esc(str(n, "verdict_reason")) + "</span></td></tr>";
  }
  return out + "</tbody></table>";
}

std::string scenario_section(const json& sc, size_t index, const std::string& report_dir) {
  std::string name = str(sc, "name", "scenario " + std::to_string(index + 1));
  std::string verdict = str(sc, "verdict", "unknown");
  std::string id = section_id(index, name);
  std::string out = "<section class=\"scenario\" id=\"" + esc(id) + "\">";
  out += std::string("<div class=\"banner ") + verdict_class(verdict) +
         "\"><span class=\"verdict\">" + esc(verdict) + "</span><h2>" + esc(report::run_label(sc)) +
         "</h2><span class=\"why\">" + esc(str(sc, "verdict_reason")) + "</span></div>";
  std::string error = str(sc, "error");
  if (!error.empty()) out += "<p class=\"error\">The run itself failed: " + esc(error) + "</p>";
  out += hang_section_html(sc, id);
  out += nodes_table(sc);
  out += facts_table(sc);
  std::string repro = str(sc, "repro");
  if (!repro.empty()) {
    out += "<h3>Reproduce</h3><div class=\"repro\"><pre class=\"cmd\">" + esc(repro) +
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
  out += "<h3>Logs</h3>" + logs_block(sc, report_dir);
  out += processes_table(sc);
  const json& text = member(member(sc, "scenario"), "text");
  if (text.is_string() && !text.get<std::string>().empty()) {
    out += "<details><summary>Scenario file (" + esc(str(member(sc, "scenario"), "hash")) +
           ")</summary><pre>" + esc(text.get<std::string>()) + "</pre></details>";
  }
  out += "<p class=\"top-link\"><a href=\"#top\">back to top</a></p>";
  return out + "</section>";
}

std::string overview(const json& result) {
  std::string out =
      "<section id=\"overview\"><h2>Overview</h2><table class=\"overview\"><thead><tr>"
      "<th>scenario</th><th>verdict</th><th>failed checks</th><th>job</th><th>all gone</th>"
      "<th>shm baseline</th><th>processes</th></tr></thead><tbody>";
  size_t i = 0;
  for (const json* sc : items(result, "scenarios")) {
    std::string name = str(*sc, "name", "scenario " + std::to_string(i + 1));
    std::string verdict = str(*sc, "verdict", "unknown");
    std::string failed;
    for (const auto& c : report::failed_checks(*sc)) failed += (failed.empty() ? "" : ", ") + c;
    const json& t = member(*sc, "timings_ms");
    out += std::string("<tr class=\"") + verdict_class(verdict) + "\"><td><a href=\"#" +
           esc(section_id(i, name)) + "\">" + esc(report::run_label(*sc)) +
           "</a></td><td><span class=\"pill\">" + esc(verdict) + "</span></td><td>" +
           esc(failed.empty() ? "-" : failed) + "</td><td class=\"num\">" +
           esc(format_ms(num(t, "job_ms"))) + "</td><td class=\"num\">" +
           esc(format_ms(num(t, "to_all_gone_ms"))) + "</td><td class=\"num\">" +
           esc(format_ms(num(t, "to_shm_baseline_ms"))) + "</td><td class=\"num\">" +
           std::to_string(items(*sc, "processes").size()) + "</td></tr>";
    ++i;
  }
  return out + "</tbody></table></section>";
}

// With --repeat: per scenario, its runs, verdicts, rate with its interval and
// the all-gone time's spread; under a flaky one, the outcomes that occurred.
// Each name links to the scenario's first run. Empty without repeats.
std::string repeats_section(const json& result, const std::vector<Aggregate>& aggs) {
  if (aggs.empty()) return "";
  auto scenarios = items(result, "scenarios");
  std::string out =
      "<section id=\"repeats\"><h2>Repeated runs</h2><table class=\"repeats\"><thead><tr>"
      "<th>scenario</th><th>runs</th><th>verdicts</th><th>rate (95% interval)</th>"
      "<th>all gone (min / median / p95 / max)</th></tr></thead><tbody>";
  for (const auto& a : aggs) {
    std::string link = esc(a.name);
    for (size_t i = 0; i < scenarios.size(); ++i) {
      if (str(*scenarios[i], "name", "scenario " + std::to_string(i + 1)) != a.name) continue;
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

std::string environment_table(const json& result) {
  std::string out = "<details class=\"env\"><summary>Environment</summary><table><tbody>";
  out += row("tool version", esc(str(result, "tool_version", "-")));
  out += row("schema", esc(str(result, "schema", "-") + " v" + str(result, "schema_version", "?")));
  out += row("command line", "<code>" + esc(str(result, "command_line", "-")) + "</code>");
  const json& env = member(result, "environment");
  if (env.is_object()) {
    for (const auto& [k, v] : env.items()) {
      out += row(k, esc(v.is_string() ? v.get<std::string>() : v.dump()));
    }
  }
  // What each job reported about itself (sharing strategy, start method, ...).
  auto scenarios = items(result, "scenarios");
  for (const json* sc : scenarios) {
    const json& job = member(*sc, "job_environment");
    if (!job.is_object()) continue;
    std::string prefix = scenarios.size() == 1 ? "job " : "job (" + str(*sc, "name", "?") + ") ";
    for (const auto& [k, v] : job.items()) {
      out += "<tr class=\"job-env\">" + std::string("<th>") + esc(prefix + k) + "</th><td>" +
             esc(v.is_string() ? v.get<std::string>() : v.dump()) + "</td></tr>";
    }
  }
  return out + "</tbody></table></details>";
}

}  // namespace

std::string render_html(const json& result, const std::string& report_dir) {
  auto scenarios = items(result, "scenarios");
  const json& summary = member(result, "summary");
  std::string title = "aftermath report";
  if (scenarios.size() == 1) title += ": " + str(*scenarios[0], "name");

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
  const auto aggs = report::aggregates_of(result);
  out += "<span>" + esc(report::scenarios_text(result, aggs)) + "</span>";
  for (const char* v : {"pass", "xfail", "fail", "xpass", "error", "skipped"}) {
    // The run's own tally when it has one; counting is only the fallback
    // for a document without "summary".
    auto n = num(summary, v);
    if (!n) {
      n = 0;
      for (const json* sc : scenarios) *n += str(*sc, "verdict") == v;
    }
    if (*n > 0) out += "<span>" + report::format_number(*n, 0) + " " + v + "</span>";
  }
  out += "</p>";
  // A merge of shards that does not make the whole run.
  for (const auto& why : report::merge_gaps(result))
    out += "<p class=\"error\">Incomplete: " + esc(why) + "</p>";
  out += environment_table(result);
  // The rate over the runs comes first: with --repeat it is the headline.
  out += repeats_section(result, aggs);
  if (scenarios.size() > 1) out += overview(result);
  if (scenarios.empty()) out += "<p class=\"muted\">This run has no scenarios.</p>";
  for (size_t i = 0; i < scenarios.size(); ++i) {
    out += scenario_section(*scenarios[i], i, report_dir);
  }
  out += "<footer>Rendered from result.json (" + esc(str(result, "schema", "aftermath/result")) +
         " v" + esc(str(result, "schema_version", "?")) + ") by aftermath " +
         esc(str(result, "tool_version", "")) +
         ". JavaScript errors: <span id=\"js-errors\">not run</span></footer>";
  out += "</main><script>\n";
  out += report_assets::report_js;
  out += "</script></body></html>\n";
  return out;
}

}  // namespace aftermath
