#include "harness/observe/roles.h"

#include <cmath>
#include <cstdlib>
#include <vector>

namespace aftermath {

namespace {

constexpr std::uint64_t bit(int sig) { return std::uint64_t(1) << (sig - 1); }

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string_view basename(std::string_view p) {
  auto slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

}  // namespace

bool has_loader_worker_handlers(std::uint64_t sigcgt) {
  constexpr std::uint64_t kWorker = bit(7) | bit(8) | bit(11) | bit(15);  // BUS FPE SEGV TERM
  return (sigcgt & kWorker) == kWorker;
}

bool is_helper_process(std::string_view comm, std::string_view cmdline) {
  // /proc truncates comm to 15 characters.
  if (comm == "torch_shm_manag" || contains(cmdline, "torch_shm_manager")) return true;
  for (std::string_view m : {"multiprocessing.resource_tracker",
                             "multiprocessing.semaphore_tracker", "multiprocessing.forkserver"})
    if (contains(cmdline, std::string("from ") + std::string(m) + " import main")) return true;
  return false;
}

bool is_torchrun_agent(std::string_view cmdline) {
  auto w = words(cmdline);
  // `torchrun ...`, `python3 /usr/bin/torchrun ...` (or a wrapper named for
  // it), `python3 -m torch.distributed.run|launch ...`.
  for (size_t i = 0; i < w.size() && i < 2; ++i)
    if (contains(basename(w[i]), "torchrun")) return true;
  for (size_t i = 0; i + 1 < w.size() && i < 3; ++i)
    if (w[i] == "-m" &&
        (w[i + 1] == "torch.distributed.run" || w[i + 1] == "torch.distributed.launch"))
      return true;
  return false;
}

bool is_spawn_child(std::string_view cmdline) {
  return contains(cmdline, "from multiprocessing.spawn import spawn_main") ||
         contains(cmdline, "--multiprocessing-fork");
}

std::optional<Nanos> launcher_poll_interval(std::string_view cmdline, Nanos default_interval) {
  if (!is_torchrun_agent(cmdline)) return std::nullopt;
  Nanos interval = default_interval;  // torch/distributed/run.py's --monitor-interval default
  auto w = words(cmdline);
  for (size_t i = 0; i < w.size(); ++i) {
    std::string_view a = w[i], value;
    for (std::string_view name : {"--monitor_interval", "--monitor-interval"}) {
      if (a == name && i + 1 < w.size())
        value = w[i + 1];
      else if (a.size() > name.size() && a.substr(0, name.size()) == name && a[name.size()] == '=')
        value = a.substr(name.size() + 1);
    }
    if (value.empty()) continue;
    std::string v(value);
    char* end = nullptr;
    double s = std::strtod(v.c_str(), &end);
    if (end && *end == 0 && std::isfinite(s) && s >= 0) interval = static_cast<Nanos>(s * 1e9);
  }
  return interval;
}

std::optional<int> parse_rank_value(std::string_view text) {
  if (text.empty() || text.size() > 9 ||
      text.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  return std::atoi(std::string(text).c_str());
}

InferredRole infer_role(const RoleEvidence& self, const RoleParent* parent) {
  InferredRole r;
  if (is_helper_process(self.comm, self.cmdline)) {
    r.role = Role::Helper;
    r.final = true;
    r.why = contains(self.cmdline, "torch_shm_manager") || self.comm == "torch_shm_manag"
                ? "torch_shm_manager"
                : "a multiprocessing helper";
    return r;
  }
  if (self.is_top) {
    r.role = Role::Launcher;
    r.final = true;
    r.why = "the job's top process";
    return r;
  }
  if (is_torchrun_agent(self.cmdline)) {
    // A fork of the agent not yet exec'd (its rank-to-be) carries the
    // agent's command line, environment and signal handlers (faulthandler's
    // SIGSEGV, SIGFPE, SIGBUS and the agent's SIGTERM: a DataLoader worker's
    // signature): it is nothing yet, and its exec says what it is.
    if (parent && parent->cmdline == self.cmdline) return r;
    r.role = Role::Launcher;
    r.final = true;
    r.why = "torchrun's elastic agent";
    return r;
  }
  if (self.caught && has_loader_worker_handlers(*self.caught)) {
    r.role = Role::Worker;
    r.why = "DataLoader worker signal handlers (SIGBUS, SIGFPE, SIGSEGV, SIGTERM)";
    if (parent && parent->role == Role::Rank && parent->rank >= 0) {
      r.rank = parent->rank;
    } else if (parent && parent->is_top) {
      // A single-process job: its main process is rank 0 unless it says
      // otherwise in its environment.
      r.rank = parent->env_rank.value_or(0);
    }
    r.final = r.rank >= 0;
    return r;
  }
  if (self.env_rank && !(parent && parent->env_rank == self.env_rank)) {
    r.role = Role::Rank;
    r.rank = *self.env_rank;
    r.final = true;
    r.why = "RANK=" + std::to_string(*self.env_rank) + " in its environment";
    return r;
  }
  if (parent && parent->is_top && is_spawn_child(self.cmdline)) {
    // mp.spawn's children; a spawn-context DataLoader worker of the top looks
    // the same until it shows its handlers, so this stays provisional.
    r.role = Role::Rank;
    r.rank_by_spawn_order = true;
    r.why = "a multiprocessing.spawn child of the top process (mp.spawn's ranks, in start order)";
    return r;
  }
  return r;
}

}  // namespace aftermath
