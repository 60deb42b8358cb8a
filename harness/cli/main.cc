// aftermath: the command line. A thin program over the harness library.
//
//   aftermath run [OPTIONS] SCENARIO.yaml|SUITE.suite...
//   aftermath run [OPTIONS] -- COMMAND [ARGS...]
//   aftermath list [DIR]
//
// Exit status: 0 when every verdict is pass or xfail; 1 when any is fail,
// xpass or error; 2 for usage or scenario errors (then nothing is launched).
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>

#include "harness/check/checks.h"
#include "harness/scenario/scenario.h"
#include "harness/supervise/runner.h"
#include "harness/cli/hygiene_cmd.h"
#include "harness/cli/report_cmd.h"
#include "reports/html.h"
#include "reports/json.h"
#include "reports/junit.h"
#include "reports/summary.h"
#include "reports/trace.h"

namespace fs = std::filesystem;
using namespace aftermath;

namespace {

volatile bool g_interrupted = false;
std::mutex g_print_mu;
void on_signal(int) { g_interrupted = true; }

std::string self_path() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("aftermath") : p.string();
}

std::string bin_dir() { return fs::path(self_path()).parent_path().string(); }

// Durations everywhere take units: "500ms", "20s", "2m".
std::optional<Nanos> duration_option(const std::string& name, const std::string& value) {
  if (value.empty()) return std::nullopt;
  auto d = parse_duration(value);
  if (!d) throw CLI::ValidationError(name, "'" + value + "' is not a duration (e.g. 500ms, 20s, 2m)");
  return d;
}

// A .suite file lists scenario files (or other suites), one per line,
// relative to itself; '#' starts a comment.
std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs,
                                       std::vector<std::string>& errors, int depth = 0) {
  std::vector<std::string> out;
  if (depth > 8) {
    errors.push_back("suites nest more than 8 deep (a suite that includes itself?)");
    return out;
  }
  for (const auto& in : inputs) {
    if (fs::is_directory(in)) {
      std::vector<std::string> found;
      for (const auto& e : fs::directory_iterator(in))
        if (e.path().extension() == ".yaml") found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else if (fs::path(in).extension() == ".suite") {
      std::ifstream f(in);
      if (!f) {
        errors.push_back(in + ": cannot read the suite file");
        continue;
      }
      std::string line;
      int n = 0;
      while (std::getline(f, line)) {
        ++n;
        auto hash = line.find('#');
        if (hash != std::string::npos) line.erase(hash);
        while (!line.empty() && isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
        size_t b = line.find_first_not_of(" \t");
        if (b == std::string::npos) continue;
        line = line.substr(b);
        fs::path p = fs::path(in).parent_path() / line;
        if (!fs::exists(p)) {
          errors.push_back(in + ":" + std::to_string(n) + ":1: " + line + ": no such scenario file");
          continue;
        }
        auto inner = expand_inputs({p.lexically_normal().string()}, errors, depth + 1);
        out.insert(out.end(), inner.begin(), inner.end());
      }
    } else {
      out.push_back(in);
    }
  }
  return out;
}

bool is_tty() { return isatty(STDOUT_FILENO) == 1; }

void print_status(const Scenario& sc, const LiveStatus& s, bool tty) {
  // Called under g_print_mu; one last phase per scenario (parallel jobs).
  static std::map<std::string, std::string> last_phases;
  std::string& last_phase = last_phases[sc.name];
  char line[256];
  std::snprintf(line, sizeof line, "[%s] %6.1fs  procs %-4d  %s", sc.name.c_str(), s.elapsed / 1e9,
                s.processes, s.phase.c_str());
  if (tty) {
    std::printf("\r\033[K%s", line);
    std::fflush(stdout);
  } else if (s.phase != last_phase) {
    std::printf("%s\n", line);
    std::fflush(stdout);
  }
  last_phase = s.phase;
}

std::string fmt_ms(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[32];
  if (*v >= 1000) std::snprintf(buf, sizeof buf, "%.2fs", *v / 1000);
  else std::snprintf(buf, sizeof buf, "%.1fms", *v);
  return buf;
}

void print_table(const RunResult& run, bool tty) {
  auto colour = [&](Verdict v) -> std::string {
    std::string s(to_string(v));
    if (!tty) return s;
    bool good = v == Verdict::Pass || v == Verdict::XFail;
    const char* c = v == Verdict::Skipped ? "\033[33m" : good ? "\033[32m" : "\033[31m";
    return c + s + "\033[0m";
  };
  std::printf("\n%-36s %-7s %-30s %10s %10s %10s\n", "scenario", "verdict", "failed checks",
              "job", "all gone", "shm base");
  for (const auto& s : run.scenarios) {
    std::string failed;
    for (const auto& c : s.checks)
      if (c.status == CheckStatus::Fail || c.status == CheckStatus::Error)
        failed += (failed.empty() ? "" : ",") + c.name;
    if (failed.empty()) failed = "-";
    auto get = [&](const char* k) {
      auto it = s.timings_ms.find(k);
      return it == s.timings_ms.end() ? std::optional<double>() : it->second;
    };
    std::string v = colour(s.verdict);
    int pad = tty ? 7 + 9 : 7;
    std::printf("%-36s %-*s %-30s %10s %10s %10s\n", s.name.c_str(), pad, v.c_str(), failed.c_str(),
                fmt_ms(get("job_ms")).c_str(), fmt_ms(get("to_all_gone_ms")).c_str(),
                fmt_ms(get("to_shm_baseline_ms")).c_str());
    if (s.verdict != Verdict::Pass && s.verdict != Verdict::XFail)
      std::printf("    %s\n", s.verdict_reason.c_str());
  }
  std::map<Verdict, int> n;
  for (const auto& s : run.scenarios) n[s.verdict]++;
  std::printf("\n%zu scenario(s): %d pass, %d xfail, %d fail, %d xpass, %d error",
              run.scenarios.size(), n[Verdict::Pass], n[Verdict::XFail], n[Verdict::Fail],
              n[Verdict::XPass], n[Verdict::Error]);
  if (n[Verdict::Skipped]) std::printf(", %d skipped", n[Verdict::Skipped]);
  std::printf("\n");
}

void print_aggregates(const RunResult& run) {
  std::printf("\n%-36s %5s %-28s %-22s %s\n", "scenario", "runs", "verdicts", "reproduced (95% CI)",
              "all gone ms: min / median / p95 / max");
  for (const auto& a : run.aggregates) {
    std::string v;
    for (const auto& [name, n] : a.verdicts) v += (v.empty() ? "" : " ") + name + "=" + std::to_string(n);
    if (a.flaky) v += " FLAKY";
    char rate[64] = "-";
    if (a.expects_failure)
      std::snprintf(rate, sizeof rate, "%d/%d %.0f%% [%.0f-%.0f%%]", a.reproduced, a.runs, a.rate * 100,
                    a.rate_low * 100, a.rate_high * 100);
    char dist[96] = "-";
    if (auto it = a.timings_ms.find("to_all_gone_ms"); it != a.timings_ms.end())
      std::snprintf(dist, sizeof dist, "%.1f / %.1f / %.1f / %.1f", it->second.min, it->second.median,
                    it->second.p95, it->second.max);
    std::printf("%-36s %5d %-28s %-22s %s\n", a.name.c_str(), a.runs, v.c_str(), rate, dist);
  }
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  return static_cast<bool>(f);
}

std::map<std::string, std::string> scenario_vars() {
  return {{"AFTERMATH_BIN", bin_dir()}};
}

int cmd_list(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  if (ec) {
    std::fprintf(stderr, "aftermath list: %s: %s\n", dir.c_str(), ec.message().c_str());
    return 2;
  }
  std::sort(files.begin(), files.end());
  int bad = 0;
  std::printf("%-36s %-24s %-14s %s\n", "scenario", "tags", "requires", "description");
  for (const auto& f : files) {
    ParseContext ctx;
    ctx.vars = scenario_vars();
    ctx.check_command = false;
    auto r = load_scenario(f, ctx);
    if (!r.scenario) {
      for (const auto& d : r.diagnostics) std::fprintf(stderr, "%s\n", d.to_string().c_str());
      ++bad;
      continue;
    }
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
      return s.empty() ? std::string("-") : s;
    };
    std::string desc = r.scenario->description;
    auto nl = desc.find('\n');
    if (nl != std::string::npos) desc = desc.substr(0, nl);
    std::printf("%-36s %-24s %-14s %s\n", r.scenario->name.c_str(), join(r.scenario->tags).c_str(),
                join(r.scenario->requires_).c_str(), desc.c_str());
  }
  return bad ? 2 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  // What the user's shell gave us ignored, before we ignore anything: the
  // job starts with exactly that (nohup's SIGHUP, say), not our SIGPIPE.
  const std::uint64_t inherited_ignored = ignored_signals_now();
  CLI::App app{"aftermath: fault injection and leftovers checks for multi-process training jobs"};
  app.require_subcommand(1);
  std::string full_cmd;
  for (int i = 0; i < argc; ++i) full_cmd += (i ? " " : "") + shell_quote(argv[i]);

  auto* run = app.add_subcommand("run", "run scenario files, suites, or -- COMMAND as a job");
  std::vector<std::string> inputs;
  std::string out_dir = "aftermath-out", timeout_s, grace_s, settle_s, contain = "auto", shm = "auto";
  bool keep_leaks = false;
  bool ignore_requires = false;
  int repeat = 1, jobs = 1;
  std::optional<std::uint64_t> seed;
  std::vector<std::string> fault_texts;
  // Expectations of an ad-hoc command (a scenario file states its own).
  std::string expect_exit, expect_signal, expect_output, expect_fail;
  std::vector<std::string> check_texts;
  bool dry_run = false;
  run->add_option("--expect-exit", expect_exit, "-- COMMAND is expected to exit with this code (0..255)");
  run->add_option("--expect-signal", expect_signal, "-- COMMAND is expected to die by this signal (SIGKILL, 9)");
  run->add_option("--expect-output", expect_output,
                  "a regex the job's output must match (ECMAScript, searched in stdout and stderr)");
  run->add_option("--expect-fail", expect_fail,
                  "CHECK[,CHECK...]: the checks a known bug makes fail (xfail when exactly these fail)");
  run->add_option("--check", check_texts,
                  "a check's parameters, as YAML like under checks: ('no_orphans: {grace: {helper: "
                  "3s}}', 'memory_growth: true', 'shm_clean: false'); repeatable");
  run->add_flag("--dry-run", dry_run, "parse and validate everything, launch nothing (exit 0 or 2)");
  run->add_option("--fault", fault_texts,
                  "inject a fault, as a YAML map: '{action: SIGKILL, target: launcher, at: {after: "
                  "2s}}' (repeatable; fires in order)");
  run->add_option("inputs", inputs, "scenario .yaml files, .suite files or directories");
  run->add_option("--out", out_dir, "report folder (result.json, junit.xml, per-scenario logs)");
  run->add_option("--timeout", timeout_s, "job deadline, overrides the scenario's (e.g. 30s)");
  run->add_option("--grace", grace_s,
                  "how long a process may outlive its parent or stay a zombie: one duration (e.g. "
                  "500ms) or per role, '{default: 1s, helper: 5s}' (no_orphans gives helpers 5s unless told)");
  run->add_option("--settle", settle_s, "how long leftovers are watched after the top process exits");
  run->add_option("--seed", seed, "seed passed to the job as AFTERMATH_SEED");
  run->add_option("--repeat", repeat,
                  "run each scenario N times: timings as distributions, a bug's reproduction "
                  "rate with a 95% confidence interval")
      ->check(CLI::Range(1, 10000));
  run->add_option("--jobs", jobs, "run N scenarios side by side")->check(CLI::Range(1, 256));
  run->add_flag("--keep-leaks", keep_leaks, "leave leaked /dev/shm entries and temp-dir residue (pymp-*, torch-shm-dir-*, torchelastic_*) in place (still reported)");
  run->add_flag("--ignore-requires", ignore_requires,
                "launch scenarios whose requires: are not met here (normally skipped)");
  run->add_option("--contain", contain, "containment: auto, pidns or subreaper")
      ->check(CLI::IsMember({"auto", "pidns", "subreaper"}));
  run->add_option("--shm", shm,
                  "the job's /dev/shm: private (its own tmpfs; parallel runs never mix), host, or "
                  "auto (private where the kernel allows)")
      ->check(CLI::IsMember({"auto", "private", "host"}));

  auto* validate = app.add_subcommand("validate", "parse and validate scenario files and suites; launch nothing");
  std::vector<std::string> validate_inputs;
  validate->add_option("inputs", validate_inputs, "scenario .yaml files, .suite files or directories")->required();

  auto* list = app.add_subcommand("list", "list scenarios with description, tags and requirements");
  std::string list_dir = "scenarios";
  list->add_option("dir", list_dir, "folder of scenario files");

  auto* report = app.add_subcommand("report", "re-render report.html, trace.json and summary.md from a result.json");
  std::string report_input, report_out;
  report->add_option("result", report_input, "result.json")->required();
  report->add_option("--out", report_out, "folder for the reports (default: beside result.json)");
  auto* diff = app.add_subcommand("diff", "compare two runs check by check and timing by timing");
  std::string diff_a, diff_b;
  diff->add_option("a", diff_a, "the first result.json")->required();
  diff->add_option("b", diff_b, "the second result.json")->required();

  HygieneCliOptions hygiene;
  bool hy_json = false, hy_dry = false, hy_yes = false, hy_all = false;
  // `check` is the command's former name, kept for existing scripts.
  auto* inspect = app.add_subcommand(
      "inspect", "is this machine clean now? GPUs, device-file holders, /dev/shm, orphans, zombies");
  inspect->alias("check");
  inspect->add_flag("--json", hy_json, "JSON for CI");
  add_hygiene_options(inspect, hygiene);
  auto* reap = app.add_subcommand("reap", "clean what inspect finds, safely (nothing without --yes)");
  reap->add_flag("--dry-run", hy_dry, "show the plan only");
  reap->add_flag("--yes", hy_yes, "carry the plan out");
  reap->add_flag("--all-users", hy_all, "root only: other users' processes too");
  reap->add_flag("--json", hy_json, "JSON for CI");
  add_hygiene_options(reap, hygiene);

  // Everything after "--" is the job's command line, untouched.
  std::vector<std::string> job_cmd;
  std::vector<char*> args(argv, argv + argc);
  for (size_t i = 1; i < args.size(); ++i) {
    if (std::string(args[i]) == "--") {
      for (size_t j = i + 1; j < args.size(); ++j) job_cmd.push_back(args[j]);
      args.resize(i);
      break;
    }
  }
  try {
    app.parse(static_cast<int>(args.size()), args.data());
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  if (list->parsed()) return cmd_list(list_dir);
  if (validate->parsed()) {
    std::vector<std::string> errors;
    int n = 0;
    for (const auto& f : expand_inputs(validate_inputs, errors)) {
      ParseContext ctx;
      ctx.vars = scenario_vars();
      auto r = load_scenario(f, ctx);
      for (const auto& d : r.diagnostics) errors.push_back(d.to_string());
      if (r.scenario) ++n;
    }
    for (const auto& e : errors) std::fprintf(stderr, "%s\n", e.c_str());
    if (!errors.empty()) {
      std::fprintf(stderr, "aftermath validate: %zu problem(s)\n", errors.size());
      return 2;
    }
    std::printf("aftermath validate: %d scenario(s), all valid\n", n);
    return 0;
  }
  if (inspect->parsed()) return cmd_inspect(hy_json, hygiene);
  if (reap->parsed()) return cmd_reap(hy_dry, hy_yes, hy_all, hy_json, hygiene);
  if (report->parsed()) {
    std::string dir = report_out;
    if (dir.empty()) dir = fs::absolute(report_input).parent_path().string();
    return cmd_report(report_input, dir);
  }
  if (diff->parsed()) return cmd_diff(diff_a, diff_b);

  RunOptions ro;
  try {
    ro.timeout = duration_option("--timeout", timeout_s);
    if (!grace_s.empty()) {
      std::string why;
      auto g = parse_grace_text(grace_s, &why);
      if (!g) throw CLI::ValidationError("--grace", why);
      ro.grace = g->all;
      ro.role_grace = g->by_role;
      ro.grace_text = grace_s;
    }
    ro.settle = duration_option("--settle", settle_s);
  } catch (const CLI::ValidationError& e) {
    std::fprintf(stderr, "aftermath run: %s\n", e.what());
    return 2;
  }
  ro.out_dir = out_dir;
  ro.keep_leaks = keep_leaks;
  ro.ignored_signals = inherited_ignored;
  ro.ignore_requirements = ignore_requires;
  ro.seed = seed;
  ro.containment = contain;
  ro.fault_texts = fault_texts;
  ro.shm = shm;
  ro.command_line = full_cmd;
  ro.self_path = self_path();
  const char* reaper_env = std::getenv("AFTERMATH_REAPER");
  ro.reaper_path = reaper_env ? reaper_env : bin_dir() + "/aftermath-reaper";

  // Parse and validate everything before launching anything.
  std::vector<Scenario> scenarios;
  std::vector<std::string> errors;
  if (!job_cmd.empty()) {
    if (!inputs.empty()) {
      std::fprintf(stderr, "aftermath run: give scenario files or -- COMMAND, not both\n");
      return 2;
    }
    Scenario sc;
    sc.name = "cmd-" + fs::path(job_cmd[0]).filename().string();
    for (auto& c : sc.name)
      if (!isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
    sc.description = "ad-hoc command";
    sc.file = "<command line>";
    sc.job.argv = job_cmd;
    std::string prog = job_cmd[0];
    std::string resolved;
    if (prog.find('/') != std::string::npos) {
      resolved = fs::absolute(prog).string();
    } else if (const char* path = std::getenv("PATH")) {
      std::stringstream ss(path);
      std::string dir;
      while (std::getline(ss, dir, ':')) {
        auto cand = (fs::path(dir.empty() ? "." : dir) / prog).string();
        if (access(cand.c_str(), X_OK) == 0 && fs::is_regular_file(cand)) {
          resolved = cand;
          break;
        }
      }
    }
    if (resolved.empty() || access(resolved.c_str(), X_OK) != 0 || !fs::is_regular_file(resolved)) {
      std::fprintf(stderr, "<command line>: job.command: '%s' not found or not executable\n",
                   prog.c_str());
      return 2;
    }
    sc.job.argv[0] = resolved;
    for (const auto& name : default_checks()) sc.checks[name] = CheckConfig{};
    for (size_t i = 0; i < fault_texts.size(); ++i) {
      std::vector<Diagnostic> diags;
      auto f = parse_fault_text(fault_texts[i], "--fault " + std::to_string(i + 1), &diags);
      for (const auto& d : diags) errors.push_back(d.to_string());
      if (f) sc.faults.push_back(std::move(*f));
    }
    // What the command is expected to do, validated like a scenario file.
    JobExitExpect& je = sc.checks["job_exit"].job_exit;
    if (!expect_exit.empty() && !expect_signal.empty())
      errors.push_back("--expect-signal: --expect-exit and --expect-signal are mutually exclusive");
    if (!expect_exit.empty()) {
      bool digits = expect_exit.size() <= 3 && expect_exit.find_first_not_of("0123456789") == std::string::npos;
      if (!digits || std::stoi(expect_exit) > 255)
        errors.push_back("--expect-exit: '" + expect_exit + "' is not an exit code (an integer 0..255)");
      else
        je.code = std::stoi(expect_exit);
    }
    if (!expect_signal.empty()) {
      if (auto sig = parse_signal(expect_signal)) je.signal = *sig;
      else errors.push_back("--expect-signal: unknown signal '" + expect_signal + "' (a name like SIGKILL, or a number)");
    }
    if (!expect_output.empty()) {
      try {
        std::regex re(expect_output, std::regex::ECMAScript);
        je.output_regex = expect_output;
      } catch (const std::regex_error& e) {
        errors.push_back("--expect-output: invalid regex '" + expect_output + "': " + e.what());
      }
    }
    for (size_t i = 0; i < check_texts.size(); ++i) {
      std::vector<Diagnostic> diags;
      parse_checks_text(check_texts[i], "--check " + std::to_string(i + 1), &sc.checks, &diags);
      for (const auto& d : diags) errors.push_back(d.to_string());
    }
    if (!expect_fail.empty()) {
      std::stringstream ss(expect_fail);
      std::string name;
      while (std::getline(ss, name, ',')) {
        if (name.empty()) continue;
        if (std::find(known_checks().begin(), known_checks().end(), name) == known_checks().end()) {
          std::string known;
          for (const auto& k : known_checks()) known += (known.empty() ? "" : ", ") + k;
          errors.push_back("--expect-fail: unknown check '" + name + "' (known checks: " + known + ")");
          continue;
        }
        if (auto it = sc.checks.find(name); it == sc.checks.end() || !it->second.enabled) {
          errors.push_back("--expect-fail: check '" + name + "' does not run (enable it with --check '" +
                           name + ": true')");
          continue;
        }
        sc.expect.expect_pass = false;
        sc.expect.failing.insert(name);
      }
      sc.expect.reason = "expected on the command line";
    }
    sc.text = full_cmd;
    scenarios.push_back(std::move(sc));
  } else {
    if (inputs.empty()) {
      std::fprintf(stderr, "aftermath run: give scenario files, suites, or -- COMMAND\n");
      return 2;
    }
    if (!fault_texts.empty())
      errors.push_back("--fault works with -- COMMAND; scenario files list their faults under faults:");
    for (const auto& [opt, given] : {std::pair<const char*, bool>{"--expect-exit", !expect_exit.empty()},
                                     {"--expect-signal", !expect_signal.empty()},
                                     {"--expect-output", !expect_output.empty()},
                                     {"--expect-fail", !expect_fail.empty()},
                                     {"--check", !check_texts.empty()}})
      if (given)
        errors.push_back(std::string(opt) + " works with -- COMMAND; scenario files state it under checks: and expect:");
    for (const auto& f : expand_inputs(inputs, errors)) {
      ParseContext ctx;
      ctx.vars = scenario_vars();
      auto r = load_scenario(f, ctx);
      for (const auto& d : r.diagnostics) errors.push_back(d.to_string());
      if (r.scenario) scenarios.push_back(std::move(*r.scenario));
    }
    std::set<std::string> names;
    for (const auto& s : scenarios)
      if (!names.insert(s.name).second)
        errors.push_back(s.file + ": name: '" + s.name + "' is used by two scenarios in this run");
  }
  if (!errors.empty()) {
    for (const auto& e : errors) std::fprintf(stderr, "%s\n", e.c_str());
    std::fprintf(stderr, "aftermath run: %zu problem(s); nothing was launched\n", errors.size());
    return 2;
  }

  if (dry_run) {
    std::printf("aftermath run --dry-run: %zu scenario(s) valid; nothing launched\n", scenarios.size());
    return 0;
  }

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  ro.interrupted = &g_interrupted;
  bool tty = is_tty();

  RunResult result;
  result.tool_version = AFTERMATH_VERSION;
  result.command_line = full_cmd;
  result.environment = environment_facts();
  BatchOptions bo;
  bo.repeat = repeat;
  bo.jobs = jobs;
  // With parallel jobs a single rewritten status line would interleave: print
  // phase changes as lines instead.
  bool live_line = tty && jobs == 1;
  ro.on_status = [live_line](const Scenario& sc, const LiveStatus& s) {
    std::lock_guard<std::mutex> lock(g_print_mu);
    print_status(sc, s, live_line);
  };
  result.scenarios = run_batch(scenarios, ro, bo, [&](const ScenarioResult& r) {
    std::lock_guard<std::mutex> lock(g_print_mu);
    if (live_line) std::printf("\r\033[K");
    std::string run = r.runs > 1 ? " run " + std::to_string(r.run_index + 1) + "/" +
                                       std::to_string(r.runs)
                                 : "";
    std::printf("[%s%s] %s: %s\n", r.name.c_str(), run.c_str(),
                std::string(to_string(r.verdict)).c_str(), r.verdict_reason.c_str());
    if (!r.timeline.facts.containment_note.empty() && r.run_index == 0)
      std::printf("[%s] containment: %s\n", r.name.c_str(), r.timeline.facts.containment_note.c_str());
    std::fflush(stdout);
  });
  if (repeat > 1) result.aggregates = aggregate(result.scenarios);

  std::error_code ec;
  fs::create_directories(out_dir, ec);
  std::string abs_out = fs::absolute(out_dir, ec).string();
  // result.json is the source of truth; every other format renders from it.
  nlohmann::json rj = to_json(result);
  bool ok = write_file(abs_out + "/result.json", write_json(result)) &&
            write_file(abs_out + "/junit.xml", write_junit(result)) &&
            write_file(abs_out + "/report.html", render_html(rj, abs_out)) &&
            write_file(abs_out + "/trace.json",
                       render_trace(rj).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) &&
            write_file(abs_out + "/summary.md", render_summary_md(rj));
  print_table(result, tty);
  if (!result.aggregates.empty()) print_aggregates(result);
  std::printf("reports: %s/{result.json, junit.xml, report.html, trace.json, summary.md}\n",
              abs_out.c_str());
  if (!ok) {
    std::fprintf(stderr, "aftermath: cannot write the reports under %s\n", abs_out.c_str());
    return 1;
  }
  if (g_interrupted) return 1;
  for (const auto& r : result.scenarios)
    if (r.verdict != Verdict::Pass && r.verdict != Verdict::XFail && r.verdict != Verdict::Skipped)
      return 1;
  return 0;
}
