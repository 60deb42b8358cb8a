// Python stacks of a hung process, as py-spy prints them (`py-spy dump`: no
// debug package needed, any interpreter) or as gdb's libpython extension
// prints them (`py-bt`), and where that extension lives. Parsing is apart
// from I/O: the parsers take the tools' text, the finder takes the folder
// to look in.
//
// The extension ships with the interpreter's debug package (Debian:
// python3-dbg, which installs python3.X-gdb.py and libpython3.X.so.1.0-gdb.py
// under /usr/share/gdb/auto-load). It must match the interpreter's version:
// it reads the interpreter's own structures.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "harness/core/timeline.h"

namespace aftermath {

// "X.Y" for an interpreter executable named pythonX.Y (/usr/bin/python3.11,
// a venv's or pyenv's python3.12, a debug build's python3.11d); empty for any
// other file, including a bare "python3".
std::string python_version_of(const std::string& exe);

// gdb's libpython extension for the interpreter at `exe` (version "X.Y"),
// under gdb_data_root/auto-load: the one gdb would auto-load for that very
// file, else any pythonX.Y-gdb.py, else any libpythonX.Y.so*-gdb.py. Empty
// when there is none (the debug package is not installed).
std::string find_libpython_script(const std::string& gdb_data_root, const std::string& exe,
                                  const std::string& version);

// One thread's part of `thread apply all py-bt`.
struct PythonThreadStack {
  int lwp = 0;                      // the thread's id (the pid for the main thread); 0: not shown
  std::string header;               // gdb's "Thread N (...)" line
  std::vector<PythonFrame> frames;  // innermost first; empty: no Python frame in this thread
  std::string text;                 // py-bt's lines for this thread, as printed
};

// Parses the output of gdb's `thread apply all py-bt` (or one `py-bt`, as a
// single thread with lwp 0). C calls (<built-in method ...>) and frames
// py-bt could not read are kept in `text` only; they are not frames.
std::vector<PythonThreadStack> parse_py_bt(std::string_view text);

// Parses `py-spy dump --native --full-filenames` of one process: a thread
// per "Thread TID (state): \"name\"" header; "function (file:line)" lines are
// Python frames, others (native frames: "function (library)", "0x7f..
// (library)") are kept in `text` only. Without --native there are only
// Python frames.
std::vector<PythonThreadStack> parse_py_spy_dump(std::string_view text);

// The thread whose Python stack most likely holds the hang: the main thread
// (lwp == pid, or the only one shown) when it runs Python and is not idle;
// else the first other thread that runs Python and is not idle; else the
// main thread if it runs Python at all; else the first that does. Idle means
// waiting on another thread of the same process: its innermost frame is in
// the standard library's threading.py or queue.py (a main thread that joins
// the thread doing the work or waits for its queue.Queue). Waiting on another
// process (a socket, a pipe, multiprocessing's queues, a collective) is not
// idle: that is where a hang shows.
// nullptr when no thread runs Python.
const PythonThreadStack* hang_thread(const std::vector<PythonThreadStack>& threads, int pid);

// True for a file of the Python installation rather than the user's code: the
// standard library (.../lib/pythonX.Y/...), site-packages and dist-packages
// (where torch lives), and frozen modules ("<frozen runpy>").
bool is_installed_python_file(std::string_view file);

// Where a Python stack (innermost first) is, in a few words: the innermost
// frame and the innermost frame of the user's code, by file name:
// "all_reduce (distributed_c10d.py:1536) called from train.py:42", or
// "step (train.py:42)" when the innermost frame is the user's. Empty
// without frames.
std::string python_where(const std::vector<PythonFrame>& frames);

}  // namespace aftermath
