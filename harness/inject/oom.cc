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

Expected<std::string> lower_address_space(int pid, std::int64_t headroom,
                                          const std::string& proc_root) {
  auto status = read_small_file(proc_root + "/" + std::to_string(pid) + "/status");
  auto vm = status ? parse_vm_size(*status) : std::nullopt;
  if (!vm) return Error{"cannot read the address-space size of pid " + std::to_string(pid)};
  rlimit old{};
  rlimit lim{};
  if (prlimit(pid, RLIMIT_AS, nullptr, &old) != 0) return sys_error("prlimit");
  lim.rlim_cur = static_cast<rlim_t>(*vm + headroom);
  lim.rlim_max = old.rlim_max;
  if (lim.rlim_cur > lim.rlim_max) lim.rlim_cur = lim.rlim_max;
  if (prlimit(pid, RLIMIT_AS, &lim, nullptr) != 0) return sys_error("prlimit");
  return "RLIMIT_AS of pid " + std::to_string(pid) + " lowered to " + std::to_string(lim.rlim_cur) +
         " bytes (its size + " + std::to_string(headroom) + ")";
}

}  // namespace aftermath
