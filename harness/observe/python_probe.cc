#include "harness/observe/python_probe.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "harness/os/find_program.h"
#include "harness/os/spawn.h"

namespace aftermath {

namespace {

namespace fs = std::filesystem;

constexpr Nanos kProbeDeadline = 60 * kSecond;

// What the interpreter says about itself and its torch, as one marked JSON
// line. torch is found, not imported (an import costs seconds on a loaded
// machine, for every run): its version and the values that matter here are
// read from its own source files, each on its own so that one a release
// lacks leaves the rest to the version table.
constexpr const char* kProbe = R"PY(
import importlib.util, json, os, platform, re
d = {"python": platform.python_version()}
try:
    spec = importlib.util.find_spec("torch")
except BaseException as e:
    spec = None
    d["torch_error"] = "%s: %s" % (type(e).__name__, e)
if spec is None or not spec.submodule_search_locations:
    d.setdefault("torch_error", "No module named 'torch'")
else:
    root = list(spec.submodule_search_locations)[0]
    def src(rel):
        try:
            with open(os.path.join(root, rel)) as f:
                return f.read()
        except OSError:
            return ""
    def find(rel, pattern):
        m = re.search(pattern, src(rel), re.M | re.S)
        return m.group(1) if m else None
    v = find("version.py", r"^__version__\s*=\s*['\"]([^'\"]+)")
    if v is None:
        d["torch_error"] = "torch at %s has no version.py" % root
    else:
        d["torch"] = v
        d["location"] = root
        d["cuda"] = find("version.py", r"^cuda\b[^=\n]*=\s*['\"]([^'\"]+)") or "none"
        i = find("utils/data/_utils/__init__.py", r"^MP_STATUS_CHECK_INTERVAL\s*=\s*([0-9.]+)")
        if i: d["loader_status_interval"] = float(i)
        i = find("distributed/run.py", r"\"--monitor[-_]interval\",[^)]*?default=([0-9.]+)")
        if i: d["monitor_interval"] = float(i)
        for rel in ("distributed/elastic/multiprocessing/subprocess_handler/subprocess_handler.py",
                    "distributed/elastic/multiprocessing/api.py"):
            if re.search(r"start_new_session['\"\]]*\s*=\s*True", src(rel)):
                d["new_session"] = True
        if src("distributed/elastic/multiprocessing/api.py"):
            d.setdefault("new_session", False)
print("\naftermath-facts " + json.dumps(d), flush=True)
)PY";

std::mutex g_mu;
std::map<std::string, PythonFacts> g_cache;

PythonFacts run_probe(const std::string& interpreter) {
  PythonFacts f = default_python_facts();
  f.interpreter = interpreter;
  CommandOutcome c = run_command({interpreter, "-c", kProbe}, kProbeDeadline, 64 * 1024);
  auto last_line = [&] {
    std::string s = c.output;
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    auto nl = s.rfind('\n');
    return nl == std::string::npos ? s : s.substr(nl + 1);
  };
  if (!c.started()) {
    f.probe_error = interpreter + " cannot run: " + last_line();
    return f;
  }
  if (c.timed_out()) {
    f.probe_error = interpreter + " did not answer within 60s";
    return f;
  }
  auto at = c.output.rfind("aftermath-facts ");
  if (at == std::string::npos || !c.exited_zero()) {
    std::string said = last_line();
    f.probe_error =
        interpreter + " is not a Python that runs (" + (said.empty() ? "no output" : said) + ")";
    return f;
  }
  auto end = c.output.find('\n', at);
  nlohmann::json d = nlohmann::json::parse(
      c.output.substr(at + 16, end == std::string::npos ? std::string::npos : end - at - 16),
      nullptr, false);
  if (!d.is_object()) {
    f.probe_error = interpreter + ": the probe's answer is not JSON";
    return f;
  }
  f.source = "probe";
  f.python = d.value("python", "");
  if (d.contains("torch")) {
    f.torch = parse_torch_version(d["torch"].get<std::string>());
    if (!f.torch)
      f.torch_error = "an unknown torch version '" + d["torch"].get<std::string>() + "'";
  } else {
    f.torch_error = d.value("torch_error", "torch does not import");
  }
  if (f.torch) {
    TorchBehaviour b = torch_behaviour(*f.torch);
    f.shm_manager_linger = b.shm_manager_linger;
    f.torchrun_signals_sessions = b.torchrun_signals_sessions;
    f.torchrun_monitor_interval = b.torchrun_monitor_interval;
    f.torch_cuda = d.value("cuda", "none");
    auto seconds = [&](const char* key, Nanos& out) {
      if (d.contains(key) && d[key].is_number() && d[key].get<double>() >= 0 &&
          d[key].get<double>() < 3600)
        out = static_cast<Nanos>(d[key].get<double>() * 1e9);
    };
    seconds("loader_status_interval", f.loader_status_interval);
    seconds("monitor_interval", f.torchrun_monitor_interval);
    if (d.contains("new_session") && d["new_session"].is_boolean())
      f.torchrun_signals_sessions = d["new_session"].get<bool>();
  }
  return f;
}

// The interpreter named on a "#!" line: "/usr/bin/python3", or "python3"
// after /usr/bin/env, resolved on PATH.
std::optional<std::string> shebang_python(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[2] = {};
  if (!in.read(head, 2) || head[0] != '#' || head[1] != '!') return std::nullopt;
  std::string line;
  std::getline(in, line);
  std::vector<std::string> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (j > i) words.push_back(line.substr(i, j - i));
    i = j;
  }
  if (words.empty()) return std::nullopt;
  std::string prog = words[0];
  if (fs::path(prog).filename() == "env") {
    // `env [-S] python3 ...`
    size_t k = 1;
    while (k < words.size() && words[k][0] == '-') ++k;
    if (k >= words.size()) return std::nullopt;
    prog = words[k];
    if (prog.find('/') == std::string::npos) {
      auto found = find_program(prog);
      if (!found) return std::nullopt;
      prog = *found;
    }
  }
  if (fs::path(prog).filename().string().rfind("python", 0) != 0) return std::nullopt;
  return prog;
}

}  // namespace

std::optional<std::string> job_python(const std::vector<std::string>& argv) {
  if (argv.empty()) return std::nullopt;
  if (fs::path(argv[0]).filename().string().rfind("python", 0) == 0) return argv[0];
  std::string prog = argv[0];
  if (prog.find('/') == std::string::npos) {
    auto found = find_program(prog);
    if (!found) return std::nullopt;
    prog = *found;
  }
  return shebang_python(prog);
}

PythonFacts probe_python(const std::string& interpreter) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (auto it = g_cache.find(interpreter); it != g_cache.end()) return it->second;
  }
  PythonFacts f = run_probe(interpreter);
  std::lock_guard<std::mutex> lock(g_mu);
  return g_cache.emplace(interpreter, std::move(f)).first->second;
}

PythonFacts facts_for_job(const std::vector<std::string>& argv, const std::string& fallback) {
  if (auto py = job_python(argv)) return probe_python(*py);
  if (!fallback.empty()) return probe_python(fallback);
  return default_python_facts();
}

}  // namespace aftermath
