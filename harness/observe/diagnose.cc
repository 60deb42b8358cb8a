#include "harness/observe/diagnose.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/observe/gdb_stacks.h"
#include "harness/observe/proc.h"
#include "harness/observe/python_stack.h"
#include "harness/os/command_batch.h"
#include "harness/os/find_program.h"

namespace aftermath {

std::string find_gdb() { return find_program("gdb").value_or(""); }

std::string find_py_spy(const std::string& python, const std::string& extra_dir) {
  if (!python.empty()) {
    std::string beside = python.substr(0, python.rfind('/') + 1) + "py-spy";
    if (python.find('/') != std::string::npos && is_executable_file(beside)) return beside;
  }
  return find_program("py-spy", extra_dir).value_or("");
}

std::string find_debugger(const std::string& dev_root) {
  // On a GPU machine cuda-gdb (a gdb that also understands CUDA contexts)
  // when the toolkit has one; gdb otherwise.
  if (::access((dev_root + "/nvidiactl").c_str(), F_OK) == 0) {
    if (auto cuda = find_program("cuda-gdb", "/usr/local/cuda/bin")) return *cuda;
  }
  return find_gdb();
}

namespace {

// What the diagnosis needs to know about one process before its tool runs.
struct Target {
  std::string python_version;  // "3.11" for a Python interpreter, else empty
  std::string script;          // its libpython gdb extension, where found
  bool py_spy = false;         // its stacks come from py-spy
};

// Fills `d` from one `py-spy dump --native` run.
void take_py_spy(ProcessDiagnosis& d, const BatchedCommand& run, Nanos bound) {
  const CommandOutcome& c = run.outcome;
  if (!c.started()) {
    d.user_stacks = "(cannot start py-spy: " + c.output + ")";
    d.python_note = "no Python stacks: py-spy could not start";
    return;
  }
  auto threads = parse_py_spy_dump(c.output);
  for (const auto& th : threads) d.user_stacks += th.header + "\n" + th.text;
  for (const auto& th : threads)
    if (!th.frames.empty()) d.python_stacks += th.header + "\n" + th.text;
  if (const PythonThreadStack* h = hang_thread(threads, d.pid)) d.python_frames = h->frames;
  if (c.timed_out()) {
    d.python_note = "py-spy timed out after " + format_duration(bound);
  } else if (threads.empty()) {
    std::string said = c.output.substr(0, c.output.find('\n'));
    d.user_stacks = "(no stacks: " + said + ")";
    d.python_note = "no Python stacks: py-spy: " + said;
  } else if (d.python_frames.empty()) {
    d.python_note = "no Python frames in any thread";
  }
}

// The executable a process runs, as a path, from /proc/PID/exe.
std::string link_target(const std::string& path) {
  std::string s = read_link(path).value_or("");
  const std::string deleted = " (deleted)";  // an executable replaced on disk while it runs
  if (s.size() > deleted.size() &&
      s.compare(s.size() - deleted.size(), deleted.size(), deleted) == 0)
    s.resize(s.size() - deleted.size());
  return s;
}

// One gdb per CPU, up to 8: gdb is single-threaded here and CPU-bound
// (about 1.5 CPU-s and 190 MB for a torch process), so on a machine with 8
// CPUs the processes of a job of up to 8 are looked at in one round.
int default_parallel() {
  cpu_set_t set;
  int cpus = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  return std::clamp(cpus, 1, 8);
}

// The first line of gdb's complaints, for a note.
std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// Fills the gdb part of `d` from one gdb run and its output split (`g`).
void take_stacks(ProcessDiagnosis& d, const Target& t, const BatchedCommand& run,
                 const GdbStacksOutput& g, Nanos bound, const std::string& gdb_data_root) {
  const CommandOutcome& c = run.outcome;
  const bool python = !t.python_version.empty();
  if (!c.started()) {
    d.user_stacks = "(cannot start gdb: " + c.output + ")";
    if (python) d.python_note = "no Python stacks: gdb could not start";
    return;
  }
  d.user_stacks =
      g.c_stacks.empty()
          ? "(no stacks: " + (g.errors.empty() ? c.output.substr(0, 300) : g.errors) + ")"
          : g.c_stacks;
  // Killed at its own bound, or earlier, when the whole diagnosis's ran out.
  const std::string timed_out = run.took >= bound ? "gdb timed out after " + format_duration(bound)
                                                  : "gdb stopped when the diagnosis budget ran out";
  if (c.timed_out()) d.user_stacks += "(" + timed_out + ")\n";
  if (!python) return;
  if (t.script.empty()) {
    d.python_note = "no Python stacks: no libpython gdb extension for Python " + t.python_version +
                    " under " + gdb_data_root + "/auto-load (install python3-dbg, or python" +
                    t.python_version + "-dbg)";
    return;
  }
  auto threads = parse_py_bt(g.python);
  for (const auto& th : threads)
    if (!th.frames.empty()) d.python_stacks += th.header + "\n" + th.text;
  if (const PythonThreadStack* h = hang_thread(threads, d.pid)) d.python_frames = h->frames;
  if (!d.python_frames.empty()) {
    if (c.timed_out() && !g.python_done)
      d.python_note = timed_out + ": the Python stacks may be incomplete";
  } else if (c.timed_out()) {
    d.python_note = "no Python stacks: " + timed_out;
  } else if (!g.c_done && !g.errors.empty()) {
    d.python_note = "no Python stacks: " + first_line(g.errors);
  } else {
    d.python_note = "no Python frames in any thread";
    if (!g.errors.empty()) d.python_note += " (gdb: " + first_line(g.errors) + ")";
  }
}

}  // namespace

Diagnosis diagnose(const std::vector<int>& pids, const DiagnoseOptions& o) {
  const Nanos start = monotonic_now();
  Diagnosis result;
  std::vector<ProcessDiagnosis>& out = result.processes;
  std::vector<Target> targets;
  ProcReader reader(o.proc_root);
  for (int pid : pids) {
    Nanos t0 = monotonic_now();
    ProcessDiagnosis d;
    d.pid = pid;
    std::string base = o.proc_root + "/" + std::to_string(pid);
    if (auto st = reader.stat(pid)) d.state = st->state;
    d.wchan = read_small_file(base + "/wchan").value_or("");
    auto k = read_small_file(base + "/stack");
    d.kernel_stack = k ? *k : "(not readable)";
    Target t;
    std::string exe = link_target(base + "/exe");
    t.python_version = python_version_of(exe);
    t.py_spy = !t.python_version.empty() && !o.py_spy.empty();
    if (!t.python_version.empty() && !t.py_spy && !o.gdb.empty())
      t.script = find_libpython_script(o.gdb_data_root, exe, t.python_version);
    d.took = monotonic_now() - t0;
    out.push_back(std::move(d));
    targets.push_back(std::move(t));
  }
  bool any_tool = false;
  for (const auto& t : targets) any_tool = any_tool || t.py_spy || !o.gdb.empty();
  if (!any_tool) {
    for (size_t i = 0; i < out.size(); ++i)
      if (!targets[i].python_version.empty())
        out[i].python_note =
            "no Python stacks: neither py-spy (pip install py-spy) nor gdb is installed";
    if (!out.empty()) result.note = "neither py-spy nor gdb installed: no user-space stacks";
    return result;
  }

  CommandBatchOptions b;
  b.parallel = o.parallel > 0 ? o.parallel : default_parallel();
  b.per_command = o.per_process;
  b.min_start = kSecond;  // less than a second cannot attach and take a stack
  b.while_waiting = o.while_waiting;
  auto argvs = [&](const std::vector<size_t>& which, bool load_all) {
    std::vector<std::vector<std::string>> a;
    for (size_t i : which) {
      if (targets[i].py_spy)
        a.push_back({o.py_spy, "dump", "--native", "--full-filenames", "--pid",
                     std::to_string(out[i].pid)});
      else
        a.push_back(gdb_stacks_argv({o.gdb, out[i].pid, targets[i].script, load_all}));
    }
    return a;
  };

  // Each process with its tool: py-spy for a Python interpreter where it is
  // installed, gdb for the rest where it is.
  std::vector<size_t> all;
  for (size_t i = 0; i < out.size(); ++i) {
    if (targets[i].py_spy || !o.gdb.empty())
      all.push_back(i);
    else if (!targets[i].python_version.empty())
      out[i].python_note = "no Python stacks: py-spy is not installed";
  }
  b.total = o.total - (monotonic_now() - start);
  auto runs = run_commands(argvs(all, false), b);
  if (o.gdb.empty()) {
    int without = 0;
    for (size_t i = 0; i < out.size(); ++i) without += targets[i].python_version.empty();
    if (without)
      result.note = "gdb not installed: no user-space stacks of " + std::to_string(without) +
                    " non-Python process(es)";
  }
  // A gdb whose loader did not run (no Python in that gdb) printed stacks
  // without the libraries' symbols: those processes again, every library loaded.
  std::map<size_t, GdbStacksOutput> split;
  std::map<size_t, size_t> run_of;  // process index -> index into runs
  std::vector<size_t> again;
  for (size_t k = 0; k < all.size(); ++k) {
    size_t i = all[k];
    run_of[i] = k;
    if (targets[i].py_spy) continue;
    const CommandOutcome& c = runs[k].outcome;
    split[i] = split_gdb_stacks(c.output);
    if (c.started() && !c.timed_out() && !split[i].loaded) again.push_back(i);
  }
  if (!again.empty()) {
    b.total = o.total - (monotonic_now() - start);
    auto second = run_commands(argvs(again, true), b);
    for (size_t j = 0; j < again.size(); ++j) {
      if (!second[j].ran) continue;  // the budget ran out: the first stacks are better than none
      size_t k = run_of[again[j]];
      out[again[j]].took += runs[k].took;
      runs[k] = second[j];
      split[again[j]] = split_gdb_stacks(second[j].outcome.output);
    }
  }

  int skipped = 0;
  for (size_t i : all) {
    ProcessDiagnosis& d = out[i];
    const BatchedCommand& run = runs[run_of[i]];
    if (!run.ran) {
      ++skipped;
      if (!targets[i].python_version.empty())
        d.python_note = "no Python stacks: the diagnosis budget ran out";
      continue;
    }
    d.took += run.took;
    if (targets[i].py_spy)
      take_py_spy(d, run, o.per_process);
    else
      take_stacks(d, targets[i], run, split[i], o.per_process, o.gdb_data_root);
  }
  if (skipped)
    result.note = std::to_string(skipped) + " process(es) without user stacks: the " +
                  format_duration(o.total) + " diagnosis budget ran out";
  return result;
}

std::map<int, std::string> open_collectives(const Timeline& tl) {
  std::map<int, std::string> open;
  for (const auto& o : tl.observations) {
    const auto* e = event_named(o, "collective");
    if (!e) continue;
    auto f = nlohmann::json::parse(e->fields_json, nullptr, false);
    if (!f.is_object()) continue;
    // Fixture-supplied: any field may have any type; ignore what is malformed.
    std::string state =
        f.contains("state") && f["state"].is_string() ? f["state"].get<std::string>() : "";
    if (state == "begin") {
      std::string op = f.contains("op") && f["op"].is_string() ? f["op"].get<std::string>() : "?";
      std::string seq = f.contains("seq") ? f["seq"].dump() : "?";
      open[e->pid] = op + " #" + seq;
    } else if (state == "end") {
      open.erase(e->pid);
    }
  }
  return open;
}

}  // namespace aftermath
