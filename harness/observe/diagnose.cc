#include "harness/observe/diagnose.h"

#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/os/spawn.h"
#include "harness/observe/proc.h"

namespace aftermath {

namespace {

std::string find_in_path(const std::string& name, const std::string& extra_dir = "") {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  if (!extra_dir.empty()) dirs += ":" + extra_dir;
  std::stringstream ss(dirs);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    std::string cand = (dir.empty() ? "." : dir) + "/" + name;
    if (::access(cand.c_str(), X_OK) == 0) return cand;
  }
  return {};
}

}  // namespace

std::string find_gdb() { return find_in_path("gdb"); }

std::string find_debugger(const std::string& dev_root) {
  // On a GPU machine cuda-gdb (a gdb that also understands CUDA contexts)
  // when the toolkit has one; gdb otherwise.
  if (::access((dev_root + "/nvidiactl").c_str(), F_OK) == 0) {
    std::string cuda = find_in_path("cuda-gdb", "/usr/local/cuda/bin");
    if (!cuda.empty()) return cuda;
  }
  return find_gdb();
}

namespace {

// Runs gdb in batch mode on one process with a deadline; its output, or why not.
std::string user_stacks(const std::string& gdb, int pid, Nanos bound,
                        const std::function<void()>& while_waiting) {
  CommandOutcome c = run_command({gdb, "-nx", "-batch", "-p", std::to_string(pid), "-ex",
                                  "set pagination off", "-ex", "thread apply all bt"},
                                 bound, 256 * 1024, while_waiting);
  if (!c.started) return "(cannot start gdb: " + c.output + ")";
  bool timed_out = c.timed_out;
  const std::string& text = c.output;
  // Keep the stacks, drop gdb's chatter about symbols and threads.
  std::stringstream in(text), kept;
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("#", 0) == 0 || line.rfind("Thread ", 0) == 0) kept << line << "\n";
  std::string s = kept.str();
  if (timed_out) s += "(gdb timed out after " + format_duration(bound) + ")\n";
  return s.empty() ? "(no stacks: " + text.substr(0, 300) + ")" : s;
}

}  // namespace

std::vector<ProcessDiagnosis> diagnose(const std::vector<int>& pids, const DiagnoseOptions& o,
                                       std::string* note) {
  std::vector<ProcessDiagnosis> out;
  ProcReader reader(o.proc_root);
  Nanos start = monotonic_now();
  int skipped = 0;
  for (int pid : pids) {
    ProcessDiagnosis d;
    d.pid = pid;
    std::string base = o.proc_root + "/" + std::to_string(pid);
    if (auto st = reader.stat(pid)) d.state = st->state;
    d.wchan = read_small_file(base + "/wchan").value_or("");
    auto k = read_small_file(base + "/stack");
    d.kernel_stack = k ? *k : "(not readable)";
    if (!o.gdb.empty()) {
      Nanos left = o.total - (monotonic_now() - start);
      if (left > kSecond) {
        d.user_stacks = user_stacks(o.gdb, pid, std::min(left, o.per_process), o.while_waiting);
      } else {
        ++skipped;
      }
    }
    out.push_back(std::move(d));
  }
  if (note) {
    if (o.gdb.empty()) *note = "gdb not installed: no user-space stacks";
    else if (skipped) *note = std::to_string(skipped) + " process(es) without user stacks: the " +
                              format_duration(o.total) + " diagnosis budget ran out";
  }
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
