#include "harness/supervise/runner.h"

#include <gnu/libc-version.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <atomic>
#include <cmath>
#include <mutex>
#include <random>
#include <regex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "harness/check/checks.h"
#include "harness/observe/requirements_probe.h"

namespace aftermath {

std::string fnv1a_hex(std::string_view text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string shell_quote(const std::string& a) {
  if (!a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789_-./=:,+@%") == std::string::npos)
    return a;
  std::string out = "'";
  for (char c : a) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

namespace {

std::string iso_now() {
  auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::uint64_t random_seed() {
  std::random_device rd;
  return (std::uint64_t(rd()) << 32 | rd()) & 0x7fffffffffffffffull;
}

std::string repro_line(const Scenario& sc, const RunOptions& o, std::uint64_t seed) {
  std::string s = shell_quote(o.self_path.empty() ? "aftermath" : o.self_path) + " run --seed " +
                  std::to_string(seed);
  if (o.timeout) s += " --timeout " + format_duration(*o.timeout);
  if (!o.grace_text.empty()) s += " --grace " + shell_quote(o.grace_text);
  if (o.settle) s += " --settle " + format_duration(*o.settle);
  if (o.containment != "auto") s += " --contain " + o.containment;
  if (o.shm != "auto") s += " --shm " + o.shm;
  for (const auto& f : o.fault_texts) s += " --fault " + shell_quote(f);
  if (sc.file == "<command line>") {
    s += " --";
    for (const auto& a : sc.job.argv) s += " " + shell_quote(a);
    return s;
  }
  std::error_code ec;
  auto abs = std::filesystem::absolute(sc.file, ec);
  return s + " " + shell_quote(ec ? sc.file : abs.string());
}

}  // namespace

ScenarioResult run_scenario(const Scenario& input, const RunOptions& o, int run_index, int runs) {
  Scenario sc = input;
  if (o.timeout) sc.timeouts.job = *o.timeout;
  if (o.grace) sc.grace = *o.grace;
  for (const auto& [role, g] : o.role_grace) sc.role_grace[role] = g;
  if (o.settle) sc.timeouts.settle = *o.settle;
  std::uint64_t seed = o.seed ? *o.seed : sc.seed ? *sc.seed : random_seed();
  sc.job.env["AFTERMATH_SEED"] = std::to_string(seed);
  sc.job.env["AFTERMATH_SCENARIO"] = sc.name;

  ScenarioResult r;
  r.name = sc.name;
  r.file = sc.file;
  r.description = sc.description;
  r.tags = sc.tags;
  r.scenario_text = sc.text;
  r.scenario_hash = fnv1a_hex(sc.text);
  r.seed = seed;
  if (sc.expect.expect_pass) {
    r.expect = "pass";
  } else {
    r.expect = "fail:";
    for (const auto& f : sc.expect.failing) r.expect += " " + f;
  }
  r.repro = repro_line(sc, o, seed);
  r.started_at = iso_now();
  std::error_code ec;
  r.out_dir = (std::filesystem::absolute(o.out_dir, ec) / sc.name).string();
  if (runs > 1) r.out_dir += "/run-" + std::to_string(run_index + 1);
  r.run_index = run_index;
  r.runs = runs;
  std::filesystem::create_directories(r.out_dir, ec);
  if (ec) {
    r.verdict = Verdict::Error;
    r.error = "cannot create " + r.out_dir + ": " + ec.message();
    r.verdict_reason = r.error;
    return r;
  }
  r.stdout_path = r.out_dir + "/stdout.log";
  r.stderr_path = r.out_dir + "/stderr.log";
  // Per-process logs (the points clients move each announced process's
  // stdout/stderr there). A scenario's own value, or an empty one inherited
  // by the harness, opts out.
  if (!sc.job.env.count("AFTERMATH_LOG_DIR")) {
    const char* inherited = std::getenv("AFTERMATH_LOG_DIR");
    if (!inherited || *inherited) {
      std::string logs = r.out_dir + "/logs";
      std::filesystem::remove_all(logs, ec);  // a previous run's, in the same folder
      sc.job.env["AFTERMATH_LOG_DIR"] = logs;
    }
  }
  if (!o.ignore_requirements) {
    if (auto why = unmet_requirements(sc.requires_, sc.job.argv)) {
      r.verdict = Verdict::Skipped;
      r.verdict_reason = "not launched: requires " + *why;
      return r;
    }
  }

  SupervisorOptions so;
  so.reaper_path = o.reaper_path;
  so.out_dir = r.out_dir;
  so.containment = o.containment;
  so.shm = o.shm;
  so.keep_leaks = o.keep_leaks;
  so.ignored_signals = o.ignored_signals;
  so.interrupted = o.interrupted;
  // NVML is not thread-safe: each run (a thread of its own with --jobs) has
  // its own handle.
  std::unique_ptr<DlNvml> nvml;
  std::unique_ptr<ProcessProbeRunner> probe;
  if (o.device) {
    so.nvml = o.nvml;
    so.probe = o.probe;
    if (!so.nvml) {
      nvml = std::make_unique<DlNvml>();
      so.nvml = nvml.get();
      if (!so.probe) {
        probe = std::make_unique<ProcessProbeRunner>(default_probe_command(
            std::filesystem::path(o.reaper_path).parent_path().string()));
        so.probe = probe.get();
      }
    }
  }
  so.device_pattern = o.device_pattern;
  so.dev_root = o.dev_root;
  so.cudart_candidates = o.cudart_candidates;
  so.tools_dir = o.tools_dir;
  so.cgroup_parent = o.cgroup_parent;
  if (o.on_status) so.on_status = [&](const LiveStatus& s) { o.on_status(sc, s); };
  try {
    r.timeline = supervise(sc, so);
  } catch (const std::exception& e) {
    r.verdict = Verdict::Error;
    r.error = e.what();
    r.verdict_reason = r.error;
    return r;
  }
  r.processes = build_histories(r.timeline);
  r.process_logs = find_process_logs(r.timeline, r.processes, r.out_dir);
  merge_process_output(r.timeline, r.processes, r.process_logs, r.out_dir);
  r.job_environment = job_environment_from(r.timeline);
  r.checks = run_checks(sc, r.timeline, r.processes);
  r.verdict = decide_verdict(sc, r.checks, &r.verdict_reason);
  if (auto fv = fault_verdict(r.timeline.facts.faults)) {
    r.verdict = fv->verdict;
    r.verdict_reason = fv->reason;
  }
  if (o.interrupted && *o.interrupted) {
    r.verdict = Verdict::Error;
    r.error = "interrupted";
    r.verdict_reason = "the run was interrupted";
  }
  for (const auto& ev : r.timeline.events) {
    if (ev.kind == ObsKind::Note && ev.text.rfind("teardown failed", 0) == 0) {
      r.verdict = Verdict::Error;
      r.error = ev.text;
      r.verdict_reason = ev.text;
    }
  }
  auto t = compute_timings(r.timeline, r.processes);
  r.timings_ms = std::move(t.ms);
  r.timings_origin = t.origin;
  return r;
}

std::vector<ScenarioResult> run_batch(const std::vector<Scenario>& scenarios, const RunOptions& o,
                                      const BatchOptions& b,
                                      const std::function<void(const ScenarioResult&)>& on_done) {
  struct Item {
    size_t scenario;
    int run;
  };
  std::vector<Item> items;
  for (size_t i = 0; i < scenarios.size(); ++i)
    for (int k = 0; k < std::max(1, b.repeat); ++k) items.push_back({i, k});
  std::vector<ScenarioResult> results(items.size());
  std::atomic<size_t> next{0};
  std::mutex done_mu;
  // Each worker thread lives until the batch ends: a reaper's parent-death
  // signal follows the thread that forked it, so no thread may end while a
  // job it started still runs.
  auto work = [&] {
    for (;;) {
      size_t i = next.fetch_add(1);
      if (i >= items.size() || (o.interrupted && *o.interrupted)) return;
      results[i] = run_scenario(scenarios[items[i].scenario], o, items[i].run, std::max(1, b.repeat));
      std::lock_guard<std::mutex> lock(done_mu);
      if (on_done) on_done(results[i]);
    }
  };
  int n = std::max(1, std::min<int>(b.jobs, static_cast<int>(items.size())));
  if (n == 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < n; ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
  }
  // Drop the runs an interruption never started.
  std::vector<ScenarioResult> out;
  for (auto& r : results)
    if (!r.name.empty()) out.push_back(std::move(r));
  return out;
}

std::pair<double, double> wilson_interval(int k, int n) {
  if (n <= 0) return {0.0, 1.0};
  const double z = 1.959963984540054;
  double p = static_cast<double>(k) / n;
  double denom = 1 + z * z / n;
  double centre = (p + z * z / (2.0 * n)) / denom;
  double half = z * std::sqrt(p * (1 - p) / n + z * z / (4.0 * n * n)) / denom;
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

namespace {
// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}
}  // namespace

std::vector<Aggregate> aggregate(const std::vector<ScenarioResult>& results) {
  std::vector<Aggregate> out;
  std::map<std::string, size_t> index;
  std::map<std::string, std::map<std::string, std::vector<double>>> values;
  for (const auto& r : results) {
    auto [it, fresh] = index.emplace(r.name, out.size());
    if (fresh) {
      out.push_back(Aggregate{});
      out.back().name = r.name;
      out.back().expects_failure = r.expect != "pass";
    }
    Aggregate& a = out[it->second];
    ++a.runs;
    a.verdicts[std::string(to_string(r.verdict))]++;
    if (r.verdict == Verdict::XFail) ++a.reproduced;
    for (const auto& [k, v] : r.timings_ms)
      if (v) values[r.name][k].push_back(*v);
  }
  for (auto& a : out) {
    a.flaky = a.verdicts.size() > 1;
    a.rate = a.runs ? static_cast<double>(a.reproduced) / a.runs : 0;
    std::tie(a.rate_low, a.rate_high) = wilson_interval(a.reproduced, a.runs);
    for (auto& [k, v] : values[a.name]) {
      std::sort(v.begin(), v.end());
      Aggregate::Dist d;
      d.n = static_cast<int>(v.size());
      d.min = v.front();
      d.max = v.back();
      d.median = percentile(v, 0.5);
      d.p95 = percentile(v, 0.95);
      a.timings_ms[k] = d;
    }
  }
  return out;
}

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

std::map<int, ScenarioResult::ProcessLogs> find_process_logs(const Timeline& tl,
                                                            const std::vector<ProcessHistory>& procs,
                                                            const std::string& out_dir) {
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
  for (const auto& ev : tl.events) {
    if (ev.kind != ObsKind::Event || ev.name != "aftermath.logs" || !job.count(ev.pid)) continue;
    auto j = nlohmann::json::parse(ev.text, nullptr, false);
    if (!j.is_object()) continue;
    // The latest report wins: a process that announced again has new files.
    set(ev.pid, field_text(j.value("out", nlohmann::json())), true);
    set(ev.pid, field_text(j.value("err", nlohmann::json())), false);
  }
  // Pids in file names are the job's own; they are ours only without a PID namespace.
  if (tl.facts.containment == "subreaper") {
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
  std::stable_sort(order.begin(), order.end(), [](const ProcessHistory* a, const ProcessHistory* b) {
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

std::map<std::string, std::string> job_environment_from(const Timeline& tl) {
  std::map<std::string, std::vector<std::string>> values;
  for (const auto& ev : tl.events) {
    if (ev.kind != ObsKind::Event || ev.name != "torch_config") continue;
    auto j = nlohmann::json::parse(ev.text, nullptr, false);
    if (!j.is_object()) continue;
    for (const auto& [k, v] : j.items()) {
      std::string text = field_text(v);
      if (text.empty()) continue;
      auto& seen = values[k];
      if (std::find(seen.begin(), seen.end(), text) == seen.end()) seen.push_back(text);
    }
  }
  std::map<std::string, std::string> out;
  for (const auto& [k, seen] : values) {
    std::string joined;
    for (const auto& v : seen) joined += (joined.empty() ? "" : ", ") + v;
    out[k] = joined;
  }
  return out;
}

std::map<std::string, std::string> environment_facts() {
  std::map<std::string, std::string> env;
  utsname u{};
  if (uname(&u) == 0) {
    env["kernel"] = std::string(u.sysname) + " " + u.release;
    env["machine"] = u.machine;
  }
  env["glibc"] = gnu_get_libc_version();
#if defined(__clang__)
  env["compiler"] = "clang " __clang_version__;
#elif defined(__GNUC__)
  env["compiler"] = "gcc " __VERSION__;
#endif
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) env["ulimit_n"] = std::to_string(rl.rlim_cur);
  struct statvfs vfs {};
  if (statvfs("/dev/shm", &vfs) == 0) {
    env["dev_shm_size_bytes"] = std::to_string(std::uint64_t(vfs.f_blocks) * vfs.f_frsize);
    env["dev_shm_used_bytes"] =
        std::to_string(std::uint64_t(vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize);
  }
  env["nproc"] = std::to_string(sysconf(_SC_NPROCESSORS_ONLN));
  env["uid"] = std::to_string(getuid());
  // Versions of what jobs run on, read from files (importing torch would cost
  // seconds per run): PyTorch, LibTorch, CUDA runtime, NCCL, the driver.
  auto first_match = [](const std::string& path, const std::regex& re) -> std::string {
    std::ifstream f(path);
    std::string line;
    std::smatch m;
    while (std::getline(f, line))
      if (std::regex_search(line, m, re)) return m[1].str();
    return {};
  };
  for (const char* py : {"/usr/lib/python3/dist-packages/torch/version.py",
                         "/usr/local/lib/python3/dist-packages/torch/version.py"}) {
    auto v = first_match(py, std::regex(R"(__version__\s*=\s*'([^']+)')"));
    if (!v.empty()) {
      env["pytorch"] = v;
      auto cuda = first_match(py, std::regex(R"(^cuda\s*=\s*'([^']+)')"));
      env["pytorch_cuda"] = cuda.empty() ? "none" : cuda;
      break;
    }
  }
  auto libtorch = first_match("/usr/lib/x86_64-linux-gnu/cmake/Torch/TorchConfigVersion.cmake",
                              std::regex(R"(PACKAGE_VERSION \"([^\"]+)\")"));
  if (!libtorch.empty()) env["libtorch"] = libtorch;
  auto cudart = first_match("/usr/local/cuda/include/cuda_runtime_api.h",
                            std::regex(R"(define CUDART_VERSION\s+(\d+))"));
  if (!cudart.empty()) {
    int v = std::atoi(cudart.c_str());
    env["cuda_toolkit"] = std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
  }
  auto nccl_major = first_match("/usr/local/cuda/include/nccl.h", std::regex(R"(define NCCL_MAJOR (\d+))"));
  auto nccl_minor = first_match("/usr/local/cuda/include/nccl.h", std::regex(R"(define NCCL_MINOR (\d+))"));
  auto nccl_patch = first_match("/usr/local/cuda/include/nccl.h", std::regex(R"(define NCCL_PATCH (\d+))"));
  if (!nccl_major.empty()) env["nccl"] = nccl_major + "." + nccl_minor + "." + nccl_patch;
  auto driver = first_match("/proc/driver/nvidia/version", std::regex(R"(Kernel Module\s+([0-9.]+))"));
  env["nvidia_driver"] = driver.empty() ? "none" : driver;
  return env;
}

}  // namespace aftermath
