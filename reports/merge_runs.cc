#include "reports/merge_runs.h"

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "harness/core/repeat_stats.h"
#include "harness/core/result.h"
#include "reports/json.h"
#include "reports/view.h"

namespace aftermath {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using report::items;
using report::member;
using report::opt_int;
using report::str;

constexpr std::size_t kNoPosition = std::numeric_limits<std::size_t>::max();

// Which of its scenario's runs a scenario document is ("run" and "runs",
// written with --repeat N); 1 of 1 without them.
struct RunOf {
  long long run = 1, runs = 1;
  explicit RunOf(const json& sc)
      : run(opt_int(sc, "run").value_or(1)), runs(opt_int(sc, "runs").value_or(1)) {}
};

// "'hang'", or "'hang' (run 2/5)" for one of several runs.
std::string scenario_label(const json& sc) {
  const RunOf r(sc);
  std::string label = "'" + str(sc, "name", "?") + "'";
  if (r.runs > 1) label += " (run " + std::to_string(r.run) + "/" + std::to_string(r.runs) + ")";
  return label;
}

// An input's "shard" record, when it is whole: its index and count, the
// number of scenarios before slicing, and each of its scenarios' position.
struct ShardRecord {
  long long index = 0, count = 0, total = 0;
  std::map<std::string, std::size_t> position_of;  // by scenario name
};

std::optional<ShardRecord> shard_record(const json& doc) {
  const json& s = member(doc, "shard");
  ShardRecord r;
  r.index = opt_int(s, "index").value_or(0);
  r.count = opt_int(s, "count").value_or(0);
  r.total = opt_int(s, "total").value_or(-1);
  auto positions = items(s, "positions"), names = items(s, "names");
  if (r.count < 1 || r.index < 1 || r.index > r.count || r.total < 0 ||
      positions.size() != names.size())
    return std::nullopt;
  for (std::size_t i = 0; i < positions.size(); ++i) {
    if (!positions[i]->is_number_integer() || positions[i]->get<long long>() < 0 ||
        !names[i]->is_string())
      return std::nullopt;
    r.position_of[names[i]->get<std::string>()] = positions[i]->get<std::size_t>();
  }
  return r;
}

std::string shard_text(const ShardRecord& s) {
  return std::to_string(s.index) + "/" + std::to_string(s.count);
}

// Rewrites one scenario's paths from the folder its run wrote to (`then`,
// when known) and the folder that run's result.json is in now (`now`) to
// paths that resolve from the merged report's folder (`out`).
class Rebase {
 public:
  Rebase(fs::path now, std::optional<fs::path> then, fs::path out)
      : now_(std::move(now)), then_(std::move(then)), out_(std::move(out)) {}

  // A relative path was relative to the run's folder; an absolute one under
  // the folder the run wrote to moved with it; any other absolute path (the
  // job's own files elsewhere) is left as it is. The result is relative to
  // `out` (so the merged folder and the shards' folders can move together),
  // absolute where no relative path reaches it.
  std::string operator()(const std::string& text) const {
    if (text.empty()) return text;
    fs::path p(text), now_path;
    if (p.is_relative()) {
      now_path = now_ / p;
    } else if (then_) {
      fs::path rel = p.lexically_normal().lexically_relative(*then_);
      if (rel.empty() || *rel.begin() == "..") return text;
      now_path = now_ / rel;
    } else {
      return text;
    }
    now_path = now_path.lexically_normal();
    fs::path rel = now_path.lexically_relative(out_);
    return rel.empty() ? now_path.string() : rel.string();
  }

 private:
  fs::path now_;
  std::optional<fs::path> then_;
  fs::path out_;
};

// The folder a scenario's run wrote its reports to: the runner puts a
// scenario's files in <folder>/<name>, or <folder>/<name>/run-<i> for one of
// several runs (supervise/runner.cc); nullopt when out_dir is not so.
std::optional<fs::path> run_folder(const json& sc) {
  fs::path dir = fs::path(str(sc, "out_dir")).lexically_normal();
  if (!dir.is_absolute()) return std::nullopt;
  if (dir.filename().empty()) dir = dir.parent_path();  // a trailing '/'
  const RunOf r(sc);
  if (r.runs > 1 && dir.filename() == "run-" + std::to_string(r.run)) dir = dir.parent_path();
  if (dir.filename() != str(sc, "name")) return std::nullopt;
  return dir.parent_path();
}

void rebase_member(json& j, const char* key, const Rebase& rebase, bool only_absolute = false) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return;
  const std::string path = j[key].get<std::string>();
  if (only_absolute && !fs::path(path).is_absolute()) return;
  j[key] = rebase(path);
}

// Every path of a scenario document that points into its run's folder.
void rebase_scenario(json& sc, const Rebase& rebase) {
  rebase_member(sc, "out_dir", rebase);
  rebase_member(sc, "stdout_path", rebase);
  rebase_member(sc, "stderr_path", rebase);
  // A process's own logs are relative to the scenario's out_dir, which moved
  // above; only absolute ones need rewriting.
  if (sc.contains("processes") && sc["processes"].is_array())
    for (json& p : sc["processes"])
      if (p.is_object() && p.contains("logs")) {
        rebase_member(p["logs"], "stdout", rebase, true);
        rebase_member(p["logs"], "stderr", rebase, true);
      }
  if (sc.contains("nodes") && sc["nodes"].is_array())
    for (json& n : sc["nodes"]) rebase_member(n, "out_dir", rebase);
}

// One scenario of the merged run and where it came from.
struct Entry {
  std::size_t input;
  json doc;
  std::size_t position = kNoPosition;  // in the whole run, for shards of one run
};

// The same scenario run in two places is refused, naming both.
Status refuse_duplicates(const std::vector<MergeInput>& inputs, const std::vector<Entry>& entries) {
  std::map<std::pair<std::string, long long>, std::size_t> seen;
  for (const Entry& e : entries) {
    auto [it, fresh] = seen.emplace(std::pair(str(e.doc, "name", "?"), RunOf(e.doc).run), e.input);
    if (fresh) continue;
    const std::string& first = inputs[it->second].path;
    const std::string& second = inputs[e.input].path;
    if (it->second == e.input)
      return Error{"scenario " + scenario_label(e.doc) + " is twice in " + first};
    return Error{"scenario " + scenario_label(e.doc) + " is in both " + first + " and " + second};
  }
  return {};
}

// "1, 5, 9" with at most `max` numbers shown.
std::string positions_text(const std::vector<std::size_t>& ps, std::size_t max = 10) {
  std::string out;
  for (std::size_t i = 0; i < ps.size() && i < max; ++i)
    out += (i ? ", " : "") + std::to_string(ps[i]);
  if (ps.size() > max) out += " and " + std::to_string(ps.size() - max) + " more";
  return out;
}

// Shards of one run: which positions are missing or covered twice, in
// sentences and in `record` (the merged document's "merge").
std::vector<std::string> completeness(const std::vector<MergeInput>& inputs,
                                      const std::vector<std::optional<ShardRecord>>& shards,
                                      const std::vector<Entry>& entries,
                                      MergeRecord::Coverage& record) {
  const long long count = shards[0]->count, total = shards[0]->total;
  std::map<long long, std::vector<std::size_t>> inputs_of_shard;
  for (std::size_t i = 0; i < shards.size(); ++i) inputs_of_shard[shards[i]->index].push_back(i);
  // Each position's scenarios, one per input (an input's repeated runs count once).
  std::map<std::size_t, std::vector<const Entry*>> at;
  for (const Entry& e : entries) {
    if (e.position >= static_cast<std::size_t>(total)) continue;
    auto& here = at[e.position];
    if (std::none_of(here.begin(), here.end(), [&](const Entry* o) { return o->input == e.input; }))
      here.push_back(&e);
  }
  std::vector<std::string> problems;
  std::vector<long long> missing_shards;
  std::vector<std::size_t> missing, repeated;
  for (long long k = 1; k <= count; ++k) {
    // The positions shard k runs (every count-th from k-1), the ones nothing covers.
    std::vector<std::size_t> gaps;
    for (long long p = k - 1; p < total; p += count)
      if (!at.count(static_cast<std::size_t>(p))) gaps.push_back(static_cast<std::size_t>(p));
    missing.insert(missing.end(), gaps.begin(), gaps.end());
    const std::string name = std::to_string(k) + "/" + std::to_string(count);
    if (k - 1 >= total) continue;  // an empty shard: nothing to miss
    if (!inputs_of_shard.count(k)) {
      missing_shards.push_back(k);
      problems.push_back("shard " + name + " is missing: positions " + positions_text(gaps) +
                         " (of " + std::to_string(total) + ", from 0) did not run");
    } else if (!gaps.empty()) {
      problems.push_back("shard " + name + " (" + inputs[inputs_of_shard[k][0]].path +
                         ") lacks positions " + positions_text(gaps) +
                         ": its run ended before them");
    }
  }
  for (const auto& [p, here] : at) {
    if (here.size() < 2) continue;
    repeated.push_back(p);
    std::string who;
    for (const Entry* e : here)
      who += (who.empty() ? "" : ", ") + scenario_label(e->doc) + " in " + inputs[e->input].path;
    problems.push_back("position " + std::to_string(p) + " is covered twice: " + who);
  }
  std::sort(missing.begin(), missing.end());
  record = {count, total, problems.empty(), missing_shards, missing, repeated, problems};
  return problems;
}

template <typename Enum, std::size_t N>
Enum parse_enum(const std::string& text, const Enum (&all)[N], Enum fallback) {
  for (Enum e : all)
    if (to_string(e) == text) return e;
  return fallback;
}

// What aggregate() reads of a scenario, from its document. A verdict this
// version does not know counts as an error: failed, never passed.
ScenarioResult repeat_facts(const json& sc) {
  static constexpr Verdict kVerdicts[] = {Verdict::Pass,  Verdict::Fail,  Verdict::XFail,
                                          Verdict::XPass, Verdict::Error, Verdict::Skipped};
  static constexpr CheckStatus kStatuses[] = {CheckStatus::Pass, CheckStatus::Fail,
                                              CheckStatus::Skipped, CheckStatus::Error};
  ScenarioResult r;
  const RunOf run(sc);
  r.name = str(sc, "name", "?");
  r.expect = str(sc, "expect", "pass");
  r.verdict = parse_enum(str(sc, "verdict"), kVerdicts, Verdict::Error);
  r.run_index = static_cast<int>(run.run - 1);
  r.runs = static_cast<int>(run.runs);
  for (const json* c : items(sc, "checks")) {
    CheckResult check;
    check.name = str(*c, "name", "?");
    check.status = parse_enum(str(*c, "status"), kStatuses, CheckStatus::Error);
    r.checks.push_back(std::move(check));
  }
  const json& timings = member(sc, "timings_ms");
  if (timings.is_object())
    for (const auto& [k, v] : timings.items())
      r.timings_ms[k] = v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt;
  return r;
}

// The inputs' distinct values of one text, in input order, ", "-joined.
std::string distinct_joined(const std::vector<std::string>& values) {
  std::vector<std::string> seen;
  for (const auto& v : values)
    if (!v.empty() && std::find(seen.begin(), seen.end(), v) == seen.end()) seen.push_back(v);
  std::string out;
  for (const auto& v : seen) out += (out.empty() ? "" : ", ") + v;
  return out;
}

json merged_environment(const std::vector<MergeInput>& inputs) {
  std::map<std::string, std::vector<std::string>> values;
  for (const auto& in : inputs) {
    const json& env = member(in.doc, "environment");
    if (!env.is_object()) continue;
    for (const auto& [k, v] : env.items())
      values[k].push_back(v.is_string() ? v.get<std::string>() : v.dump());
  }
  json out = json::object();
  for (const auto& [k, vs] : values) out[k] = distinct_joined(vs);
  return out;
}

}  // namespace

Expected<MergedRun> merge_runs(const std::vector<MergeInput>& inputs, const std::string& out_dir,
                               const std::string& command_line) {
  fs::path out = fs::path(out_dir).lexically_normal();
  if (out.filename().empty()) out = out.parent_path();  // "/x/all/" is "/x/all"
  std::vector<std::optional<ShardRecord>> shards;
  for (const auto& in : inputs) shards.push_back(shard_record(in.doc));
  // Shards of one run: every input a shard, all of the same count and total.
  const bool one_run =
      !inputs.empty() && std::all_of(shards.begin(), shards.end(), [&](const auto& s) {
        return s && s->count == shards[0]->count && s->total == shards[0]->total;
      });

  std::vector<Entry> entries;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    for (const json* sc : items(inputs[i].doc, "scenarios")) {
      Entry e{i, *sc};
      if (one_run) {
        auto it = shards[i]->position_of.find(str(*sc, "name"));
        if (it != shards[i]->position_of.end()) e.position = it->second;
      }
      entries.push_back(std::move(e));
    }
  }
  if (Status s = refuse_duplicates(inputs, entries); !s) return s.error();
  // Back to the whole run's order; an input's repeated runs keep theirs.
  if (one_run)
    std::stable_sort(entries.begin(), entries.end(),
                     [](const Entry& a, const Entry& b) { return a.position < b.position; });

  MergedRun merged;
  MergeRecord record;
  std::vector<std::string> tool_versions;
  long long schema_version = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const json& doc = inputs[i].doc;
    const fs::path file = fs::path(inputs[i].file).lexically_normal();
    const fs::path rel = file.lexically_relative(out);
    record.inputs.push_back({rel.empty() ? file.string() : rel.string(),
                             items(doc, "scenarios").size(),
                             shards[i] ? std::optional(shard_text(*shards[i])) : std::nullopt,
                             str(doc, "command_line"), str(doc, "tool_version")});
    tool_versions.push_back(str(doc, "tool_version"));
    schema_version = std::max(schema_version, opt_int(doc, "schema_version").value_or(0));
  }
  if (one_run) {
    record.shards.emplace();
    merged.incomplete = completeness(inputs, shards, entries, *record.shards);
  } else if (std::any_of(shards.begin(), shards.end(),
                         [](const auto& s) { return s.has_value(); })) {
    std::string which;
    for (std::size_t i = 0; i < inputs.size(); ++i)
      which +=
          (which.empty() ? "" : ", ") + inputs[i].path + ": " +
          (shards[i] ? "shard " + shard_text(*shards[i]) + " of " + std::to_string(shards[i]->total)
                     : std::string("not a shard"));
    merged.notes.push_back("the inputs are not the shards of one run (" + which +
                           "): kept in input order, completeness not checked");
  }

  json summary = empty_summary(entries.size());
  json scenarios = json::array();
  bool repeated = false;
  for (Entry& e : entries) {
    const std::string verdict = str(e.doc, "verdict", "error");
    summary[verdict] = opt_int(summary, verdict).value_or(0) + 1;
    repeated = repeated || RunOf(e.doc).runs > 1;
    const fs::path now = fs::path(inputs[e.input].file).lexically_normal().parent_path();
    rebase_scenario(e.doc, Rebase(now, run_folder(e.doc), out));
    scenarios.push_back(std::move(e.doc));
  }
  for (const auto& in : inputs) repeated = repeated || !items(in.doc, "aggregates").empty();

  static const json kNone;
  const json& first = inputs.empty() ? kNone : inputs[0].doc;
  json& result = merged.result;
  result = {{"schema", str(first, "schema", "aftermath/result")},
            {"schema_version", schema_version > 0 ? schema_version : kResultSchemaVersion},
            {"tool_version", distinct_joined(tool_versions)},
            {"command_line", command_line},
            {"environment", merged_environment(inputs)},
            {"summary", std::move(summary)},
            {"scenarios", std::move(scenarios)}};
  if (repeated) {
    std::vector<ScenarioResult> facts;
    for (const json* sc : items(result, "scenarios")) facts.push_back(repeat_facts(*sc));
    json aggs = json::array();
    for (const auto& a : aggregate(facts)) aggs.push_back(to_json(a));
    result["aggregates"] = std::move(aggs);
  }
  result["merge"] = to_json(record);
  return merged;
}

}  // namespace aftermath
