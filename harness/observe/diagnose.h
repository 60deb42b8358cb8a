// Hang diagnosis: what every live process of a hung job is doing, taken
// before teardown: state, wchan and kernel stack always; for a Python
// interpreter its Python stacks with the native frames between them from
// py-spy (`py-spy dump --native`: no debug package, any interpreter, a
// fraction of a second), else from gdb with the interpreter's libpython
// extension; for any other process (or a Python one without py-spy) the C
// stacks of every thread from gdb (harness/observe/gdb_stacks.h), in one
// attach per process. Several run at once. Each step has a time bound: a
// wedged process (state D, a stuck driver) must not wedge the harness.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "harness/core/timeline.h"

namespace aftermath {

struct DiagnoseOptions {
  std::string proc_root = "/proc";
  std::string gdb;     // path to gdb; empty: none
  std::string py_spy;  // path to py-spy; empty: Python stacks from gdb
  // Where gdb keeps its data: the libpython extension is looked for under
  // its auto-load folder (harness/observe/python_stack.h).
  std::string gdb_data_root = "/usr/share/gdb";
  int parallel = 0;                  // gdbs at once; 0: min(8, the CPUs the harness may use)
  Nanos per_process = 10 * kSecond;  // gdb bound for one process
  Nanos total = 30 * kSecond;        // bound for all of them
  // Called at least every 50 ms while gdb runs, and between processes: the
  // supervisor reads the job's events meanwhile, so a job that reports its
  // progress never blocks on a full socket while it is being looked at.
  std::function<void()> while_waiting;
};

// Finds gdb on PATH (empty if absent).
std::string find_gdb();
// py-spy for the jobs of `python` (an interpreter's path): the one beside it
// (a venv's bin/, where pip puts it), else on PATH, else in `extra_dir`;
// empty when there is none.
std::string find_py_spy(const std::string& python, const std::string& extra_dir = "");
// The debugger for user stacks: cuda-gdb where there is a GPU (dev_root holds
// nvidiactl) and cuda-gdb is on PATH or in /usr/local/cuda/bin, else gdb.
std::string find_debugger(const std::string& dev_root = "/dev");

// State, wchan, kernel stack (where readable) and, with gdb, the user-space
// stacks of every thread, for each pid, in the order given; for a process
// whose executable is a Python interpreter (pythonX.Y) also its Python stacks
// and frames, or python_note saying why there are none. `took` is each
// process's own share (its /proc reads and its gdb runs).
struct Diagnosis {
  std::vector<ProcessDiagnosis> processes;
  std::string note;  // what was left out and why; "" when nothing was
};
Diagnosis diagnose(const std::vector<int>& pids, const DiagnoseOptions& o);

// The collective each process last entered and did not leave, from the
// fixtures' "collective" events ({op, seq, state: begin|end}). pid -> "allreduce #7".
std::map<int, std::string> open_collectives(const Timeline& tl);

}  // namespace aftermath
