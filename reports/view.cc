#include "reports/view.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "harness/core/result.h"

namespace aftermath::report {

namespace {

// Percent-encodes a filesystem path for an href: everything but unreserved
// characters and '/' is encoded, so '#', '?', '%' and spaces in a folder name
// cannot change what the link points at.
std::string url_path(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace

std::string format_ms(std::optional<double> ms) {
  if (!ms) return "-";
  char buf[48];
  if (std::fabs(*ms) >= 1000) {
    std::snprintf(buf, sizeof buf, "%.2f s", *ms / 1000);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f ms", *ms);
  }
  return buf;
}

std::string format_bytes(double bytes) {
  static constexpr std::array<const char*, 5> kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t unit = 0;
  double v = bytes;
  while (std::fabs(v) >= 1024 && unit + 1 < kUnits.size()) {
    v /= 1024;
    ++unit;
  }
  char buf[48];
  if (unit == 0) {
    std::snprintf(buf, sizeof buf, "%.0f B", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
  }
  return buf;
}

std::string format_number(double v, int max_decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", max_decimals, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

bool verdict_ok(Verdict v) { return v == Verdict::Pass || v == Verdict::XFail; }

bool check_failed(CheckStatus s) { return s == CheckStatus::Fail || s == CheckStatus::Error; }

std::string last_lines(std::string_view text, size_t n) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") != std::string_view::npos) lines.push_back(line);
    start = end + 1;
  }
  std::string out;
  for (size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i)
    out += std::string(lines[i]) + "\n";
  return out;
}

int role_rank(std::string_view role) {
  if (role == "launcher") return 0;
  if (role == "rank") return 1;
  if (role == "worker") return 2;
  if (role == "helper") return 3;
  if (role == "unknown" || role.empty()) return 5;
  return 4;
}

namespace {

// When it stopped running (view.h's life_end_ms), from the times already set.
void set_life_end(ProcessView& v) {
  if (v.exited_ms && v.zombie_since_ms) {
    v.life_end_ms = std::min(*v.exited_ms, *v.zombie_since_ms);
  } else if (v.exited_ms || v.zombie_since_ms) {
    v.life_end_ms = v.exited_ms ? v.exited_ms : v.zombie_since_ms;
  } else {
    v.life_end_ms = v.gone_ms;
  }
  // A clock glitch must not draw a bar that ends before it starts.
  if (v.life_end_ms && *v.life_end_ms < v.start_ms) v.life_end_ms = v.start_ms;
}

// A multi-node run's lanes come node by node, each node's by role.
void sort_by_role(std::vector<ProcessView>& out) {
  std::stable_sort(out.begin(), out.end(), [](const ProcessView& a, const ProcessView& b) {
    if (a.node != b.node) return a.node.value_or(-1) < b.node.value_or(-1);
    int ra = role_rank(a.role), rb = role_rank(b.role);
    if (ra != rb) return ra < rb;
    if (a.role != b.role) return a.role < b.role;
    if (a.start_ms != b.start_ms) return a.start_ms < b.start_ms;
    return a.pid < b.pid;
  });
}

std::optional<double> ms_of(const std::optional<Nanos>& t) {
  return t ? std::optional<double>(to_ms(*t)) : std::nullopt;
}

}  // namespace

std::vector<ProcessView> processes_by_role(const ScenarioResult& scenario) {
  std::vector<ProcessView> out;
  for (const ProcessHistory& p : scenario.processes) {
    ProcessView v;
    v.history = &p;
    v.pid = p.pid;
    v.ppid = p.first_ppid;
    v.last_ppid = p.last_ppid;
    if (p.job_pid > 0 && p.job_pid != p.pid) v.job_pid = p.job_pid;
    v.role = std::string(to_string(p.role));
    v.comm = p.comm;
    v.cmdline = p.cmdline;
    v.top = p.is_top;
    if (p.node >= 0) v.node = p.node;
    if (p.rank >= 0) v.rank = p.rank;
    if (p.worker >= 0) v.worker = p.worker;
    v.start_ms = to_ms(p.started);
    v.exited_ms = ms_of(p.exited_at);
    v.gone_ms = ms_of(p.gone_at);
    v.orphaned_ms = ms_of(p.orphaned_at);
    v.zombie_since_ms = ms_of(p.zombie_since);
    set_life_end(v);
    if (p.outcome) v.outcome = p.outcome->to_string();
    if (auto logs = scenario.process_logs.find(aftermath::process_key(p.node, p.pid));
        logs != scenario.process_logs.end()) {
      v.log_stdout = logs->second.stdout_path;
      v.log_stderr = logs->second.stderr_path;
    }
    out.push_back(std::move(v));
  }
  sort_by_role(out);
  return out;
}

std::string pid_text(const ProcessView& p) {
  std::string s = std::to_string(p.pid);
  if (p.job_pid) s += " (" + std::to_string(*p.job_pid) + " in the job)";
  return s;
}

std::string scenario_file(const ScenarioResult& scenario, const std::string& path) {
  if (path.empty() || path.front() == '/' || scenario.out_dir.empty()) return path;
  const std::string& dir = scenario.out_dir;
  return dir.back() == '/' ? dir + path : dir + "/" + path;
}

std::optional<double> timing_ms(const ScenarioResult& scenario, const std::string& key) {
  auto it = scenario.timings_ms.find(key);
  return it == scenario.timings_ms.end() ? std::nullopt : it->second;
}

double scenario_end_ms(const ScenarioResult& scenario) {
  double end = timing_ms(scenario, "total_ms").value_or(0);
  for (const Observation& o : scenario.timeline.observations) end = std::max(end, to_ms(o.t));
  for (const ProcessHistory& p : scenario.processes)
    for (const auto& t :
         {std::optional<Nanos>(p.started), p.exited_at, p.gone_at, p.orphaned_at, p.zombie_since})
      if (t) end = std::max(end, to_ms(*t));
  for (const FaultRecord& f : scenario.timeline.facts.faults)
    for (const auto& t : {f.sent, f.effect})
      if (t) end = std::max(end, to_ms(*t));
  return std::max(end, 1.0);
}

namespace {

// The documented keys that are present first, then the rest in the given
// (alphabetical) order.
std::vector<std::string> ordered_timing_keys(const std::vector<std::string>& present) {
  static constexpr std::array<const char*, 6> kKnown = {"job_ms",         "to_all_exited_ms",
                                                        "to_all_gone_ms", "to_shm_baseline_ms",
                                                        "teardown_ms",    "total_ms"};
  std::vector<std::string> out;
  for (const char* k : kKnown) {
    if (std::find(present.begin(), present.end(), k) != present.end()) out.emplace_back(k);
  }
  for (const auto& k : present) {
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  }
  return out;
}

}  // namespace

std::vector<std::string> timing_keys(const std::map<std::string, std::optional<double>>& timings) {
  std::vector<std::string> present;
  for (const auto& [k, v] : timings) present.push_back(k);
  return ordered_timing_keys(present);
}

std::vector<std::string> merge_gaps(const RunResult& run) {
  std::vector<std::string> out;
  if (!run.merge || !run.merge->shards || run.merge->shards->complete) return out;
  out = run.merge->shards->incomplete;
  if (out.empty()) out.push_back("some shards or positions are missing");
  return out;
}

std::vector<std::string> failed_checks(const ScenarioResult& scenario) {
  std::vector<std::string> out;
  for (const CheckResult& c : scenario.checks)
    if (check_failed(c.status)) out.push_back(c.name);
  return out;
}

std::string log_href(const std::string& path, const std::string& report_dir) {
  namespace fs = std::filesystem;
  fs::path p(path);
  if (!report_dir.empty() && p.is_absolute()) {
    fs::path base = fs::path(report_dir).lexically_normal();
    fs::path rel = p.lexically_normal().lexically_relative(base);
    if (!rel.empty() && *rel.begin() != "..") return url_path(rel.string());
  }
  if (p.is_absolute()) return "file://" + url_path(p.lexically_normal().string());
  return url_path(path);
}

}  // namespace aftermath::report
