#include "harness/observe/gdb_stacks.h"

#include <sstream>

namespace aftermath {

namespace {

// Run inside gdb (see the header): loads the libraries the stacks pass
// through, and only those. gdb's regular expressions are POSIX ones, so each
// character of a path other than [A-Za-z0-9/_-] is put in brackets.
constexpr const char* kLoader = R"(import gdb
def _aftermath_load():
    def pattern(name):
        return "^" + "".join(c if c.isalnum() or c in "/_-" else ("." if c in "^\\]" else "[" + c + "]") for c in name) + "$"
    tried = set()
    for _ in range(64):
        want = set()
        for th in gdb.selected_inferior().threads():
            try:
                th.switch()
                f = gdb.newest_frame()
                while f is not None:
                    lib = gdb.solib_name(f.pc())
                    if lib and lib not in tried:
                        want.add(lib)
                        break
                    f = f.older()
            except gdb.error:
                pass
        if not want:
            break
        for lib in sorted(want):
            tried.add(lib)
            try:
                gdb.execute("sharedlibrary " + pattern(lib), to_string=True)
            except gdb.error:
                pass
    print("aftermath-gdb:loaded %d" % len(tried))
_aftermath_load()
)";

constexpr const char* kCStacks = "aftermath-gdb:c-stacks";
constexpr const char* kCEnd = "aftermath-gdb:c-end";
constexpr const char* kPyStacks = "aftermath-gdb:py-stacks";
constexpr const char* kPyEnd = "aftermath-gdb:py-end";
constexpr const char* kLoaded = "aftermath-gdb:loaded";

std::string echo(const char* marker) { return std::string("echo \\n") + marker + "\\n"; }

// A Python string literal holding `code`, for `python exec(...)` on one line.
std::string python_literal(const std::string& code) {
  std::string s = "\"";
  for (char c : code) {
    if (c == '\\')
      s += "\\\\";
    else if (c == '"')
      s += "\\\"";
    else if (c == '\n')
      s += "\\n";
    else
      s += c;
  }
  return s + "\"";
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// What gdb says when it cannot do what was asked.
bool is_failure(const std::string& line) {
  for (const char* p : {"ptrace:", "Could not attach", "Python scripting is not supported",
                        "Python Exception", "Error occurred in Python", "Undefined command"})
    if (line.find(p) != std::string::npos) return true;
  return false;
}

}  // namespace

std::vector<std::string> gdb_stacks_argv(const GdbStacksCommand& c) {
  std::vector<std::string> a{c.gdb, "-nx", "-batch"};
  auto early = [&](const std::string& cmd) { a.insert(a.end(), {"-iex", cmd}); };
  auto later = [&](const std::string& cmd) { a.insert(a.end(), {"-ex", cmd}); };
  // Scripts are sourced by name below, not auto-loaded (libstdc++'s printers
  // cost time and change nothing here); symbols never come from the network;
  // gdb's indexing threads would only compete with the other gdbs.
  early("set auto-load off");
  early("set debuginfod enabled off");
  early("maint set worker-threads 0");
  if (!c.load_all) early("set auto-solib-add off");
  a.insert(a.end(), {"-p", std::to_string(c.pid)});
  later("set pagination off");
  if (!c.load_all) later("python exec(" + python_literal(kLoader) + ")");
  later(echo(kCStacks));
  later("thread apply all bt");
  later(echo(kCEnd));
  if (!c.libpython_script.empty()) {
    later("source " + c.libpython_script);
    later(echo(kPyStacks));
    later("thread apply all py-bt");
    later(echo(kPyEnd));
  }
  return a;
}

GdbStacksOutput split_gdb_stacks(std::string_view output) {
  GdbStacksOutput o;
  enum { Before, C, Between, Py, After } part = Before;
  std::stringstream in{std::string(output)};
  std::string line;
  int failures = 0;
  while (std::getline(in, line)) {
    if (line == kCStacks) {
      part = C;
      continue;
    }
    if (line == kCEnd) {
      part = Between;
      o.c_done = true;
      continue;
    }
    if (line == kPyStacks) {
      part = Py;
      continue;
    }
    if (line == kPyEnd) {
      part = After;
      o.python_done = true;
      continue;
    }
    if (starts_with(line, kLoaded)) {
      o.loaded = true;
      continue;
    }
    if (part == C) {
      if (starts_with(line, "#") || starts_with(line, "Thread ")) o.c_stacks += line + "\n";
    } else if (part == Py) {
      o.python += line + "\n";
    }
    if (failures < 3 && is_failure(line) && o.errors.find(line) == std::string::npos)
      o.errors += (failures++ ? "\n" : "") + line;
  }
  return o;
}

}  // namespace aftermath
