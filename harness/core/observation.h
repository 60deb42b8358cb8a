// One fact the supervisor saw, and the typed payload of each kind of fact.
//
// Each kind is one struct below: its members are what it says, its `word` is
// its name in result.json and on the wire, and `fields()` lists its members
// once for every reader and writer (the wire, the report). A new kind is one
// struct here, added to `ObsPayload`; nothing else has a list of kinds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "harness/core/fault_kind.h"
#include "harness/core/fields.h"
#include "harness/core/types.h"

namespace aftermath {

// What of the harness's own work failed (obs::HarnessFailure): the checks
// that depend on it read the part, never a note's text.
enum class HarnessPart {
  Teardown,  // a process of the job outlived the teardown: the run is an error
  TmpDir,    // the job's temp dir could not be read: tmp_clean is skipped
  ShmDir,    // /dev/shm could not be read: shm_clean is skipped
};
std::string_view to_string(HarnessPart p);
std::optional<HarnessPart> parse_harness_part(std::string_view s);

// The phases a run goes through (obs::Phase), in the order they can come:
// launch, running, then stalled (no_hang's stall rule called a hang),
// job_exited (the top process exited) and settle, or deadline; diagnose (the
// hang's stacks are taken), teardown, device_release (the GPUs are watched
// until the job's memory is freed) and done.
enum class RunPhase {
  Launch,
  Running,
  Stalled,
  JobExited,
  Settle,
  Deadline,
  Diagnose,
  Teardown,
  DeviceRelease,
  Done,
};
std::string_view to_string(RunPhase p);
std::optional<RunPhase> parse_run_phase(std::string_view s);

namespace obs {

// The run entered a phase.
struct Phase {
  static constexpr std::string_view word = "phase";
  RunPhase name = RunPhase::Launch;
  static constexpr auto fields() { return std::tuple{field("name", &Phase::name)}; }
  bool operator==(const Phase&) const = default;
};

// A process was first seen.
struct ProcStart {
  static constexpr std::string_view word = "proc_start";
  int pid = 0;
  int ppid = 0;
  std::string comm;
  std::string cmdline;
  Role role = Role::Unknown;
  int depth = 0;                 // 0: the top process
  std::int64_t start_ticks = 0;  // start time, clock ticks since boot
  char state = 0;                // its /proc state letter when first seen
  int job_pid = 0;               // its pid in the job's PID namespace; 0: the same or unknown
  static constexpr auto fields() {
    return std::tuple{field("pid", &ProcStart::pid),
                      field("ppid", &ProcStart::ppid),
                      field("comm", &ProcStart::comm),
                      field("cmdline", &ProcStart::cmdline),
                      field("role", &ProcStart::role),
                      field("depth", &ProcStart::depth),
                      field("start_ticks", &ProcStart::start_ticks),
                      field("state", &ProcStart::state, Shown::WireOnly),
                      field("job_pid", &ProcStart::job_pid, Shown::IfSet)};
  }
  bool operator==(const ProcStart&) const = default;
};

// The parent changed: re-parented after the parent's death.
struct ProcParent {
  static constexpr std::string_view word = "proc_parent";
  int pid = 0;
  int ppid = 0;
  static constexpr auto fields() {
    return std::tuple{field("pid", &ProcParent::pid), field("ppid", &ProcParent::ppid)};
  }
  bool operator==(const ProcParent&) const = default;
};

// A new /proc state letter (R S D Z T t ...).
struct ProcState {
  static constexpr std::string_view word = "proc_state";
  int pid = 0;
  char state = 0;
  static constexpr auto fields() {
    return std::tuple{field("pid", &ProcState::pid), field("state", &ProcState::state)};
  }
  bool operator==(const ProcState&) const = default;
};

// The process exited (pidfd readable, or reaped), with how where known.
struct ProcExit {
  static constexpr std::string_view word = "proc_exit";
  int pid = 0;
  std::optional<Outcome> outcome;
  static constexpr auto fields() {
    return std::tuple{field("pid", &ProcExit::pid), field("outcome", &ProcExit::outcome)};
  }
  bool operator==(const ProcExit&) const = default;
};

// The process is no longer in /proc (reaped). Seen so by a scan, it was
// reaped between `last_seen`, the last scan that still found it, and the
// observation's time; 0: the time is the reap's own (the reaper's).
struct ProcGone {
  static constexpr std::string_view word = "proc_gone";
  int pid = 0;
  Nanos last_seen = 0;
  static constexpr auto fields() {
    return std::tuple{field("pid", &ProcGone::pid),
                      field("last_seen_ms", &ProcGone::last_seen, Shown::MillisIfSet)};
  }
  bool operator==(const ProcGone&) const = default;
};

// A /dev/shm entry appeared; baseline: it was there before the launch.
struct ShmAdd {
  static constexpr std::string_view word = "shm_add";
  std::string name;
  std::int64_t bytes = 0;
  bool baseline = false;
  static constexpr auto fields() {
    return std::tuple{field("name", &ShmAdd::name), field("bytes", &ShmAdd::bytes),
                      field("baseline", &ShmAdd::baseline)};
  }
  bool operator==(const ShmAdd&) const = default;
};

// A /dev/shm entry changed size.
struct ShmResize {
  static constexpr std::string_view word = "shm_resize";
  std::string name;
  std::int64_t bytes = 0;
  static constexpr auto fields() {
    return std::tuple{field("name", &ShmResize::name), field("bytes", &ShmResize::bytes)};
  }
  bool operator==(const ShmResize&) const = default;
};

// A /dev/shm entry went away.
struct ShmRemove {
  static constexpr std::string_view word = "shm_remove";
  std::string name;
  static constexpr auto fields() { return std::tuple{field("name", &ShmRemove::name)}; }
  bool operator==(const ShmRemove&) const = default;
};

// The harness removed a leaked /dev/shm entry after the run.
struct ShmReclaim {
  static constexpr std::string_view word = "shm_reclaim";
  std::string name;
  std::int64_t bytes = 0;
  static constexpr auto fields() {
    return std::tuple{field("name", &ShmReclaim::name), field("bytes", &ShmReclaim::bytes)};
  }
  bool operator==(const ShmReclaim&) const = default;
};

// The harness sent a signal, and why.
struct Signal {
  static constexpr std::string_view word = "signal";
  int pid = 0;
  int signo = 0;
  std::string why;
  static constexpr auto fields() {
    return std::tuple{field("pid", &Signal::pid), field("signo", &Signal::signo),
                      field("signal", &Signal::signo, Shown::SignalName),
                      field("why", &Signal::why)};
  }
  bool operator==(const Signal&) const = default;
};

// One look at the job: its process count and /dev/shm bytes above the baseline.
struct Sample {
  static constexpr std::string_view word = "sample";
  std::int64_t procs = 0;
  std::int64_t shm_bytes = 0;
  static constexpr auto fields() {
    return std::tuple{field("procs", &Sample::procs), field("shm_bytes", &Sample::shm_bytes)};
  }
  bool operator==(const Sample&) const = default;
};

// A line for the reader; nothing judges it.
struct Note {
  static constexpr std::string_view word = "note";
  std::string text;
  static constexpr auto fields() { return std::tuple{field("text", &Note::text)}; }
  bool operator==(const Note&) const = default;
};

// A fixture said what it is.
struct Announce {
  static constexpr std::string_view word = "announce";
  int pid = 0;
  Role role = Role::Unknown;
  int rank = 0;
  int worker = 0;
  std::string labels;  // JSON
  static constexpr auto fields() {
    return std::tuple{field("pid", &Announce::pid), field("role", &Announce::role),
                      field("rank", &Announce::rank), field("worker", &Announce::worker),
                      field("labels", &Announce::labels, Shown::Json)};
  }
  bool operator==(const Announce&) const = default;
};

// A fixture's progress event.
struct Event {
  static constexpr std::string_view word = "event";
  int pid = 0;
  std::string name;
  std::string fields_json;  // the event's fields, JSON
  static constexpr auto fields() {
    return std::tuple{field("pid", &Event::pid), field("name", &Event::name),
                      field("fields", &Event::fields_json, Shown::Json)};
  }
  bool operator==(const Event&) const = default;
};

// An armed point was reached, for the hit-th time.
struct Point {
  static constexpr std::string_view word = "point";
  int pid = 0;
  std::string name;
  long long hit = 0;
  std::string labels;  // JSON
  static constexpr auto fields() {
    return std::tuple{field("pid", &Point::pid), field("name", &Point::name),
                      field("hit", &Point::hit), field("labels", &Point::labels, Shown::Json)};
  }
  bool operator==(const Point&) const = default;
};

// A fault was sent: the scenario's index-th, at pid.
struct Fault {
  static constexpr std::string_view word = "fault";
  int index = 0;
  int pid = 0;
  FaultAction action = FaultAction::None;
  std::string what;
  static constexpr auto fields() {
    return std::tuple{field("index", &Fault::index), field("pid", &Fault::pid),
                      field("action", &Fault::action), field("what", &Fault::what)};
  }
  bool operator==(const Fault&) const = default;
};

// The resident bytes of the job's live processes (the sum of their RSS).
struct Memory {
  static constexpr std::string_view word = "memory";
  std::int64_t rss_bytes = 0;
  std::int64_t procs = 0;  // the processes summed
  static constexpr auto fields() {
    return std::tuple{field("rss_bytes", &Memory::rss_bytes), field("procs", &Memory::procs)};
  }
  bool operator==(const Memory&) const = default;
};

// The process exec'd (or renamed itself) since it was first seen.
struct ProcExec {
  static constexpr std::string_view word = "proc_exec";
  int pid = 0;
  std::string comm;
  std::string cmdline;
  Role role = Role::Unknown;
  static constexpr auto fields() {
    return std::tuple{field("pid", &ProcExec::pid), field("comm", &ProcExec::comm),
                      field("cmdline", &ProcExec::cmdline), field("role", &ProcExec::role)};
  }
  bool operator==(const ProcExec&) const = default;
};

// Shared memory a live job process still held (at the top's exit, and when
// the teardown began).
struct ShmHeld {
  static constexpr std::string_view word = "shm_held";
  int pid = 0;
  std::string path;
  std::int64_t bytes = 0;
  std::string how;       // "mapped", "fd", "mapped+fd"
  bool deleted = false;  // its name was already unlinked
  static constexpr auto fields() {
    return std::tuple{field("pid", &ShmHeld::pid), field("path", &ShmHeld::path),
                      field("bytes", &ShmHeld::bytes), field("how", &ShmHeld::how),
                      field("deleted", &ShmHeld::deleted)};
  }
  bool operator==(const ShmHeld&) const = default;
};

// A role read from what the kernel shows (no announcement), and why.
struct RoleInferred {
  static constexpr std::string_view word = "role_inferred";
  int pid = 0;
  Role role = Role::Unknown;
  int rank = 0;
  int worker = 0;
  std::string why;
  static constexpr auto fields() {
    return std::tuple{field("pid", &RoleInferred::pid), field("role", &RoleInferred::role),
                      field("rank", &RoleInferred::rank), field("worker", &RoleInferred::worker),
                      field("why", &RoleInferred::why)};
  }
  bool operator==(const RoleInferred&) const = default;
};

// The kernel OOM killer acted in the cgroup of the index-th fault (at pid).
struct OomKill {
  static constexpr std::string_view word = "oom_kill";
  int index = 0;
  int pid = 0;
  long long kills = 0;  // so far
  std::string cgroup;
  std::string kernel_line;  // the kernel's own log line, where readable
  static constexpr auto fields() {
    return std::tuple{field("index", &OomKill::index), field("pid", &OomKill::pid),
                      field("kills", &OomKill::kills), field("cgroup", &OomKill::cgroup),
                      field("kernel", &OomKill::kernel_line, Shown::IfSet)};
  }
  bool operator==(const OomKill&) const = default;
};

// A temp-dir entry new since the launch, still there after the teardown.
struct TmpLeft {
  static constexpr std::string_view word = "tmp_left";
  std::string path;
  std::int64_t bytes = 0;
  unsigned owner = 0;  // its uid
  TmpKind residue = TmpKind::Other;
  int held_outside_by = 0;  // a process outside the job that holds (or held) it; 0: none
  static constexpr auto fields() {
    return std::tuple{field("path", &TmpLeft::path), field("bytes", &TmpLeft::bytes),
                      field("owner", &TmpLeft::owner), field("residue", &TmpLeft::residue),
                      field("held_outside_by", &TmpLeft::held_outside_by)};
  }
  bool operator==(const TmpLeft&) const = default;
};

// The harness took a left temp-dir entry away after the run.
struct TmpReclaim {
  static constexpr std::string_view word = "tmp_reclaim";
  std::string path;
  std::int64_t bytes = 0;
  std::string moved_to;  // "": removed
  static constexpr auto fields() {
    return std::tuple{field("path", &TmpReclaim::path), field("bytes", &TmpReclaim::bytes),
                      field("moved_to", &TmpReclaim::moved_to, Shown::IfSet)};
  }
  bool operator==(const TmpReclaim&) const = default;
};

// The harness itself could not do or see something.
struct HarnessFailure {
  static constexpr std::string_view word = "harness_failure";
  HarnessPart part = HarnessPart::Teardown;
  std::string why;
  int pid = 0;  // the teardown's: a process still alive
  static constexpr auto fields() {
    return std::tuple{field("part", &HarnessFailure::part), field("why", &HarnessFailure::why),
                      field("pid", &HarnessFailure::pid, Shown::IfSet)};
  }
  bool operator==(const HarnessFailure&) const = default;
};

// The sampler stretched its period (a sample took more than half of it), or
// came back toward the scenario's.
struct SamplePeriod {
  static constexpr std::string_view word = "sample_period";
  Nanos period = 0;
  Nanos sample_took = 0;  // the sample that moved it
  static constexpr auto fields() {
    return std::tuple{field("period_ms", &SamplePeriod::period, Shown::Millis),
                      field("sample_took_ms", &SamplePeriod::sample_took, Shown::Millis)};
  }
  bool operator==(const SamplePeriod&) const = default;
};

}  // namespace obs

// Every kind of observation. The first is what a default Observation holds.
using ObsPayload =
    std::variant<obs::Note, obs::Phase, obs::ProcStart, obs::ProcParent, obs::ProcState,
                 obs::ProcExit, obs::ProcGone, obs::ShmAdd, obs::ShmResize, obs::ShmRemove,
                 obs::ShmReclaim, obs::Signal, obs::Sample, obs::Announce, obs::Event, obs::Point,
                 obs::Fault, obs::Memory, obs::ProcExec, obs::ShmHeld, obs::RoleInferred,
                 obs::OomKill, obs::TmpLeft, obs::TmpReclaim, obs::HarnessFailure,
                 obs::SamplePeriod>;

struct Observation {
  Nanos t = 0;
  ObsPayload what;
  // A multi-node run's merged timeline: the node it was seen on; -1: the
  // run had one node.
  int node = -1;

  // The payload, when it is a P; nullptr otherwise.
  template <typename P>
  const P* as() const {
    return std::get_if<P>(&what);
  }
  template <typename P>
  P* as() {
    return std::get_if<P>(&what);
  }
  // Whether the payload is one of these kinds.
  template <typename... P>
  bool is() const {
    return (std::holds_alternative<P>(what) || ...);
  }
  // The kind's word: "proc_start", ...
  std::string_view word() const;
  // The process it is about, for the kinds that name one; 0 otherwise.
  int pid() const;
  bool operator==(const Observation&) const = default;
};

// The failure, when `o` says that `part` failed; nullptr otherwise.
const obs::HarnessFailure* harness_failed(const Observation& o, HarnessPart part);
// The event, when `o` is a fixture's event with this name; nullptr otherwise.
const obs::Event* event_named(const Observation& o, std::string_view name);

// Builders, so hand-made timelines in tests read like the real thing.
namespace obs {
Observation phase(Nanos t, RunPhase name);
Observation proc_start(Nanos t, int pid, int ppid, std::string comm, std::string cmdline,
                       Role role = Role::Unknown, int depth = 0, std::int64_t start_ticks = 0,
                       char state = 0, int job_pid = 0);
Observation proc_parent(Nanos t, int pid, int new_ppid);
Observation proc_state(Nanos t, int pid, char state);
Observation proc_exit(Nanos t, int pid, std::optional<Outcome> outcome);
Observation proc_gone(Nanos t, int pid, Nanos last_seen = 0);
Observation shm_add(Nanos t, std::string name, std::int64_t bytes, bool baseline = false);
Observation shm_resize(Nanos t, std::string name, std::int64_t bytes);
Observation shm_remove(Nanos t, std::string name);
Observation shm_reclaim(Nanos t, std::string name, std::int64_t bytes);
Observation signal(Nanos t, int pid, int sig, std::string why);
Observation sample(Nanos t, std::int64_t procs, std::int64_t shm_bytes);
Observation note(Nanos t, std::string text);
Observation announce(Nanos t, int pid, Role role, int rank, int worker, std::string labels);
Observation event(Nanos t, int pid, std::string name, std::string fields);
Observation point(Nanos t, int pid, std::string name, long long hit, std::string labels);
Observation fault(Nanos t, int index, int pid, FaultAction action, std::string what);
Observation memory(Nanos t, std::int64_t rss_bytes, std::int64_t processes);
Observation proc_exec(Nanos t, int pid, std::string comm, std::string cmdline, Role role);
Observation role_inferred(Nanos t, int pid, Role role, int rank, int worker, std::string why);
Observation shm_held(Nanos t, int pid, std::string path, std::int64_t bytes, std::string how,
                     bool deleted);
Observation oom_kill(Nanos t, int index, int pid, long long kills, std::string cgroup,
                     std::string kernel_line = "");
Observation tmp_left(Nanos t, std::string path, std::int64_t bytes, unsigned owner, TmpKind residue,
                     int outside_holder = 0);
Observation tmp_reclaim(Nanos t, std::string path, std::int64_t bytes, std::string moved_to = "");
Observation harness_failure(Nanos t, HarnessPart part, std::string why, int pid = 0);
Observation sample_period(Nanos t, Nanos period, Nanos sample_took);
}  // namespace obs

// A visitor from lambdas: std::visit(Overloaded{[](const obs::ProcStart&) {...}, ...}, o.what).
template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};

// Calls f(std::type_identity<P>{}) for every payload type P, in order, until
// one call returns true; true when one did.
template <typename F>
bool for_each_kind(F&& f) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return (f(std::type_identity<std::variant_alternative_t<I, ObsPayload>>{}) || ...);
  }(std::make_index_sequence<std::variant_size_v<ObsPayload>>{});
}

}  // namespace aftermath
