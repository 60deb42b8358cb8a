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

namespace aftermath {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kNoPosition = std::numeric_limits<std::size_t>::max();

// "'hang'", or "'hang' (run 2/5)" for one of several runs (--repeat N).
std::string scenario_label(const ScenarioResult& sc) {
  std::string label = "'" + sc.name + "'";
  if (sc.runs > 1)
    label += " (run " + std::to_string(sc.run_index + 1) + "/" + std::to_string(sc.runs) + ")";
  return label;
}

// An input's "shard" record, when it is whole: its index and count, the
// number of scenarios before slicing, and each of its scenarios' position.
struct ShardRecord {
  long long index = 0, count = 0, total = 0;
  std::map<std::string, std::size_t> position_of;  // by scenario name
};

std::optional<ShardRecord> shard_record(const RunResult& run) {
  if (!run.shard) return std::nullopt;
  const ShardInfo& s = *run.shard;
  ShardRecord r;
  r.index = s.slice.index;
  r.count = s.slice.count;
  r.total = static_cast<long long>(s.total);
  if (r.count < 1 || r.index < 1 || r.index > r.count || s.positions.size() != s.names.size())
    return std::nullopt;
  for (std::size_t i = 0; i < s.positions.size(); ++i) r.position_of[s.names[i]] = s.positions[i];
  return r;
}

std::string shard_text(const ShardRecord& s) {
  return to_string(Shard{static_cast<int>(s.index), static_cast<int>(s.count)});
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
std::optional<fs::path> run_folder(const ScenarioResult& sc) {
  fs::path dir = fs::path(sc.out_dir).lexically_normal();
  if (!dir.is_absolute()) return std::nullopt;
  if (dir.filename().empty()) dir = dir.parent_path();  // a trailing '/'
  if (sc.runs > 1 && dir.filename() == "run-" + std::to_string(sc.run_index + 1))
    dir = dir.parent_path();
  if (dir.filename() != sc.name) return std::nullopt;
  return dir.parent_path();
}

// Every path of a scenario that points into its run's folder.
void rebase_scenario(ScenarioResult& sc, const Rebase& rebase) {
  for (std::string* path : {&sc.out_dir, &sc.stdout_path, &sc.stderr_path}) *path = rebase(*path);
  // A process's own logs are relative to the scenario's out_dir, which moved
  // above; only absolute ones need rewriting.
  for (auto& [key, logs] : sc.process_logs)
    for (std::string* path : {&logs.stdout_path, &logs.stderr_path})
      if (fs::path(*path).is_absolute()) *path = rebase(*path);
  for (NodeResult& n : sc.nodes) n.out_dir = rebase(n.out_dir);
}

// One scenario of the merged run and where it came from.
struct Entry {
  std::size_t input;
  ScenarioResult sc;
  std::size_t position = kNoPosition;  // in the whole run, for shards of one run
};

// The same scenario run in two places is refused, naming both.
Status refuse_duplicates(const std::vector<MergeInput>& inputs, const std::vector<Entry>& entries) {
  std::map<std::pair<std::string, long long>, std::size_t> seen;
  for (const Entry& e : entries) {
    auto [it, fresh] = seen.emplace(std::pair(e.sc.name, e.sc.run_index), e.input);
    if (fresh) continue;
    const std::string& first = inputs[it->second].path;
    const std::string& second = inputs[e.input].path;
    if (it->second == e.input)
      return Error{"scenario " + scenario_label(e.sc) + " is twice in " + first};
    return Error{"scenario " + scenario_label(e.sc) + " is in both " + first + " and " + second};
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
// sentences and in `record` (the merged run's merge record).
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
      who += (who.empty() ? "" : ", ") + scenario_label(e->sc) + " in " + inputs[e->input].path;
    problems.push_back("position " + std::to_string(p) + " is covered twice: " + who);
  }
  std::sort(missing.begin(), missing.end());
  record = {count, total, problems.empty(), missing_shards, missing, repeated, problems};
  return problems;
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

std::map<std::string, std::string> merged_environment(const std::vector<MergeInput>& inputs) {
  std::map<std::string, std::vector<std::string>> values;
  for (const auto& in : inputs)
    for (const auto& [k, v] : in.run.environment) values[k].push_back(v);
  std::map<std::string, std::string> out;
  for (const auto& [k, vs] : values) out[k] = distinct_joined(vs);
  return out;
}

}  // namespace

Expected<MergedRun> merge_runs(const std::vector<MergeInput>& inputs, const std::string& out_dir,
                               const std::string& command_line) {
  fs::path out = fs::path(out_dir).lexically_normal();
  if (out.filename().empty()) out = out.parent_path();  // "/x/all/" is "/x/all"
  std::vector<std::optional<ShardRecord>> shards;
  for (const auto& in : inputs) shards.push_back(shard_record(in.run));
  // Shards of one run: every input a shard, all of the same count and total.
  const bool one_run =
      !inputs.empty() && std::all_of(shards.begin(), shards.end(), [&](const auto& s) {
        return s && s->count == shards[0]->count && s->total == shards[0]->total;
      });

  std::vector<Entry> entries;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    for (const ScenarioResult& sc : inputs[i].run.scenarios) {
      Entry e{i, sc};
      if (one_run) {
        auto it = shards[i]->position_of.find(sc.name);
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
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const RunResult& in = inputs[i].run;
    const fs::path file = fs::path(inputs[i].file).lexically_normal();
    const fs::path rel = file.lexically_relative(out);
    record.inputs.push_back({rel.empty() ? file.string() : rel.string(), in.scenarios.size(),
                             shards[i] ? std::optional(in.shard->slice) : std::nullopt,
                             in.command_line, in.tool_version});
    tool_versions.push_back(in.tool_version);
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

  RunResult& run = merged.run;
  bool repeated = false;
  for (Entry& e : entries) {
    repeated = repeated || e.sc.runs > 1;
    const fs::path now = fs::path(inputs[e.input].file).lexically_normal().parent_path();
    rebase_scenario(e.sc, Rebase(now, run_folder(e.sc), out));
    run.scenarios.push_back(std::move(e.sc));
  }
  for (const auto& in : inputs) repeated = repeated || !in.run.aggregates.empty();
  run.tool_version = distinct_joined(tool_versions);
  run.command_line = command_line;
  run.environment = merged_environment(inputs);
  if (repeated) run.aggregates = aggregate(run.scenarios);
  run.merge = std::move(record);
  return merged;
}

}  // namespace aftermath
