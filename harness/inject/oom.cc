#include "harness/inject/oom.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstring>
#include <sstream>

#include "harness/observe/proc.h"

namespace aftermath {

std::optional<std::int64_t> parse_vm_size(const std::string& c) {
  auto pos = c.find("VmSize:");
  if (pos == std::string::npos) return std::nullopt;
  std::istringstream in(c.substr(pos + 7));
  std::int64_t kb = 0;
  std::string unit;
  if (!(in >> kb >> unit) || unit != "kB") return std::nullopt;
  return kb * 1024;
}

OomAction lower_address_space(int pid, std::int64_t headroom, const std::string& proc_root) {
  OomAction a;
  a.mechanism = "rlimit";
  auto status = read_small_file(proc_root + "/" + std::to_string(pid) + "/status");
  auto vm = status ? parse_vm_size(*status) : std::nullopt;
  if (!vm) {
    a.detail = "cannot read the address-space size of pid " + std::to_string(pid);
    return a;
  }
  rlimit old{};
  rlimit lim{};
  if (prlimit(pid, RLIMIT_AS, nullptr, &old) != 0) {
    a.detail = std::string("prlimit: ") + std::strerror(errno);
    return a;
  }
  lim.rlim_cur = static_cast<rlim_t>(*vm + headroom);
  lim.rlim_max = old.rlim_max;
  if (lim.rlim_cur > lim.rlim_max) lim.rlim_cur = lim.rlim_max;
  if (prlimit(pid, RLIMIT_AS, &lim, nullptr) != 0) {
    a.detail = std::string("prlimit: ") + std::strerror(errno);
    return a;
  }
  a.done = true;
  a.detail = "RLIMIT_AS of pid " + std::to_string(pid) + " lowered to " +
             std::to_string(lim.rlim_cur) + " bytes (its size + " + std::to_string(headroom) + ")";
  return a;
}

std::optional<std::string> cgroup_memory_unavailable(const std::string& proc_root,
                                                     const std::string& cgroup_root) {
  auto cg = read_small_file(proc_root + "/self/cgroup");
  if (!cg) return "cannot read " + proc_root + "/self/cgroup";
  std::istringstream in(*cg);
  std::string line, v2path;
  while (std::getline(in, line)) {
    // "N:controllers:path"; cgroup v1 lines name their controllers.
    auto a = line.find(':');
    auto b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string ctrls = line.substr(a + 1, b - a - 1);
    if (ctrls.find("memory") != std::string::npos)
      return "the memory controller is on cgroup v1 here; a cgroup v2 memory.max needs it on v2";
    if (line.compare(0, 2, "0:") == 0 && ctrls.empty()) v2path = line.substr(b + 1);
  }
  if (v2path.empty()) return "no cgroup v2 hierarchy for this process";
  for (const std::string& base : {cgroup_root, cgroup_root + "/unified"}) {
    std::string dir = base + v2path;
    auto controllers = read_small_file(dir + "/cgroup.controllers");
    if (!controllers) continue;
    if (controllers->find("memory") == std::string::npos)
      return "the memory controller is not enabled for " + dir;
    if (access((dir + "/cgroup.subtree_control").c_str(), W_OK) != 0 ||
        access((dir + "/cgroup.procs").c_str(), W_OK) != 0)
      return dir + " is not delegated to us (not writable)";
    return std::nullopt;
  }
  return "no cgroup v2 directory found for " + v2path;
}

}  // namespace aftermath
