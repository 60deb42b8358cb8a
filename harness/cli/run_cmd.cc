#include "harness/cli/run_cmd.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "harness/check/check_params.h"
#include "harness/check/registry.h"
#include "harness/check/scenario_load.h"
#include "harness/cli/inputs.h"
#include "harness/cli/run_console.h"
#include "harness/cluster/coordinator.h"
#include "harness/core/repeat_stats.h"
#include "harness/core/shell_quote.h"
#include "harness/observe/environment_facts.h"
#include "harness/observe/python_probe.h"
#include "harness/os/expected.h"
#include "harness/os/find_program.h"
#include "harness/os/spawn.h"
#include "harness/scenario/scenario.h"
#include "harness/supervise/runner.h"
#include "reports/json.h"
#include "reports/versions.h"
#include "reports/write_reports.h"

namespace aftermath {

namespace fs = std::filesystem;

std::string command_name(const std::vector<std::string>& command) {
  if (command.empty()) return "cmd";
  // The script the command runs tells runs apart better than its
  // interpreter: the last argument naming a .py or .sh file, else the program.
  std::string base = fs::path(command[0]).filename().string();
  for (size_t i = command.size(); i-- > 1;) {
    auto ext = fs::path(command[i]).extension().string();
    if ((ext == ".py" || ext == ".sh") && command[i][0] != '-') {
      base = fs::path(command[i]).filename().string();
      break;
    }
  }
  std::string name = "cmd-" + base;
  for (auto& ch : name)
    if (!isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.') ch = '_';
  return name;
}

namespace {

volatile bool g_interrupted = false;
std::mutex g_print_mu;
void on_signal(int) { g_interrupted = true; }

// Durations everywhere take units: "500ms", "20s", "2m". "" is no value.
Expected<std::optional<Nanos>> duration_option(const std::string& name, const std::string& value) {
  if (value.empty()) return std::optional<Nanos>();
  auto d = parse_duration(value);
  if (!d) return Error{name + ": '" + value + "' is not a duration (e.g. 500ms, 20s, 2m)"};
  return std::optional<Nanos>(d);
}

// The runner's options from the command line's; an error names the option.
Expected<RunOptions> run_options(const RunCliOptions& c, const RunInvocation& inv) {
  RunOptions ro;
  auto timeout = duration_option("--timeout", c.timeout);
  if (!timeout) return timeout.error();
  ro.overrides.timeout = *timeout;
  if (!c.grace.empty()) {
    auto g = parse_grace_text(c.grace);
    if (!g) return Error{"--grace: " + g.error().what};
    ro.overrides.grace = g->all;
    ro.overrides.role_grace = g->by_role;
    ro.repro.grace_text = c.grace;
  }
  auto settle = duration_option("--settle", c.settle);
  if (!settle) return settle.error();
  ro.overrides.settle = *settle;
  ro.out_dir = c.out_dir;
  ro.contain.keep_leaks = c.keep_leaks;
  ro.contain.ignored_signals = inv.inherited_ignored;
  ro.ignore_requirements = c.ignore_requires;
  ro.overrides.seed = c.seed;
  ro.contain.mode = c.contain;
  ro.repro.fault_texts = c.faults;
  for (const auto& [opt, value] : {std::pair<const char*, const std::string&>{"--name", c.name},
                                   {"--expect-exit", c.expect_exit},
                                   {"--expect-signal", c.expect_signal},
                                   {"--expect-output", c.expect_output},
                                   {"--expect-fail", c.expect_fail}})
    if (!value.empty())
      ro.repro.verdict_options.insert(ro.repro.verdict_options.end(), {opt, value});
  for (const auto& check : c.checks)
    ro.repro.verdict_options.insert(ro.repro.verdict_options.end(), {"--check", check});
  ro.contain.shm = c.shm;
  ro.repro.command_line = inv.command_line;
  ro.repro.self_path = self_path();
  const char* reaper_env = std::getenv("AFTERMATH_REAPER");
  ro.contain.reaper_path = reaper_env ? reaper_env : bin_dir() + "/aftermath-reaper";
  ro.scenario_vars = scenario_vars();  // PYTHON is added per interpreter (cmd_run)
  ro.multinode = [](const Scenario& sc, const RunOptions& o, int run_index, int runs) {
    return run_multinode(sc, o, run_index, runs);
  };
  return ro;
}

// The executable `prog` names: a path as given (made absolute), else the
// first match on $PATH, as a shell would find it.
Expected<std::string> resolve_program(const std::string& prog) {
  std::string resolved;
  if (prog.find('/') != std::string::npos) {
    resolved = fs::absolute(prog).string();
  } else {
    resolved = find_program(prog).value_or("");
  }
  if (resolved.empty() || !is_executable_file(resolved))
    return Error{"<command line>: job.command: '" + prog + "' not found or not executable"};
  return resolved;
}

// --expect-fail: the checks a known bug makes fail; each must exist and run.
void expect_failing(const std::string& list, Scenario& sc, std::vector<std::string>& errors) {
  std::stringstream ss(list);
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
      errors.push_back("--expect-fail: check '" + name +
                       "' does not run (enable it with --check '" + name + ": true')");
      continue;
    }
    sc.expect.expect_pass = false;
    sc.expect.failing.insert(name);
  }
  sc.expect.reason = "expected on the command line";
}

// What the command is expected to do, validated like a scenario file.
void command_expectations(const RunCliOptions& c, Scenario& sc, std::vector<std::string>& errors) {
  JobExitParams& je = mutable_check_params<JobExitParams>(sc);
  if (!c.expect_exit.empty() && !c.expect_signal.empty())
    errors.push_back("--expect-signal: --expect-exit and --expect-signal are mutually exclusive");
  if (!c.expect_exit.empty()) {
    bool digits = c.expect_exit.size() <= 3 &&
                  c.expect_exit.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoi(c.expect_exit) > 255)
      errors.push_back("--expect-exit: '" + c.expect_exit +
                       "' is not an exit code (an integer 0..255)");
    else
      je.code = std::stoi(c.expect_exit);
  }
  if (!c.expect_signal.empty()) {
    if (auto sig = parse_signal(c.expect_signal))
      je.signal = *sig;
    else
      errors.push_back("--expect-signal: unknown signal '" + c.expect_signal +
                       "' (a name like SIGKILL, or a number)");
  }
  if (!c.expect_output.empty()) {
    try {
      std::regex re(c.expect_output, std::regex::ECMAScript);
      je.output_regex = c.expect_output;
    } catch (const std::regex_error& e) {
      errors.push_back("--expect-output: invalid regex '" + c.expect_output + "': " + e.what());
    }
  }
  for (size_t i = 0; i < c.checks.size(); ++i) {
    auto parsed = parse_checks_text(c.checks[i], "--check " + std::to_string(i + 1), &sc.checks);
    if (!parsed)
      for (const auto& d : parsed.error()) errors.push_back(d.to_string());
  }
  if (!c.expect_fail.empty()) expect_failing(c.expect_fail, sc, errors);
}

// The scenario of `-- COMMAND` (`program`: the command's resolved path): the
// default checks, the --fault and expectation options. Problems go to `errors`.
Scenario command_scenario(const RunCliOptions& c, const RunInvocation& inv,
                          const std::string& program, std::vector<std::string>& errors) {
  Scenario sc;
  sc.name = c.name.empty() ? command_name(inv.job_command) : c.name;
  if (!c.name.empty() && !valid_scenario_name(c.name))
    errors.push_back("--name: invalid name '" + c.name + "' (" + std::string(kScenarioNameRule) +
                     ")");
  sc.description = "ad-hoc command";
  sc.file = "<command line>";
  sc.job.argv = inv.job_command;
  sc.job.argv[0] = program;
  sc.job.env = c.job_env;
  sc.job.inherit_ignored_signals = true;  // the user's program, as their shell runs it
  for (const auto& name : default_checks()) sc.checks[name] = CheckConfig{};
  for (size_t i = 0; i < c.faults.size(); ++i) {
    auto f = parse_fault_text(c.faults[i], "--fault " + std::to_string(i + 1));
    if (!f)
      for (const auto& d : f.error()) errors.push_back(d.to_string());
    else
      sc.faults.push_back(std::move(*f));
  }
  command_expectations(c, sc, errors);
  sc.text = inv.command_line;
  return sc;
}

// The scenarios the input files name; options meant for -- COMMAND are
// problems here, as are two scenarios of one name.
std::vector<Scenario> file_scenarios(const RunCliOptions& c, const std::string& python,
                                     std::vector<std::string>& errors) {
  std::vector<Scenario> scenarios;
  if (!c.faults.empty())
    errors.push_back(
        "--fault works with -- COMMAND; scenario files list their faults under faults:");
  for (const auto& [opt, given] :
       {std::pair<const char*, bool>{"--expect-exit", !c.expect_exit.empty()},
        {"--expect-signal", !c.expect_signal.empty()},
        {"--expect-output", !c.expect_output.empty()},
        {"--name", !c.name.empty()},
        {"--expect-fail", !c.expect_fail.empty()},
        {"--check", !c.checks.empty()}})
    if (given)
      errors.push_back(std::string(opt) +
                       " works with -- COMMAND; scenario files state it under checks: and expect:");
  for (const auto& f : expand_inputs(c.inputs, errors)) {
    ParseContext ctx;
    ctx.vars = scenario_vars(python);
    auto r = load_scenario(f, ctx);
    if (!r)
      for (const auto& d : r.error()) errors.push_back(d.to_string());
    else
      scenarios.push_back(std::move(*r));
  }
  std::set<std::string> names;
  for (const auto& s : scenarios)
    if (!names.insert(s.name).second)
      errors.push_back(s.file + ": name: '" + s.name + "' is used by two scenarios in this run");
  return scenarios;
}

// Runs the validated scenarios, writes the reports, prints the table.
// `shard`: the slice these scenarios are, with --shard.
int run_scenarios(const std::vector<Scenario>& scenarios, RunOptions ro, const RunCliOptions& c,
                  const RunInvocation& inv, std::optional<ShardInfo> shard) {
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  ro.interrupted = &g_interrupted;
  bool tty = isatty(STDOUT_FILENO) == 1;

  RunResult result;
  result.tool_version = AFTERMATH_VERSION;
  result.command_line = inv.command_line;
  result.environment = environment_facts();
  // What the run's Python jobs run on: the run's interpreter and its PyTorch
  // (each scenario's result names its job's own, which may differ).
  if (!ro.python.empty()) {
    PythonFacts py = probe_python(ro.python);
    result.environment["python"] = ro.python;
    if (!py.python.empty()) result.environment["python_version"] = py.python;
    if (py.torch) {
      result.environment["pytorch"] = py.torch->text;
      result.environment["pytorch_cuda"] = py.torch_cuda;
    } else {
      result.environment["pytorch"] = "none";
    }
  }
  result.shard = std::move(shard);
  ScenarioBatchOptions bo;
  bo.repeat = c.repeat;
  bo.jobs = c.jobs;
  // With parallel jobs a single rewritten status line would interleave: print
  // phase changes as lines instead.
  bool live_line = tty && c.jobs == 1;
  ro.on_status = [live_line](const Scenario& sc, const LiveStatus& s) {
    std::lock_guard<std::mutex> lock(g_print_mu);
    print_status(sc, s, live_line);
  };
  result.scenarios = run_batch(scenarios, ro, bo, [&](const ScenarioResult& r) {
    std::lock_guard<std::mutex> lock(g_print_mu);
    print_scenario_done(r, live_line);
  });
  if (c.repeat > 1) result.aggregates = aggregate(result.scenarios);

  std::error_code ec;
  fs::create_directories(c.out_dir, ec);
  std::string abs_out = fs::absolute(c.out_dir, ec).string();
  auto written = write_reports(result, abs_out);
  print_table(result, tty);
  if (!result.aggregates.empty()) print_aggregates(result);
  std::printf("reports: %s/{result.json, junit.xml, report.html, trace.json, summary.md}\n",
              abs_out.c_str());
  if (!written) {
    std::fprintf(stderr, "aftermath: %s\n", written.error().what.c_str());
    return 1;
  }
  if (g_interrupted) return 1;
  for (const auto& r : result.scenarios)
    if (r.verdict != Verdict::Pass && r.verdict != Verdict::XFail && r.verdict != Verdict::Skipped)
      return 1;
  return 0;
}

// --slurm outside an allocation, with a multi-node scenario: this invocation
// again inside a new allocation (this process becomes salloc: its exit status
// is the run's); 2 when Slurm cannot be asked (nothing launched). nullopt:
// run here (already inside one, or nothing needs more than one node).
std::optional<int> run_in_new_allocation(const std::vector<Scenario>& scenarios,
                                         const RunInvocation& inv) {
  int nodes = 1;
  for (const auto& sc : scenarios) nodes = std::max(nodes, sc.nodes);
  const char* job = std::getenv("SLURM_JOB_ID");
  if (nodes < 2 || (job && *job)) return std::nullopt;
  auto refuse = [](const std::string& why) {
    std::fprintf(stderr, "aftermath run --slurm: %s\naftermath run: nothing was launched\n",
                 why.c_str());
    return 2;
  };
  auto salloc = find_program("salloc");
  if (!salloc) return refuse("salloc is not in PATH (Debian package slurm-client)");
  if (!find_program("srun")) return refuse("srun is not in PATH (Debian package slurm-client)");
  // A missing file named by $SLURM_CONF has Slurm's tools retry for a minute.
  if (const char* conf = std::getenv("SLURM_CONF"); conf && *conf && !std::filesystem::exists(conf))
    return refuse(std::string("$SLURM_CONF names ") + conf + ", which does not exist");
  CommandOutcome ping = run_command({"scontrol", "ping"}, 20 * kSecond, 4096);
  if (ping.timed_out())
    return refuse("no Slurm controller answers (scontrol ping gave no answer within 20s)");
  if (!ping.exited_zero() || ping.output.find("is UP") == std::string::npos) {
    // Its last line says it best ("fatal: Could not establish a configuration source").
    std::string said = ping.output;
    while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
    said =
        said.substr(said.find_last_of('\n') == std::string::npos ? 0 : said.find_last_of('\n') + 1);
    return refuse("no Slurm controller answers (scontrol ping" + (said.empty() ? "" : ": " + said) +
                  ")");
  }
  std::error_code ec;
  std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) return refuse("cannot find this program's own path (/proc/self/exe): " + ec.message());
  std::vector<std::string> argv = salloc_command(*salloc, self, inv.argv, nodes);
  std::string shown;
  for (const auto& a : argv) shown += (shown.empty() ? "" : " ") + shell_quote(a);
  std::fprintf(stderr, "aftermath run --slurm: asking Slurm for %d node(s): %s\n", nodes,
               shown.c_str());
  std::fflush(stderr);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  ::execv(args[0], args.data());
  return refuse("cannot run " + argv[0] + ": " + std::strerror(errno));
}

}  // namespace

Expected<Shard> parse_shard(const std::string& text) {
  if (auto shard = parse_shard_text(text)) return *shard;
  return Error{"--shard: expected I/N with 1 <= I <= N <= 10000 (e.g. 2/4), got '" + text + "'"};
}

std::vector<std::size_t> shard_positions(std::size_t total, const Shard& s) {
  std::vector<std::size_t> out;
  for (std::size_t k = static_cast<std::size_t>(s.index - 1); k < total;
       k += static_cast<std::size_t>(s.count))
    out.push_back(k);
  return out;
}

std::vector<std::string> salloc_command(const std::string& salloc, const std::string& self,
                                        const std::vector<std::string>& argv, int nodes) {
  std::vector<std::string> out = {salloc, "-N" + std::to_string(nodes), "--quiet", self};
  bool after_dash = false;
  for (std::size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == "--") after_dash = true;
    if (!after_dash && argv[i] == "--slurm") continue;
    out.push_back(argv[i]);
  }
  return out;
}

void add_run_options(CLI::App* run, RunCliOptions& o, RunOptionsFor which) {
  const bool pytest = which == RunOptionsFor::Pytest;
  // What only scenario files and suites take: not `aftermath pytest`'s.
  if (!pytest) {
    run->add_flag("--slurm", o.slurm,
                  "outside a Slurm allocation, ask for one with as many nodes as the largest "
                  "multi-node scenario needs (salloc; $SALLOC_PARTITION, $SALLOC_TIMELIMIT ... "
                  "apply) and run there; inside one, use it");
    run->add_option(
        "--shard", o.shard,
        "I/N: run only the I-th of N deterministic slices of the scenarios (every N-th, "
        "from the I-th), for a CI matrix or a Slurm job array");
  }
  const std::string job = pytest ? "the pytest run" : "-- COMMAND";
  run->add_option("--expect-exit", o.expect_exit,
                  job + " is expected to exit with this code (0..255)");
  run->add_option("--expect-signal", o.expect_signal,
                  job + " is expected to die by this signal (SIGKILL, 9)");
  run->add_option(
      "--expect-output", o.expect_output,
      "a regex the job's output must match (ECMAScript, searched in stdout and stderr)");
  run->add_option(
      "--expect-fail", o.expect_fail,
      "CHECK[,CHECK...]: the checks a known bug makes fail (xfail when exactly these fail)");
  run->add_option("--check", o.checks,
                  "a check's parameters, as YAML like under checks: ('no_orphans: {grace: {helper: "
                  "3s}}', 'memory_growth: true', 'shm_clean: false'); repeatable");
  run->add_flag("--dry-run", o.dry_run,
                "parse and validate everything, launch nothing (exit 0 or 2)");
  run->add_option(
      "--fault", o.faults,
      std::string(pytest ? "" : "-- COMMAND only: ") +
          "inject a fault, as a YAML map: '{action: SIGKILL, target: launcher, at: {after: "
          "2s}}' (repeatable; fires in order)");
  // pytest refuses them with a clear message (cmd_pytest); not in its help.
  run->add_option("inputs", o.inputs, "scenario .yaml files, .suite files or directories")
      ->group(pytest ? "" : "Positionals");
  run->add_option("--out", o.out_dir, "report folder (result.json, junit.xml, per-scenario logs)");
  run->add_option("--timeout", o.timeout, "job deadline, overrides the scenario's (e.g. 30s)");
  run->add_option(
      "--grace", o.grace,
      "how long a process may outlive its parent or stay a zombie: one duration (e.g. "
      "500ms) or per role, '{default: 1s, helper: 5s}' (no_orphans gives helpers 5s unless told)");
  run->add_option("--settle", o.settle,
                  "how long leftovers are watched after the top process exits");
  run->add_option("--seed", o.seed, "seed passed to the job as AFTERMATH_SEED");
  run->add_option(
      "--python", o.pythons,
      pytest
          ? "the interpreter that runs pytest (its -m pytest), a path or a name on PATH; default "
            "$AFTERMATH_PYTHON, else the project's venv, else python3. Repeat it to run the "
            "suite once per interpreter, side by side (versions.md)"
          : "the interpreter of Python jobs (${PYTHON} in scenario files and in -- COMMAND), a "
            "path or a name on PATH; default $AFTERMATH_PYTHON, else the project's venv, else "
            "python3. Repeat it to run everything once per interpreter, side by side "
            "(versions.md)");
  run->add_option(
      "--name", o.name,
      pytest
          ? "the run's name in the reports (default: pytest-PATH, the first path pytest is given)"
          : "-- COMMAND only: the scenario's name in the reports (default: cmd-SCRIPT, the "
            "last .py/.sh argument, else cmd-PROGRAM)");
  run->add_option("--repeat", o.repeat,
                  "run each scenario N times (run 1/N, 2/N ...): timings as distributions, how "
                  "often a known bug reproduced (or a scenario failed) with a 95% interval, flaky "
                  "when runs differ in verdict or failed checks")
      ->check(CLI::Range(1, 10000));
  if (!pytest)
    run->add_option("--jobs", o.jobs, "run N scenarios side by side")->check(CLI::Range(1, 256));
  run->add_flag(
      "--keep-leaks", o.keep_leaks,
      "leave leaked /dev/shm entries and temp-dir residue (pymp-*, torch-shm-dir-*) in place "
      "(still reported), and torchrun's log folders (torchelastic_*) in the temp dir");
  run->add_flag("--ignore-requires", o.ignore_requires,
                "launch scenarios whose requires: are not met here (normally skipped)");
  run->add_option("--contain", o.contain, "containment: auto, pidns or subreaper")
      ->check(CLI::IsMember({"auto", "pidns", "subreaper"}));
  run->add_option("--shm", o.shm,
                  "the job's /dev/shm: private (its own tmpfs; parallel runs never mix), host, or "
                  "auto (private where the kernel allows)")
      ->check(CLI::IsMember({"auto", "private", "host"}));
}

namespace {

constexpr const char* kPythonVar = "${PYTHON}";

// -- COMMAND with each "${PYTHON}" in its words replaced by `python`.
std::vector<std::string> with_python(std::vector<std::string> argv, const std::string& python) {
  for (auto& a : argv)
    for (size_t at = a.find(kPythonVar); at != std::string::npos;
         at = a.find(kPythonVar, at + python.size()))
      a.replace(at, std::string(kPythonVar).size(), python);
  return argv;
}

bool names_python(const std::vector<std::string>& argv) {
  return std::any_of(argv.begin(), argv.end(),
                     [](const std::string& a) { return a.find(kPythonVar) != std::string::npos; });
}

// A folder name for an interpreter's part of a matrix run: "torch-2.13.0-cpu",
// "no-torch-python-3.11.7"; made unique among `taken`.
std::string version_dir(const PythonFacts& f, std::set<std::string>& taken) {
  std::string base = f.torch            ? "torch-" + f.torch->text
                     : f.python.empty() ? "python"
                                        : "no-torch-python-" + f.python;
  for (auto& ch : base)
    if (!isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.') ch = '-';
  std::string name = base;
  for (int k = 2; !taken.insert(name).second; ++k) name = base + "-" + std::to_string(k);
  return name;
}

// One interpreter's scenarios, validated: problems go to `errors`.
std::vector<Scenario> scenarios_for(const RunCliOptions& c, const RunInvocation& inv,
                                    const std::string& python, std::vector<std::string>& errors) {
  std::vector<Scenario> scenarios;
  if (!inv.job_command.empty()) {
    RunInvocation one = inv;
    one.job_command = with_python(inv.job_command, python);
    auto program = resolve_program(one.job_command[0]);
    if (!program) {
      errors.push_back(program.error().what);
      return scenarios;
    }
    // One name on every interpreter: ${PYTHON} named as "python".
    RunCliOptions named = c;
    if (named.name.empty() && names_python(inv.job_command))
      named.name = command_name(with_python(inv.job_command, "python"));
    scenarios.push_back(command_scenario(named, one, *program, errors));
  } else {
    scenarios = file_scenarios(c, python, errors);
  }
  return scenarios;
}

}  // namespace

int cmd_run(const RunCliOptions& c, const RunInvocation& inv) {
  auto ro = run_options(c, inv);
  if (!ro) {
    std::fprintf(stderr, "aftermath run: %s\n", ro.error().what.c_str());
    return 2;
  }
  if (!inv.job_command.empty()) {
    if (!c.shard.empty()) {
      std::fprintf(stderr,
                   "aftermath run: --shard slices scenario files and suites, not -- COMMAND\n");
      return 2;
    }
    if (!c.inputs.empty()) {
      std::fprintf(stderr, "aftermath run: give scenario files or -- COMMAND, not both\n");
      return 2;
    }
  } else if (c.inputs.empty()) {
    std::fprintf(stderr, "aftermath run: give scenario files, suites, or -- COMMAND\n");
    return 2;
  }
  // The interpreters, each resolved once: --python (repeatable), else the default.
  std::vector<std::string> pythons;
  for (const auto& given : c.pythons.empty() ? std::vector<std::string>{""} : c.pythons) {
    auto py = run_python(given);
    if (!py) {
      std::fprintf(stderr, "aftermath run: %s\naftermath run: nothing was launched\n",
                   py.error().what.c_str());
      return 2;
    }
    if (std::find(pythons.begin(), pythons.end(), *py) != pythons.end()) {
      std::fprintf(stderr, "aftermath run: --python %s is given twice\n", py->c_str());
      return 2;
    }
    pythons.push_back(*py);
  }
  if (pythons.size() > 1 && !inv.job_command.empty() && !names_python(inv.job_command)) {
    std::fprintf(stderr,
                 "aftermath run: --python is given %zu times, but -- COMMAND does not name "
                 "${PYTHON} (quote it: "
                 "aftermath run --python A --python B -- '${PYTHON}' train.py)\n",
                 pythons.size());
    return 2;
  }
  // Parse and validate everything, for every interpreter, before launching anything.
  std::vector<std::vector<Scenario>> per_python;
  std::vector<std::string> errors;
  std::set<std::string> said;
  for (const auto& py : pythons) {
    std::vector<std::string> errs;
    per_python.push_back(scenarios_for(c, inv, py, errs));
    for (auto& e : errs)
      if (said.insert(e).second) errors.push_back(e);
  }
  if (!errors.empty()) {
    for (const auto& e : errors) std::fprintf(stderr, "%s\n", e.c_str());
    std::fprintf(stderr, "aftermath run: %zu problem(s); nothing was launched\n", errors.size());
    return 2;
  }
  std::optional<ShardInfo> shard_info;
  if (!c.shard.empty()) {
    auto shard = parse_shard(c.shard);
    if (!shard) {
      std::fprintf(stderr, "aftermath run: %s\n", shard.error().what.c_str());
      return 2;
    }
    for (auto& scenarios : per_python) {
      std::vector<Scenario> slice;
      shard_info = ShardInfo{*shard, scenarios.size(), {}, {}};
      for (std::size_t k : shard_positions(scenarios.size(), *shard)) {
        shard_info->positions.push_back(k);
        shard_info->names.push_back(scenarios[k].name);
        slice.push_back(std::move(scenarios[k]));
      }
      // An empty slice (more shards than scenarios) still writes its reports:
      // a job array's merge finds every shard's folder.
      scenarios = std::move(slice);
    }
    std::printf("aftermath run --shard %d/%d: %zu of %zu scenario(s)\n", shard->index, shard->count,
                per_python[0].size(), shard_info->total);
    for (const auto& sc : per_python[0]) std::printf("  %s\n", sc.name.c_str());
    std::fflush(stdout);
  }
  const std::vector<Scenario>& scenarios = per_python[0];
  if (c.slurm && !c.dry_run) {
    if (auto code = run_in_new_allocation(scenarios, inv)) return *code;
  }
  // A multi-node scenario needs Slurm here and now: say so before anything runs.
  for (const auto& sc : scenarios) {
    if (sc.nodes < 2) continue;
    if (Status can = multinode_available(sc.nodes); !can) {
      std::fprintf(stderr, "%s: %s\naftermath run: nothing was launched\n", sc.file.c_str(),
                   can.error().what.c_str());
      return 2;
    }
  }
  if (c.dry_run) {
    std::printf("aftermath run --dry-run: %zu scenario(s) valid", scenarios.size());
    if (pythons.size() > 1) std::printf(" on each of %zu interpreters", pythons.size());
    std::printf("; nothing launched\n");
    return 0;
  }
  if (pythons.size() == 1) {
    ro->python = pythons[0];
    ro->scenario_vars = scenario_vars(pythons[0]);
    return run_scenarios(per_python[0], std::move(*ro), c, inv, std::move(shard_info));
  }
  // The version matrix: the whole run once per interpreter, side by side.
  std::vector<VersionRun> runs;
  std::set<std::string> taken;
  int rc = 0;
  for (size_t i = 0; i < pythons.size(); ++i) {
    VersionRun v;
    v.facts = probe_python(pythons[i]);
    v.dir = version_dir(v.facts, taken);
    std::printf("\n== %s (%s): %s\n", v.facts.label().c_str(), pythons[i].c_str(), v.dir.c_str());
    std::fflush(stdout);
    RunOptions one = *ro;
    one.python = pythons[i];
    one.scenario_vars = scenario_vars(pythons[i]);
    RunCliOptions ci = c;
    ci.out_dir = (fs::path(c.out_dir) / v.dir).string();
    one.out_dir = ci.out_dir;
    rc = std::max(rc, run_scenarios(per_python[i], std::move(one), ci, inv, shard_info));
    std::error_code ec;
    v.result_path = fs::absolute(fs::path(ci.out_dir) / "result.json", ec).string();
    runs.push_back(std::move(v));
    if (g_interrupted) break;
  }
  std::error_code ec;
  std::string abs_out = fs::absolute(c.out_dir, ec).string();
  auto written = write_versions(runs, abs_out);
  if (!written) {
    std::fprintf(stderr, "aftermath: %s\n", written.error().what.c_str());
    return 1;
  }
  std::printf("\n%s", written->c_str());
  std::printf("versions: %s/{versions.md, versions.json}\n", abs_out.c_str());
  return g_interrupted ? 1 : rc;
}

}  // namespace aftermath
