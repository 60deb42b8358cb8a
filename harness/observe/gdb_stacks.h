// One gdb attach that takes a process's C stacks and, for a Python
// interpreter, its Python stacks: the command line, and its output split
// back into those parts.
//
// Why it is shaped this way: attaching gdb to a PyTorch process costs seconds,
// almost all of it reading the symbols of the ~300 shared libraries such a
// process maps (libtorch_cpu alone is 120 MB). gdb starts with
// `auto-solib-add off` and a short Python loader then loads only the
// libraries the stacks pass through: it unwinds every thread, loads the
// library of the innermost frame that falls in one not yet loaded (frames
// past such a frame are not to be trusted), and repeats until no frame of any
// thread is in an unloaded library. The stacks printed afterwards are those a
// full load prints, for about half the time. A gdb without Python prints no
// "loaded" line; the caller then runs gdb again with every library loaded.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace aftermath {

struct GdbStacksCommand {
  std::string gdb;  // path to gdb
  int pid = 0;
  std::string libpython_script;  // set: also `thread apply all py-bt` with this extension
  bool load_all = false;         // every library's symbols, without the loader
};

// gdb's argv: batch mode, no init files, no auto-loaded scripts, no
// debuginfod; markers echoed between the parts.
std::vector<std::string> gdb_stacks_argv(const GdbStacksCommand& c);

// gdb's output, split at the markers.
struct GdbStacksOutput {
  bool loaded = false;       // the loader ran to its end (or load_all)
  bool c_done = false;       // the C stacks were printed completely
  bool python_done = false;  // the Python stacks were printed completely
  std::string c_stacks;      // "Thread ..." and "#N ..." lines only
  std::string python;        // py-bt's output, as printed
  std::string errors;        // the first lines gdb printed about a failure (attach refused, ...)
};
GdbStacksOutput split_gdb_stacks(std::string_view output);

}  // namespace aftermath
