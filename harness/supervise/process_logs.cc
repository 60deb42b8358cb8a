#include "harness/supervise/process_logs.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

namespace aftermath {

namespace {

// A path for result.json: relative to out_dir when inside it.
std::string relative_to(const std::string& path, const std::string& out_dir) {
  namespace fs = std::filesystem;
  fs::path p = fs::path(path).lexically_normal();
  fs::path rel = p.lexically_relative(fs::path(out_dir).lexically_normal());
  if (!rel.empty() && *rel.begin() != "..") return rel.string();
  return p.string();
}

std::string field_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  return {};
}

}  // namespace

std::map<int, ScenarioResult::ProcessLogs> find_process_logs(
    const Timeline& tl, const std::vector<ProcessHistory>& procs, const std::string& out_dir) {
  namespace fs = std::filesystem;
  std::map<int, ScenarioResult::ProcessLogs> out;
  std::set<int> job;
  for (const auto& p : procs) job.insert(p.pid);
  auto set = [&](int pid, const std::string& path, bool is_out) {
    std::error_code ec;
    if (path.empty() || !fs::is_regular_file(path, ec)) return;
    auto& l = out[pid];
    (is_out ? l.stdout_path : l.stderr_path) = relative_to(path, out_dir);
  };
  for (const auto& ev : tl.observations) {
    const auto* e = event_named(ev, "aftermath.logs");
    if (!e || !job.count(e->pid)) continue;
    auto j = nlohmann::json::parse(e->fields_json, nullptr, false);
    if (!j.is_object()) continue;
    // The latest report wins: a process that announced again has new files.
    set(e->pid, field_text(j.value("out", nlohmann::json())), true);
    set(e->pid, field_text(j.value("err", nlohmann::json())), false);
  }
  // Pids in file names are the job's own; they are ours only without a PID namespace.
  if (tl.facts.containment == JobContainment::Subreaper) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(out_dir + "/logs", ec)) {
      std::string name = e.path().filename().string();
      bool is_out = name.size() > 4 && name.compare(name.size() - 4, 4, ".out") == 0;
      bool is_err = name.size() > 4 && name.compare(name.size() - 4, 4, ".err") == 0;
      if (!is_out && !is_err) continue;
      std::string stem = name.substr(0, name.size() - 4);
      auto dash = stem.rfind('-');
      if (dash == std::string::npos || dash + 1 >= stem.size() ||
          stem.find_first_not_of("0123456789", dash + 1) != std::string::npos)
        continue;
      int pid = std::atoi(stem.c_str() + dash + 1);
      if (!job.count(pid)) continue;
      auto it = out.find(pid);
      if (it != out.end() && !(is_out ? it->second.stdout_path : it->second.stderr_path).empty())
        continue;
      set(pid, e.path().string(), is_out);
    }
  }
  return out;
}

namespace {

// The last max_bytes of a file ("" when unreadable).
std::string file_tail(const std::string& path, std::size_t max_bytes) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return {};
  std::streamoff size = f.tellg();
  std::streamoff from = size > static_cast<std::streamoff>(max_bytes)
                            ? size - static_cast<std::streamoff>(max_bytes)
                            : 0;
  f.seekg(from);
  std::string out(static_cast<std::size_t>(size - from), '\0');
  f.read(out.data(), static_cast<std::streamsize>(out.size()));
  out.resize(static_cast<std::size_t>(f.gcount()));
  return out;
}

}  // namespace

void merge_process_output(Timeline& tl, const std::vector<ProcessHistory>& procs,
                          const std::map<int, ScenarioResult::ProcessLogs>& logs,
                          const std::string& out_dir) {
  if (logs.empty()) return;
  std::vector<const ProcessHistory*> order;
  for (const auto& p : procs)
    if (logs.count(p.pid)) order.push_back(&p);
  std::stable_sort(order.begin(), order.end(),
                   [](const ProcessHistory* a, const ProcessHistory* b) {
                     if (a->is_top != b->is_top) return b->is_top;
                     if (a->depth != b->depth) return a->depth > b->depth;
                     if (a->started != b->started) return a->started < b->started;
                     return a->pid < b->pid;
                   });
  auto full = [&](const std::string& path) {
    return !path.empty() && path.front() == '/' ? path : out_dir + "/" + path;
  };
  auto append = [](std::string& text, std::string more) {
    if (more.empty()) return;
    if (!text.empty() && text.back() != '\n') text += '\n';
    text += more;
  };
  for (const ProcessHistory* p : order) {
    const auto& l = logs.at(p->pid);
    if (!l.stdout_path.empty())
      append(tl.facts.stdout_text, file_tail(full(l.stdout_path), kJobOutputBytes));
    if (!l.stderr_path.empty())
      append(tl.facts.stderr_text, file_tail(full(l.stderr_path), kJobOutputBytes));
  }
  for (std::string* text : {&tl.facts.stdout_text, &tl.facts.stderr_text})
    if (text->size() > kJobOutputBytes) text->erase(0, text->size() - kJobOutputBytes);
}

}  // namespace aftermath
