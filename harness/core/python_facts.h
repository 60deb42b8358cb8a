// What a job's Python and its PyTorch do on the shutdown paths, as facts a
// check can use: a verdict is about a job on a given PyTorch.
//
// Behaviour that changed between PyTorch releases is never a constant of the
// harness: the facts are read from the interpreter the job runs (its
// torch.__version__, torchrun's --monitor-interval default, the DataLoader's
// MP_STATUS_CHECK_INTERVAL) by observe/python_facts.h, once per interpreter.
// What no Python attribute says (torch_shm_manager's 2000 ms wait, whether
// torchrun signals whole sessions) comes from a table of version ranges
// (torch_behaviour()), checked against PyTorch's sources of each release.
// Without a Python (a job that is not one) the facts keep the most
// conservative values of every known release.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/duration.h"
#include "harness/core/types.h"
#include "harness/os/expected.h"

namespace aftermath {

// A PyTorch release as ordered numbers: "2.13.0+cpu" is {2, 13, 0} with
// local "cpu"; "1.13.1" is {1, 13, 1}; "2.6.0a0+git1234" is {2, 6, 0}.
struct TorchVersion {
  int major = 0, minor = 0, patch = 0;
  std::string text;  // as the interpreter printed it
  friend bool operator<(const TorchVersion& a, const TorchVersion& b) {
    if (a.major != b.major) return a.major < b.major;
    if (a.minor != b.minor) return a.minor < b.minor;
    return a.patch < b.patch;
  }
  friend bool operator==(const TorchVersion& a, const TorchVersion& b) {
    return a.major == b.major && a.minor == b.minor && a.patch == b.patch;
  }
};
// nullopt unless `text` starts with MAJOR.MINOR (a missing patch is 0).
std::optional<TorchVersion> parse_torch_version(std::string_view text);

// A set of releases, as scenarios write it: comparisons joined by ',' (all
// must hold), each ">=", ">", "<=", "<", "==" or "!=" and a version
// ("MAJOR.MINOR" or "MAJOR.MINOR.PATCH"); a bare version is "==" on what it
// names ("1.13" is every 1.13.x, "2.13.0" that release). Examples: "<2.0",
// ">=2.2,<2.6", "1.13".
class TorchRange {
 public:
  // The error says what is wrong with `text` ("'>=2.x': '2.x' is not a version").
  static Expected<TorchRange> parse(std::string_view text);
  bool contains(const TorchVersion& v) const;
  const std::string& text() const { return text_; }

 private:
  struct Clause {
    enum class Op { Ge, Gt, Le, Lt, Eq, Ne } op;
    TorchVersion v;
    int parts;  // how many numbers were written (2: a whole minor release)
  };
  std::vector<Clause> clauses_;
  std::string text_;
};

// The facts of one interpreter. `torch` is empty when it has no PyTorch
// (`torch_error` says why: "No module named 'torch'").
struct PythonFacts {
  std::string interpreter;  // the path the job runs
  std::string python;       // "3.11.7"; empty when the probe failed
  std::optional<TorchVersion> torch;
  std::string torch_error;
  std::string torch_cuda;  // torch.version.cuda, "none" for a CPU build
  // Read from the running torch (the probe), else the table's value:
  // a DataLoader worker's watchdog period (MP_STATUS_CHECK_INTERVAL).
  Nanos loader_status_interval = 5 * kSecond;
  // torchrun's default --monitor-interval: how long an exited rank may stay
  // its zombie (5 s in 1.13, 0.1 s since 2.2).
  Nanos torchrun_monitor_interval = 5 * kSecond;
  // From the table: torch_shm_manager's wait for clients before it unlinks
  // what it tracked and exits (torch/lib/libshm/manager.cpp).
  Nanos shm_manager_linger = 2000 * kMilli;
  // From the table: torchrun starts each rank in a session of its own and
  // signals the whole process group (PR #113231), so a rank's DataLoader
  // workers get the agent's SIGTERM too.
  bool torchrun_signals_sessions = false;
  // "probe" when read from the interpreter; "default" when nothing could be
  // (no Python job, or the probe failed: `probe_error` says why).
  std::string source = "default";
  std::string probe_error;

  // "torch 2.13.0+cpu" / "no torch (python 3.11.7)" / "python unknown".
  std::string label() const;
};

// The version-range table: what PyTorch `v` does where no Python attribute
// says it. Each row was read from that release's sources (docs/defaults.md).
struct TorchBehaviour {
  Nanos shm_manager_linger;
  bool torchrun_signals_sessions;
  Nanos torchrun_monitor_interval;  // the default, when the probe cannot read it
};
TorchBehaviour torch_behaviour(const TorchVersion& v);

// The facts of a job with no Python known: every value the most patient
// release has (a 5 s monitor interval, a 5 s watchdog).
PythonFacts default_python_facts();

// A helper's grace in no_orphans unless a scenario says otherwise: the
// manager's designed linger plus room for a loaded machine (at least 5 s).
Nanos helper_grace(const PythonFacts& f);
// The settle's quiet period: longer than a worker's watchdog period, so an
// orphaned DataLoader worker is seen to notice its dead parent.
Nanos settle_quiet(const PythonFacts& f);

}  // namespace aftermath
