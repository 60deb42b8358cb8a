#include "harness/cli/report_cmd.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "harness/os/expected.h"
#include "reports/diff.h"
#include "reports/merge_runs.h"
#include "reports/repeat_view.h"
#include "reports/result_read.h"
#include "reports/write_reports.h"

namespace aftermath {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A result.json document read as the run's types; the error is "<name>: <why>".
// Every field is read: a field of the wrong type, a word no version wrote or a
// newer schema is named here, not rendered as "unknown".
Expected<RunResult> typed(const json& j, const std::string& name) {
  // A JSON file that is not a result document would render as an empty
  // report and look like "nothing ran"; refuse it instead.
  if (!j.is_object() || !j.contains("scenarios") || !j["scenarios"].is_array())
    return Error{name + ": not an aftermath result.json (no \"scenarios\" list)"};
  auto run = read_result(j);
  if (!run) return Error{name + ": " + run.error().what};
  return std::move(*run);
}

// Loads, parses and reads a result.json; the error is "<path>: <why>".
Expected<RunResult> load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Error{path + ": cannot read the file"};
  std::stringstream ss;
  ss << f.rdbuf();
  json j = json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error{path + ": not valid JSON"};
  return typed(j, path);
}

// load(), or its error printed as "aftermath CMD: ..."; nullopt then.
std::optional<RunResult> load_or_say(const char* cmd, const std::string& path) {
  auto l = load(path);
  if (!l) {
    std::fprintf(stderr, "aftermath %s: %s\n", cmd, l.error().what.c_str());
    return std::nullopt;
  }
  return std::move(*l);
}

// Writes the report files and names each on stdout; false (and why, on
// stderr, after "aftermath CMD: ") when any cannot be written.
bool write_and_name(const RunResult& run, const fs::path& dir, bool with_result, const char* cmd) {
  auto written = write_reports(run, dir.string(), with_result);
  if (!written) {
    std::fprintf(stderr, "aftermath %s: %s\n", cmd, written.error().what.c_str());
    return false;
  }
  for (const auto& path : *written) std::printf("%s\n", path.c_str());
  return true;
}

// The merge's inputs read: a folder holding result.json, or a result.json.
// Every bad one is named on stderr; nullopt then.
std::optional<std::vector<MergeInput>> read_merge_inputs(const std::vector<std::string>& names) {
  std::vector<MergeInput> inputs;
  // Each result.json read, by absolute path: the name it was given as.
  std::map<std::string, std::string> given;
  bool ok = true;
  for (const auto& name : names) {
    std::error_code ec;
    std::string path = name;
    if (fs::is_directory(name, ec)) {
      path = (name.size() > 1 && name.back() == '/' ? name.substr(0, name.size() - 1) : name) +
             "/result.json";
      if (!fs::exists(path, ec)) {
        std::fprintf(stderr, "aftermath merge: %s: no result.json in this folder\n", name.c_str());
        ok = false;
        continue;
      }
    } else if (!fs::exists(name, ec)) {
      std::fprintf(stderr, "aftermath merge: %s: no such file or folder\n", name.c_str());
      ok = false;
      continue;
    }
    const std::string file = fs::absolute(path, ec).lexically_normal().string();
    if (auto same = given.find(file); same != given.end()) {
      std::fprintf(stderr, "aftermath merge: %s: the same result.json as %s, given twice\n",
                   name.c_str(), same->second.c_str());
      ok = false;
      continue;
    }
    given.emplace(file, name);
    auto run = load_or_say("merge", path);
    if (!run) {
      ok = false;
      continue;
    }
    inputs.push_back({path, file, std::move(*run)});
  }
  if (!ok) return std::nullopt;
  return inputs;
}

// "4 scenarios (2 pass, 1 xfail, 1 fail)".
std::string counts_text(const RunResult& run) {
  const std::string counts = report::counts_text(report::verdict_counts(run));
  std::size_t n = run.scenarios.size();
  return std::to_string(n) + (n == 1 ? " scenario" : " scenarios") +
         (counts.empty() ? "" : " (" + counts + ")");
}

}  // namespace

int cmd_report(const std::string& result_path, const std::string& out_dir) {
  auto result = load_or_say("report", result_path);
  if (!result) return 2;
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  fs::path dir = fs::absolute(out_dir, ec);
  if (ec || !fs::is_directory(dir)) {
    std::fprintf(stderr, "aftermath report: %s: cannot create the folder\n", out_dir.c_str());
    return 1;
  }
  return write_and_name(*result, dir, false, "report") ? 0 : 1;
}

int cmd_merge(const std::vector<std::string>& input_names, const std::string& out_dir,
              const std::string& command_line) {
  auto inputs = read_merge_inputs(input_names);
  if (!inputs) {
    std::fprintf(stderr, "aftermath merge: nothing was written\n");
    return 2;
  }
  std::error_code ec;
  fs::path dir = fs::absolute(out_dir, ec).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();
  // Merging into an input's own folder would overwrite what is being merged.
  for (const auto& in : *inputs) {
    if (fs::path(in.file) == dir / "result.json") {
      std::fprintf(stderr,
                   "aftermath merge: --out %s: holds the input %s; merge into another folder\n"
                   "aftermath merge: nothing was written\n",
                   out_dir.c_str(), in.path.c_str());
      return 2;
    }
  }
  auto merged = merge_runs(*inputs, dir.string(), command_line);
  if (!merged) {
    std::fprintf(stderr, "aftermath merge: %s\naftermath merge: nothing was written\n",
                 merged.error().what.c_str());
    return 2;
  }
  const RunResult* run = &merged->run;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    std::fprintf(stderr, "aftermath merge: %s: cannot create the folder\n", out_dir.c_str());
    return 1;
  }
  bool ok = write_and_name(*run, dir, true, "merge");
  for (const auto& note : merged->notes)
    std::fprintf(stderr, "aftermath merge: note: %s\n", note.c_str());
  for (const auto& why : merged->incomplete)
    std::fprintf(stderr, "aftermath merge: incomplete: %s\n", why.c_str());
  std::printf("aftermath merge: %s from %zu input(s)%s\n", counts_text(*run).c_str(),
              inputs->size(), merged->incomplete.empty() ? "" : "; incomplete: see above");
  std::printf("reports: %s/{result.json, junit.xml, report.html, trace.json, summary.md}\n",
              dir.c_str());
  if (!ok || !merged->incomplete.empty()) return 1;
  for (const auto& sc : run->scenarios)
    if (sc.verdict != Verdict::Pass && sc.verdict != Verdict::XFail &&
        sc.verdict != Verdict::Skipped)
      return 1;
  return 0;
}

int cmd_diff(const std::string& a_path, const std::string& b_path) {
  auto a = load_or_say("diff", a_path);
  auto b = load_or_say("diff", b_path);
  if (!a || !b) return 2;
  std::printf("a: %s\nb: %s\n", a_path.c_str(), b_path.c_str());
  std::fputs(render_diff(*a, *b).c_str(), stdout);
  return runs_differ(*a, *b) ? 1 : 0;
}

}  // namespace aftermath
