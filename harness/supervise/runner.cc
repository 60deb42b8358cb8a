#include "harness/supervise/runner.h"

#include <atomic>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <random>
#include <thread>

#include "harness/check/judge.h"
#include "harness/core/fnv1a.h"
#include "harness/core/job_environment.h"
#include "harness/core/shell_quote.h"
#include "harness/observe/python_probe.h"
#include "harness/observe/requirements_probe.h"
#include "harness/supervise/process_logs.h"

namespace aftermath {

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
  const ReproLine& how = o.repro;
  std::string s = shell_quote(how.self_path.empty() ? "aftermath" : how.self_path) +
                  " run --seed " + std::to_string(seed);
  if (o.overrides.timeout) s += " --timeout " + format_duration(*o.overrides.timeout);
  if (!how.grace_text.empty()) s += " --grace " + shell_quote(how.grace_text);
  if (o.overrides.settle) s += " --settle " + format_duration(*o.overrides.settle);
  if (o.contain.mode != "auto") s += " --contain " + o.contain.mode;
  if (o.contain.shm != "auto") s += " --shm " + o.contain.shm;
  for (const auto& f : how.fault_texts) s += " --fault " + shell_quote(f);
  if (sc.file == "<command line>") {
    for (const auto& w : how.verdict_options) s += " " + shell_quote(w);
    s += " --";
    for (const auto& a : sc.job.argv) s += " " + shell_quote(a);
    // What the command's job was given on top of the environment (`aftermath
    // pytest`'s PYTHONPATH, which finds the plugin), in front; the harness's
    // own AFTERMATH_* variables it sets again.
    std::string env;
    for (const auto& [k, v] : sc.job.env)
      if (k.rfind("AFTERMATH_", 0) != 0) env += k + "=" + shell_quote(v) + " ";
    return env + s;
  }
  // ${PYTHON} in the file is this interpreter again.
  if (!o.python.empty()) s += " --python " + shell_quote(o.python);
  std::error_code ec;
  auto abs = std::filesystem::absolute(sc.file, ec);
  return s + " " + shell_quote(ec ? sc.file : abs.string());
}

}  // namespace

Scenario with_overrides(const Scenario& input, const RunOptions& o) {
  const Overrides& over = o.overrides;
  Scenario sc = input;
  if (over.timeout) sc.timeouts.job = *over.timeout;
  if (over.grace) sc.grace = *over.grace;
  for (const auto& [role, g] : over.role_grace) sc.role_grace[role] = g;
  if (over.settle) sc.timeouts.settle = *over.settle;
  return sc;
}

std::uint64_t choose_seed(const Scenario& sc, const RunOptions& o) {
  return o.overrides.seed ? *o.overrides.seed : sc.seed ? *sc.seed : random_seed();
}

ScenarioResult begin_result(const Scenario& sc, const RunOptions& o, std::uint64_t seed,
                            int run_index, int runs) {
  ScenarioResult r;
  r.name = sc.name;
  r.file = sc.file;
  r.description = sc.description;
  r.tags = sc.tags;
  r.scenario_text = sc.text;
  r.scenario_hash = fnv1a_hex(sc.text);
  r.seed = seed;
  r.torch_range = sc.torch_range;
  r.expect = ExpectedChecks{.pass = sc.expect.expect_pass,
                            .fail = {sc.expect.failing.begin(), sc.expect.failing.end()},
                            .may_fail = {sc.expect.may_fail.begin(), sc.expect.may_fail.end()}};
  r.repro = repro_line(sc, o, seed);
  r.started_at = iso_now();
  std::error_code ec;
  r.out_dir = (std::filesystem::absolute(o.out_dir, ec) / sc.name).string();
  if (runs > 1) r.out_dir += "/run-" + std::to_string(run_index + 1);
  if (!o.exact_dir.empty()) r.out_dir = std::filesystem::absolute(o.exact_dir, ec).string();
  r.run_index = run_index;
  r.runs = runs;
  return r;
}

namespace {

// Per-process logs (the points clients move each announced process's
// stdout/stderr there). A scenario's own value, or an empty one inherited
// by the harness, opts out.
void use_log_dir(Scenario& sc, const std::string& out_dir) {
  if (sc.job.env.count("AFTERMATH_LOG_DIR")) return;
  const char* inherited = std::getenv("AFTERMATH_LOG_DIR");
  if (inherited && !*inherited) return;
  std::string logs = out_dir + "/logs";
  std::error_code ec;
  std::filesystem::remove_all(logs, ec);  // a previous run's, in the same folder
  sc.job.env["AFTERMATH_LOG_DIR"] = logs;
}

// The device side a run made for itself (when the options bring none).
struct OwnDevice {
  std::unique_ptr<DlNvml> nvml;
  std::unique_ptr<ProcessProbeRunner> probe;
};

// The supervisor's options for scenario `sc` (which must outlive them: the
// status callback refers to it).
SupervisorOptions supervisor_options(const Scenario& sc, const RunOptions& o,
                                     const ScenarioResult& r, OwnDevice& own) {
  const std::string& out_dir = r.out_dir;
  SupervisorOptions so;
  so.contain = o.contain;
  so.out_dir = out_dir;
  so.interrupted = o.interrupted;
  so.devices = o.devices;
  so.inject = o.inject;
  so.node = o.node;
  // NVML is not thread-safe: each run (a thread of its own with --jobs) has
  // its own handle.
  if (!o.device) {
    so.devices.nvml = nullptr;
    so.devices.probe = nullptr;
  } else if (!so.devices.nvml) {
    own.nvml = std::make_unique<DlNvml>();
    so.devices.nvml = own.nvml.get();
    if (!so.devices.probe) {
      own.probe =
          std::make_unique<ProcessProbeRunner>(default_probe_command(o.contain.tools_dir()));
      so.devices.probe = own.probe.get();
    }
  }
  if (o.on_status) {
    so.on_status = [&sc, &o, run = r.run_index + 1, runs = r.runs](const LiveStatus& s) {
      LiveStatus numbered = s;
      numbered.run = run;
      numbered.runs = runs;
      o.on_status(sc, numbered);
    };
  }
  return so;
}

}  // namespace

void judge_run(ScenarioResult& r, const Scenario& sc, const RunOptions& o) {
  r.processes = build_histories(r.timeline);
  auto logs = find_process_logs(r.timeline, r.processes, r.out_dir);
  merge_process_output(r.timeline, r.processes, logs, r.out_dir);
  r.process_logs.clear();
  for (const auto& [pid, l] : logs) r.process_logs[process_key(-1, pid)] = l;
  r.job_environment = job_environment_from(r.timeline);
  judge(r, sc, o.interrupted && *o.interrupted);
}

ScenarioResult harness_error(ScenarioResult r, std::string why) {
  r.verdict = Verdict::Error;
  r.error = std::move(why);
  r.verdict_reason = r.error;
  return r;
}

ScenarioResult run_scenario(const Scenario& input, const RunOptions& o, int run_index, int runs) {
  if (input.nodes > 1) {
    if (o.multinode) return o.multinode(input, o, run_index, runs);
    return harness_error(begin_result(input, o, choose_seed(input, o), run_index, runs),
                         "a multi-node scenario needs a coordinator (`aftermath run`)");
  }
  // The job's PyTorch decides what the scenario expects of it (`torch:`)
  // and the rules' PyTorch-given values (core/python_facts.h).
  PythonFacts facts = facts_for_job(input.job.argv, o.python);
  Scenario sc = for_torch(with_overrides(input, o), facts.torch);
  std::uint64_t seed = choose_seed(sc, o);
  sc.job.env["AFTERMATH_SEED"] = std::to_string(seed);
  sc.job.env["AFTERMATH_SCENARIO"] = sc.name;

  ScenarioResult r = begin_result(sc, o, seed, run_index, runs);
  std::error_code ec;
  std::filesystem::create_directories(r.out_dir, ec);
  if (ec) return harness_error(std::move(r), "cannot create " + r.out_dir + ": " + ec.message());
  r.stdout_path = r.out_dir + "/stdout.log";
  r.stderr_path = r.out_dir + "/stderr.log";
  use_log_dir(sc, r.out_dir);
  if (!o.ignore_requirements) {
    RequirementEnv env;
    if (!o.python.empty()) env.python = o.python;
    if (Status met = requirements_met(sc.requires_, sc.job.argv, env); !met) {
      r.verdict = Verdict::Skipped;
      r.verdict_reason = "not launched: requires " + met.error().what;
      return r;
    }
  }

  OwnDevice own;
  SupervisorOptions so = supervisor_options(sc, o, r, own);
  so.python = facts;
  // The job not started is supervise()'s error; what a library throws (out
  // of memory, out of file descriptors in asio) is this scenario's error too,
  // not the end of the batch.
  Expected<Timeline> tl = [&]() -> Expected<Timeline> {
    try {
      return supervise(sc, so);
    } catch (const std::exception& e) {
      return Error{e.what()};
    }
  }();
  if (!tl) return harness_error(std::move(r), tl.error().what);
  r.timeline = std::move(*tl);
  judge_run(r, sc, o);
  return r;
}

std::vector<ScenarioResult> run_batch(const std::vector<Scenario>& scenarios, const RunOptions& o,
                                      const ScenarioBatchOptions& b,
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
      results[i] =
          run_scenario(scenarios[items[i].scenario], o, items[i].run, std::max(1, b.repeat));
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

}  // namespace aftermath
