// The timeline: every fact the supervisor saw, in order, stamped with
// monotonic nanoseconds since the run's start. Observers only append; checks
// only read. A hand-made Timeline is how every check is unit-tested.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "harness/core/device.h"
#include "harness/core/fault_kind.h"
#include "harness/core/fields.h"
#include "harness/core/observation.h"
#include "harness/core/python_facts.h"
#include "harness/core/types.h"

namespace aftermath {

// What became of one of the scenario's faults.
struct FaultRecord {
  int index = 0;
  FaultAction action = FaultAction::None;
  std::string target;   // as written: worker:0/3
  std::string trigger;  // "point loader.worker.getitem worker=3 hit 12", "after 2s"
  std::string point;    // point-triggered: the point and hit that fired it
  long long hit = 0;
  FaultStatus status = FaultStatus::NotTriggered;
  std::string reason;     // why skipped / failed / not triggered, or how it was done
  bool optional = false;  // the scenario said `optional: true`: not firing is no error
  // Its trigger came but no live process matched the target yet: the fault
  // waits for one (until the job ends), from this time on.
  std::optional<Nanos> waiting_since;
  FaultMechanism mechanism = FaultMechanism::None;
  std::vector<int> pids;    // the processes it acted on
  std::string target_role;  // of the first target
  int rank = -1;
  int worker = -1;
  std::optional<Nanos> sent;    // when the harness acted
  std::optional<Nanos> effect;  // when the effect was observed (exit, stop)
  // host_oom by cgroup: the kernel OOM killer's kills in the fault's
  // cgroup(s) (memory.events / memory.oom_control), read until teardown.
  std::optional<long long> oom_kills;
  std::vector<std::string> cgroups;     // the fault cgroups made (removed after teardown)
  std::vector<std::string> kernel_log;  // the OOM killer's own lines (/dev/kmsg), where readable

  static constexpr auto fields() {
    using F = FaultRecord;
    return std::tuple{field("index", &F::index),
                      field("action", &F::action),
                      field("target", &F::target),
                      field("trigger", &F::trigger),
                      field("point", &F::point),
                      field("hit", &F::hit),
                      field("status", &F::status),
                      field("reason", &F::reason),
                      field("optional", &F::optional),
                      field("waited_from_ms", &F::waiting_since, Shown::Millis),
                      field("mechanism", &F::mechanism),
                      field("pids", &F::pids),
                      field("target_role", &F::target_role),
                      field("rank", &F::rank),
                      field("worker", &F::worker),
                      field("sent_ms", &F::sent, Shown::Millis),
                      field("effect_ms", &F::effect, Shown::Millis),
                      field("oom_kills", &F::oom_kills),
                      field("cgroups", &F::cgroups),
                      field("kernel_log", &F::kernel_log)};
  }
};

// One frame of a Python stack, as the interpreter's debugger sees it.
struct PythonFrame {
  std::string file;
  int line = 0;
  std::string function;
  std::string code;  // the source line, where the file is readable

  friend bool operator==(const PythonFrame&, const PythonFrame&) = default;
  static constexpr auto fields() {
    return std::tuple{field("file", &PythonFrame::file), field("line", &PythonFrame::line),
                      field("function", &PythonFrame::function), field("code", &PythonFrame::code)};
  }
};

// The state of a live process when a hang was diagnosed.
struct ProcessDiagnosis {
  int pid = 0;
  Role role = Role::Unknown;
  int rank = -1;
  int worker = -1;
  char state = '?';
  std::string wchan;
  std::string kernel_stack;  // /proc/PID/stack, where readable
  std::string user_stacks;   // gdb "thread apply all bt", where gdb is installed
  std::string waiting_in;    // the collective it last entered and did not leave, if reported
  // The Python stack of every thread that runs Python (gdb's py-bt), as text,
  // and the frames of the thread that most likely holds the hang (the main
  // thread unless it is idle), innermost first. Empty for a process that runs
  // no Python, with python_note saying why where a stack was expected.
  std::string python_stacks;
  std::vector<PythonFrame> python_frames;
  std::string python_note;
  Nanos took = 0;  // how long this process's diagnosis took

  static constexpr auto fields() {
    using D = ProcessDiagnosis;
    return std::tuple{field("pid", &D::pid),
                      field("role", &D::role),
                      field("rank", &D::rank),
                      field("worker", &D::worker),
                      field("state", &D::state),
                      field("wchan", &D::wchan),
                      field("kernel_stack", &D::kernel_stack),
                      field("user_stacks", &D::user_stacks),
                      field("waiting_in", &D::waiting_in),
                      field("python_stacks", &D::python_stacks),
                      field("python_frames", &D::python_frames),
                      field("python_note", &D::python_note),
                      field("took_ms", &D::took, Shown::Millis)};
  }
};

// How the job was contained: pid 1 of a PID namespace (made as root, or in
// a user namespace of its own), or under a child subreaper. Unknown: the
// reaper never said (""). Text: "pid-namespace", "user+pid-namespace",
// "subreaper".
enum class JobContainment { Unknown, PidNamespace, UserPidNamespace, Subreaper };
std::string_view to_string(JobContainment c);
std::optional<JobContainment> parse_job_containment(std::string_view s);

// Which /dev/shm the job saw: its own tmpfs ("private") or the host's ("host").
enum class ShmPlace { Unknown, Private, Host };
std::string_view to_string(ShmPlace p);
std::optional<ShmPlace> parse_shm_place(std::string_view s);

// How the job's forks were learnt: the kernel's process events ("process
// events"), pid 1 watching the job's namespace ("reaper"), or any fork on the
// machine waking a look ("machine"). Unknown: not said ("").
enum class ForkSource { Unknown, ProcessEvents, Reaper, Machine };
std::string_view to_string(ForkSource f);
std::optional<ForkSource> parse_fork_source(std::string_view s);

// Facts about the run that are not observations in time.
struct RunFacts {
  int top_pid = 0;                     // the job's top process (host pid)
  int init_pid = 0;                    // the reaper every orphan is re-parented to (host pid)
  std::optional<Outcome> top_outcome;  // nullopt: it never exited on its own
  std::string stdout_text;             // captured output (may be truncated to the tail)
  std::string stderr_text;
  bool deadline_hit = false;  // the job deadline passed with the top process alive
  // no_hang's stall rule: no job process made progress (CPU time, a start or
  // an exit, an event or a point) from stalled_since for the stall window, so
  // the hang was declared then, before the deadline (deadline_hit is set too).
  std::optional<Nanos> stalled_since;
  Nanos stall_window = 0;
  // Of the time from stalled_since to the verdict, what the job's longest
  // kept process waited for a CPU (a loaded machine's doing, not the job's):
  // the window counts without it, so the verdict came that much later.
  Nanos stall_cpu_wait = 0;
  JobContainment containment = JobContainment::Unknown;
  std::string containment_note;  // why not a PID namespace, when not
  ForkSource forks_from = ForkSource::Unknown;
  ShmPlace shm = ShmPlace::Unknown;
  std::vector<FaultRecord> faults;
  std::vector<ProcessDiagnosis> diagnosis;  // taken at a hang, before teardown
  std::string diagnosis_note;               // e.g. "gdb not installed: no user stacks"
  Nanos diagnosis_took = 0;                 // from the hang's verdict to the last stack taken
  // The job's Python and PyTorch: the facts the rules take their
  // PyTorch-given values from (torchrun's monitor interval, the helpers'
  // linger, the workers' watchdog period).
  PythonFacts python = default_python_facts();
};

struct Timeline {
  std::vector<Observation> observations;
  RunFacts facts;
  // The GPUs over the same run (unavailable, with the reason, where there are none).
  DeviceTimeline device;
  void add(Observation o) { observations.push_back(std::move(o)); }
};

// Per-process history derived from a timeline (pure).
struct ProcessHistory {
  int pid = 0;
  // Its pid as the job saw it (its PID namespace); 0 when the same or unknown.
  // The job's own output and its per-process log files use this one.
  int job_pid = 0;
  int first_ppid = 0;
  int last_ppid = 0;
  int depth = 0;
  std::string comm;
  std::string cmdline;
  Role role = Role::Unknown;
  int rank = -1;                     // announced
  int worker = -1;                   // announced
  Nanos started = 0;                 // first seen
  std::optional<Nanos> orphaned_at;  // parent changed / parent exited while this lived
  std::optional<Nanos> exited_at;    // ProcExit
  std::optional<Nanos> gone_at;      // ProcGone
  // Seen gone by a scan: the last time a scan still found it (it was reaped
  // between then and gone_at); nullopt where gone_at is the reap's own time.
  std::optional<Nanos> last_present;
  std::optional<Outcome> outcome;
  std::optional<Nanos> zombie_since;   // first seen in state Z (or exited but not yet gone)
  std::optional<Nanos> stopped_since;  // last entered T/t
  char last_state = 0;
  bool is_top = false;
  int node = -1;  // a multi-node run: the node it ran on
  // End of life: exit time, else gone time, else nullopt (alive at end of timeline).
  std::optional<Nanos> end() const { return exited_at ? exited_at : gone_at; }
};

// The stall rule's verdict time (stalled_since, the window and the time the
// job waited for a CPU; nullopt without a stall), and its window in words:
// "the 10 s stall window", with ", not counting 3.2 s a job process waited
// for a CPU" where it waited.
std::optional<Nanos> stall_verdict_at(const RunFacts& f);
std::string stall_window_words(const RunFacts& f);

std::vector<ProcessHistory> build_histories(const Timeline& tl);

// For each process, the index in `procs` of its first parent (the latest
// process with that pid seen no later than the child, since pids are reused),
// or -1 when the parent was never seen (the reaper, a process outside the job).
std::vector<int> parent_indices(const std::vector<ProcessHistory>& procs);

// The time of the first Phase observation of this phase, if any.
std::optional<Nanos> phase_time(const Timeline& tl, RunPhase name);

}  // namespace aftermath
