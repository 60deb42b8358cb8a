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

std::string find_debugger(const std::string& dev_root) {
  // On a GPU machine cuda-gdb (a gdb that also understands CUDA contexts)
  // when the toolkit has one; gdb otherwise.
  if (::access((dev_root + "/nvidiactl").c_str(), F_OK) == 0) {
    if (auto cuda = find_program("cuda-gdb", "/usr/local/cuda/bin")) return *cuda;
  }
  return find_gdb();
}

namespace {

// What the diagnosis needs to know about one process before gdb runs.
struct Target {
  std::string python_version;  // "3.11" for a Python interpreter, else empty
  std::string script;          // its libpython gdb extension, where found
};

// The executable a process runs, as a path, from /proc/PID/exe.
std::string link_target(const std::string& path) {
  std::string s = read_link(path).value_or("");
  const std::string deleted = " (deleted)";  // an executable replaced on disk while it runs
  if (s.size() > deleted.size() && s.compare(s.size() - deleted.size(), deleted.size(), deleted) == 0)
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
  if (!c.started) {
    d.user_stacks = "(cannot start gdb: " + c.output + ")";
    if (python) d.python_note = "no Python stacks: gdb could not start";
    return;
  }
  d.user_stacks = g.c_stacks.empty() ? "(no stacks: " + (g.errors.empty() ? c.output.substr(0, 300) : g.errors) + ")"
                                     : g.c_stacks;
  // Killed at its own bound, or earlier, when the whole diagnosis's ran out.
  const std::string timed_out = run.took >= bound ? "gdb timed out after " + format_duration(bound)
                                                  : "gdb stopped when the diagnosis budget ran out";
  if (c.timed_out) d.user_stacks += "(" + timed_out + ")\n";
  if (!python) return;
  if (t.script.empty()) {
    d.python_note = "no Python stacks: no libpython gdb extension for Python " + t.python_version + " under " +
                    gdb_data_root + "/auto-load (install python3-dbg, or python" + t.python_version + "-dbg)";
    return;
  }
  auto threads = parse_py_bt(g.python);
  for (const auto& th : threads)
    if (!th.frames.empty()) d.python_stacks += th.header + "\n" + th.text;
  if (const PythonThreadStack* h = hang_thread(threads, d.pid)) d.python_frames = h->frames;
  if (!d.python_frames.empty()) {
    if (c.timed_out && !g.python_done) d.python_note = timed_out + ": the Python stacks may be incomplete";
  } else if (c.timed_out) {
    d.python_note = "no Python stacks: " + timed_out;
  } else if (!g.c_done && !g.errors.empty()) {
    d.python_note = "no Python stacks: " + first_line(g.errors);
  } else {
    d.python_note = "no Python frames in any thread";
    if (!g.errors.empty()) d.python_note += " (gdb: " + first_line(g.errors) + ")";
  }
}

}  // namespace

std::vector<ProcessDiagnosis> diagnose(const std::vector<int>& pids, const DiagnoseOptions& o,
                                       std::string* note) {
  const Nanos start = monotonic_now();
  std::vector<ProcessDiagnosis> out;
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
    if (!t.python_version.empty() && !o.gdb.empty())
      t.script = find_libpython_script(o.gdb_data_root, exe, t.python_version);
    d.took = monotonic_now() - t0;
    out.push_back(std::move(d));
    targets.push_back(std::move(t));
  }
  if (o.gdb.empty()) {
    for (size_t i = 0; i < out.size(); ++i)
      if (!targets[i].python_version.empty()) out[i].python_note = "no Python stacks: gdb is not installed";
    if (note) *note = "gdb not installed: no user-space stacks";
    return out;
  }

  BatchOptions b;
  b.parallel = o.parallel > 0 ? o.parallel : default_parallel();
  b.per_command = o.per_process;
  b.min_start = kSecond;  // less than a second cannot attach and take a stack
  b.while_waiting = o.while_waiting;
  auto argvs = [&](const std::vector<size_t>& which, bool load_all) {
    std::vector<std::vector<std::string>> a;
    for (size_t i : which)
      a.push_back(gdb_stacks_argv({o.gdb, out[i].pid, targets[i].script, load_all}));
    return a;
  };

  std::vector<size_t> all(out.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  b.total = o.total - (monotonic_now() - start);
  auto runs = run_commands(argvs(all, false), b);
  // A gdb whose loader did not run (no Python in that gdb) printed stacks
  // without the libraries' symbols: those processes again, every library loaded.
  std::vector<GdbStacksOutput> split;
  std::vector<size_t> again;
  for (size_t i : all) {
    const CommandOutcome& c = runs[i].outcome;
    split.push_back(split_gdb_stacks(c.output));
    if (c.started && !c.timed_out && !split[i].loaded) again.push_back(i);
  }
  if (!again.empty()) {
    b.total = o.total - (monotonic_now() - start);
    auto second = run_commands(argvs(again, true), b);
    for (size_t j = 0; j < again.size(); ++j) {
      if (!second[j].ran) continue;  // the budget ran out: the first stacks are better than none
      out[again[j]].took += runs[again[j]].took;
      runs[again[j]] = second[j];
      split[again[j]] = split_gdb_stacks(second[j].outcome.output);
    }
  }

  int skipped = 0;
  for (size_t i : all) {
    ProcessDiagnosis& d = out[i];
    if (!runs[i].ran) {
      ++skipped;
      if (!targets[i].python_version.empty()) d.python_note = "no Python stacks: the diagnosis budget ran out";
      continue;
    }
    d.took += runs[i].took;
    take_stacks(d, targets[i], runs[i], split[i], o.per_process, o.gdb_data_root);
  }
  if (note && skipped)
    *note = std::to_string(skipped) + " process(es) without user stacks: the " + format_duration(o.total) +
            " diagnosis budget ran out";
  return out;
}

std::map<int, std::string> open_collectives(const Timeline& tl) {
  std::map<int, std::string> open;
  for (const auto& o : tl.observations) {
    if (o.kind != ObsKind::Event || o.name != "collective") continue;
    auto f = nlohmann::json::parse(o.text, nullptr, false);
    if (!f.is_object()) continue;
    // Fixture-supplied: any field may have any type; ignore what is malformed.
    std::string state = f.contains("state") && f["state"].is_string() ? f["state"].get<std::string>() : "";
    if (state == "begin") {
      std::string op = f.contains("op") && f["op"].is_string() ? f["op"].get<std::string>() : "?";
      std::string seq = f.contains("seq") ? f["seq"].dump() : "?";
      open[o.pid] = op + " #" + seq;
    } else if (state == "end") {
      open.erase(o.pid);
    }
  }
  return open;
}

}  // namespace aftermath
