#include "reports/versions.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "reports/json.h"
#include "reports/result_read.h"
#include "reports/summary.h"

namespace aftermath {

namespace {

using json = nlohmann::json;

std::string ms_text(double ms) {
  char buf[32];
  if (ms >= 1000)
    std::snprintf(buf, sizeof buf, "%.2f s", ms / 1000);
  else
    std::snprintf(buf, sizeof buf, "%.0f ms", ms);
  return buf;
}

// One scenario on one version: the figures the table shows.
json cell(const ScenarioResult& s) {
  const RunFacts& facts = s.timeline.facts;
  json c;
  c["verdict"] = to_string(s.verdict);
  std::vector<std::string> failed;
  for (const CheckResult& check : s.checks)
    if (check.status == CheckStatus::Fail) failed.push_back(check.name);
  c["failed"] = failed;
  c["expect"] = to_string(s.expect);
  if (!s.torch_range.empty()) c["torch_range"] = s.torch_range;
  // The orphans no_orphans measured: the job's, and the helpers that lingered.
  int orphans = 0, helpers = 0;
  double longest = 0, linger = 0;
  for (const CheckResult& check : s.checks) {
    if (check.name != "no_orphans" || !check.measured.is_object()) continue;
    for (const auto& o : check.measured.value("orphans", json::array())) {
      if (!o.is_object()) continue;
      double life = o.value("orphan_lifetime_ms", 0.0);
      if (o.value("role", "") == "helper") {
        ++helpers;
        linger = std::max(linger, life);
      } else {
        ++orphans;
        longest = std::max(longest, life);
      }
    }
  }
  c["orphans"] = orphans;
  c["longest_orphan_ms"] = longest;
  c["helpers_orphaned"] = helpers;
  c["helper_linger_ms"] = linger;
  for (const char* k : {"to_all_gone_ms", "to_shm_baseline_ms", "job_ms"})
    if (auto it = s.timings_ms.find(k); it != s.timings_ms.end() && it->second) c[k] = *it->second;
  if (facts.top_outcome)
    c["exit"] = facts.top_outcome->to_string();
  else if (facts.deadline_hit)
    c["exit"] = "still running at the deadline";
  return c;
}

std::string cell_md(const json& c) {
  if (c.is_null()) return "not run";
  std::string v = c.value("verdict", "error");
  std::vector<std::string> failed = c.value("failed", std::vector<std::string>{});
  std::string text;
  if (!failed.empty()) {
    text += " (";
    for (size_t i = 0; i < failed.size(); ++i) text += (i ? ", " : "") + failed[i];
    text += ")";
  }
  std::vector<std::string> parts;
  if (int n = c.value("orphans", 0))
    parts.push_back(std::to_string(n) + " orphan" + (n == 1 ? "" : "s") + " ≤ " +
                    ms_text(c.value("longest_orphan_ms", 0.0)));
  if (int n = c.value("helpers_orphaned", 0))
    parts.push_back(std::to_string(n) + " helper" + (n == 1 ? "" : "s") + " linger ≤ " +
                    ms_text(c.value("helper_linger_ms", 0.0)));
  if (c.contains("to_all_gone_ms"))
    parts.push_back("all gone " + ms_text(c["to_all_gone_ms"].get<double>()));
  if (c.contains("to_shm_baseline_ms") && c["to_shm_baseline_ms"].get<double>() > 0)
    parts.push_back("shm back " + ms_text(c["to_shm_baseline_ms"].get<double>()));
  if (c.contains("exit")) parts.push_back("exit " + c["exit"].get<std::string>());
  for (const auto& p : parts) text += "; " + p;
  return "**" + md_cell(v) + "**" + md_cell(text);
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  return static_cast<bool>(f);
}

}  // namespace

json versions_json(const std::vector<VersionRun>& runs,
                   const std::vector<std::optional<RunResult>>& results) {
  json doc;
  doc["schema"] = "aftermath-versions";
  doc["schema_version"] = 1;
  json versions = json::array();
  std::vector<std::string> order;  // scenario names, first seen first
  std::map<std::string, std::vector<json>> cells;
  for (size_t i = 0; i < runs.size(); ++i) {
    const auto& f = runs[i].facts;
    json v;
    v["label"] = f.label();
    v["interpreter"] = f.interpreter;
    v["python"] = f.python;
    v["torch"] = f.torch ? json(f.torch->text) : json(nullptr);
    if (!f.torch) v["torch_error"] = f.torch_error.empty() ? f.probe_error : f.torch_error;
    v["dir"] = runs[i].dir;
    v["result"] = runs[i].result_path;
    const RunResult* r = i < results.size() && results[i] ? &*results[i] : nullptr;
    v["finished"] = r != nullptr;
    if (r) v["summary"] = summary_json(*r);
    versions.push_back(v);
    if (!r) continue;
    for (const ScenarioResult& s : r->scenarios) {
      std::string name = s.name;
      if (s.runs > 1) name += " run " + std::to_string(s.run_index + 1);
      if (!cells.count(name)) {
        order.push_back(name);
        cells[name] = std::vector<json>(runs.size());
      }
      cells[name][i] = cell(s);
    }
  }
  doc["versions"] = versions;
  json scenarios = json::array();
  for (const auto& name : order) {
    json row;
    row["name"] = name;
    row["cells"] = cells[name];
    std::set<std::string> shapes;
    for (const auto& c : cells[name]) {
      if (c.is_null()) {
        shapes.insert("not run");
        continue;
      }
      std::string shape = c.value("verdict", "") + ":";
      for (const auto& f : c.value("failed", std::vector<std::string>{})) shape += f + ",";
      shapes.insert(shape);
    }
    row["differs"] = shapes.size() > 1;
    scenarios.push_back(row);
  }
  doc["scenarios"] = scenarios;
  return doc;
}

std::string render_versions_md(const json& doc) {
  std::ostringstream md;
  md << "# aftermath: one run on " << doc["versions"].size() << " Python interpreters\n\n";
  for (const auto& v : doc["versions"]) {
    md << "- **" << v.value("label", "?") << "**: `" << v.value("interpreter", "?") << "` (python "
       << v.value("python", "?") << "), reports in `" << v.value("dir", "?") << "/`";
    if (!v.value("finished", false)) md << " (did not finish)";
    md << "\n";
  }
  md << "\n| scenario |";
  for (const auto& v : doc["versions"]) md << " " << md_cell(v.value("label", "?")) << " |";
  md << " differs |\n|---|";
  for (size_t i = 0; i < doc["versions"].size(); ++i) md << "---|";
  md << "---|\n";
  int differ = 0;
  for (const auto& row : doc["scenarios"]) {
    md << "| " << md_cell(row.value("name", "?")) << " |";
    for (const auto& c : row["cells"]) md << " " << cell_md(c) << " |";
    bool d = row.value("differs", false);
    differ += d;
    md << (d ? " **yes** |" : " |") << "\n";
  }
  md << "\n"
     << differ << " of " << doc["scenarios"].size()
     << " scenario(s) differ in verdict or failed checks between the versions.";
  if (doc["versions"].size() >= 2)
    md << " Every check and timing of two columns: `aftermath diff "
       << doc["versions"][0].value("dir", "A") << "/result.json "
       << doc["versions"][1].value("dir", "B") << "/result.json`.";
  md << "\n";
  return md.str();
}

Expected<std::string> write_versions(const std::vector<VersionRun>& runs, const std::string& out) {
  std::vector<std::optional<RunResult>> results;
  for (const auto& r : runs) {
    std::ifstream in(r.result_path);
    json j = json::parse(in, nullptr, false);
    auto run = j.is_discarded() ? Expected<RunResult>(Error{"not JSON"}) : read_result(j);
    results.push_back(run ? std::optional<RunResult>(std::move(*run)) : std::nullopt);
  }
  json doc = versions_json(runs, results);
  std::string md = render_versions_md(doc);
  if (!write_file(out + "/versions.json", doc.dump(2) + "\n") ||
      !write_file(out + "/versions.md", md))
    return Error{"cannot write versions.json and versions.md under " + out};
  return md;
}

}  // namespace aftermath
