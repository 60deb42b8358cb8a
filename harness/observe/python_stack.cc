#include "harness/observe/python_stack.h"

#include <filesystem>
#include <regex>
#include <sstream>
#include <system_error>

namespace aftermath {

namespace fs = std::filesystem;

namespace {

std::string basename_of(std::string_view path) {
  auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// "Thread 3 (Thread 0x7f98 (LWP 1691) "python3"):", "Thread 1 (process 42):",
// "Thread 2 (LWP 43 "x"):": the thread's id, 0 if it shows none.
int lwp_of_header(const std::string& line) {
  static const std::regex id(R"(\((?:LWP|process) (\d+)[ )])");
  std::smatch m;
  return std::regex_search(line, m, id) ? std::stoi(m[1]) : 0;
}

bool is_idle(const PythonThreadStack& t) {
  if (t.frames.empty()) return true;
  std::string file = basename_of(t.frames.front().file);
  return is_installed_python_file(t.frames.front().file) &&
         (file == "threading.py" || file == "queue.py");
}

}  // namespace

std::string python_version_of(const std::string& exe) {
  static const std::regex name(R"(python(\d+\.\d+)[a-z]*)");
  std::smatch m;
  std::string base = basename_of(exe);
  return std::regex_match(base, m, name) ? m[1].str() : std::string();
}

std::string find_libpython_script(const std::string& gdb_data_root, const std::string& exe,
                                  const std::string& version) {
  if (version.empty()) return {};
  const fs::path root = fs::path(gdb_data_root) / "auto-load";
  std::error_code ec;
  // The path gdb's own auto-load would take for this executable.
  if (!exe.empty() && exe.front() == '/') {
    fs::path own = root.string() + exe + "-gdb.py";
    if (fs::is_regular_file(own, ec)) return own.string();
  }
  // Else by name, anywhere under auto-load (usr/bin, usr/lib/<triplet>, ...):
  // the interpreter's script first, then the shared library's (the same
  // extension, for an interpreter linked against libpython).
  const std::string interp = "python" + version + "-gdb.py";
  const std::string lib = "libpython" + version + ".so";
  std::string lib_found;
  for (fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    if (it.depth() > 8) it.disable_recursion_pending();
    if (!it->is_regular_file(ec)) continue;
    std::string name = it->path().filename().string();
    if (name == interp) return it->path().string();
    if (lib_found.empty() && starts_with(name, lib) && name.size() > 7 &&
        name.compare(name.size() - 7, 7, "-gdb.py") == 0)
      lib_found = it->path().string();
  }
  return lib_found;
}

std::vector<PythonThreadStack> parse_py_bt(std::string_view text) {
  static const std::regex frame_re(R"re(^\s*File "(.*)", line (\d+|\?), in (.*)$)re");
  std::vector<PythonThreadStack> out;
  std::stringstream in{std::string(text)};
  std::string line;
  PythonFrame* last = nullptr;  // the frame a following source line belongs to
  auto current = [&]() -> PythonThreadStack& {
    if (out.empty()) out.emplace_back();  // a single py-bt: one thread, no header
    return out.back();
  };
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (starts_with(line, "Thread ") && line.find('(') != std::string::npos) {
      PythonThreadStack t;
      t.header = line;
      t.lwp = lwp_of_header(line);
      out.push_back(std::move(t));
      last = nullptr;
      continue;
    }
    if (line.empty()) continue;
    std::smatch m;
    if (std::regex_match(line, m, frame_re)) {
      PythonThreadStack& t = current();
      // "line ?": py-bt could not compute it; the frame is still there.
      int at = m[2].str() == "?" ? 0 : std::stoi(m[2].str());
      t.frames.push_back(PythonFrame{m[1].str(), at, m[3].str(), ""});
      last = &t.frames.back();
      t.text += line + "\n";
      continue;
    }
    // py-bt prints a frame's source line indented by four, right after it,
    // or in parentheses why it could not ("(failed to get frame line number)").
    if (last && last->code.empty() && starts_with(line, "    ") &&
        line.find_first_not_of(' ') != std::string::npos &&
        line[line.find_first_not_of(' ')] != '(') {
      last->code = line.substr(line.find_first_not_of(' '));
      current().text += line + "\n";
      last = nullptr;
      continue;
    }
    last = nullptr;
    current().text += line + "\n";
  }
  return out;
}

std::vector<PythonThreadStack> parse_py_spy_dump(std::string_view text) {
  static const std::regex header(R"re(^Thread (?:0x[0-9a-fA-F]+|(\d+)) .*)re");
  static const std::regex frame(R"re(^\s+(.*) \((.*):(\d+)\)$)re");
  std::vector<PythonThreadStack> out;
  std::stringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::smatch m;
    if (std::regex_match(line, m, header)) {
      PythonThreadStack t;
      t.header = line;
      t.lwp = m[1].matched ? std::stoi(m[1].str()) : 0;
      out.push_back(std::move(t));
      continue;
    }
    if (out.empty() || line.empty()) continue;  // the "Process ..." and "Python v..." lines
    PythonThreadStack& t = out.back();
    t.text += line + "\n";
    // A native frame with debug information has a file and line too: only
    // Python source ("x.py", "<string>", "<frozen runpy>") makes a frame.
    if (std::regex_match(line, m, frame)) {
      std::string file = m[2].str();
      bool python = file.size() > 3 && file.compare(file.size() - 3, 3, ".py") == 0;
      if (python || (!file.empty() && file[0] == '<'))
        t.frames.push_back(PythonFrame{file, std::stoi(m[3].str()), m[1].str(), ""});
    }
  }
  return out;
}

const PythonThreadStack* hang_thread(const std::vector<PythonThreadStack>& threads, int pid) {
  const PythonThreadStack* main = nullptr;
  for (const auto& t : threads)
    if (t.lwp == pid || (threads.size() == 1 && t.lwp == 0)) main = &t;
  if (main && !is_idle(*main)) return main;
  for (const auto& t : threads)
    if (&t != main && !is_idle(t)) return &t;
  if (main && !main->frames.empty()) return main;
  for (const auto& t : threads)
    if (!t.frames.empty()) return &t;
  return nullptr;
}

bool is_installed_python_file(std::string_view file) {
  static const std::regex stdlib(R"(/lib(64)?/python\d+(\.\d+)?[a-z]*/)");
  if (starts_with(file, "<frozen")) return true;
  std::string f(file);
  if (f.find("/site-packages/") != std::string::npos ||
      f.find("/dist-packages/") != std::string::npos)
    return true;
  return std::regex_search(f, stdlib);
}

std::string python_where(const std::vector<PythonFrame>& frames) {
  if (frames.empty()) return {};
  auto at = [](const PythonFrame& f) {
    return basename_of(f.file) + (f.line > 0 ? ":" + std::to_string(f.line) : std::string());
  };
  const PythonFrame& inner = frames.front();
  std::string s = inner.function + " (" + at(inner) + ")";
  if (!is_installed_python_file(inner.file)) return s;
  for (const auto& f : frames)
    if (!is_installed_python_file(f.file)) return s + " called from " + at(f);
  return s;
}

}  // namespace aftermath
