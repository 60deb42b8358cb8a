#include "harness/core/observation.h"

#include <concepts>

#include "harness/core/enum_words.h"

namespace aftermath {

namespace {

constexpr EnumWords<HarnessPart, 3> kHarnessParts{{
    {HarnessPart::Teardown, "teardown"},
    {HarnessPart::TmpDir, "tmp"},
    {HarnessPart::ShmDir, "shm"},
}};

constexpr EnumWords<RunPhase, 10> kRunPhases{{
    {RunPhase::Launch, "launch"},
    {RunPhase::Running, "running"},
    {RunPhase::Stalled, "stalled"},
    {RunPhase::JobExited, "job_exited"},
    {RunPhase::Settle, "settle"},
    {RunPhase::Deadline, "deadline"},
    {RunPhase::Diagnose, "diagnose"},
    {RunPhase::Teardown, "teardown"},
    {RunPhase::DeviceRelease, "device_release"},
    {RunPhase::Done, "done"},
}};

template <typename P>
concept NamesAProcess = requires(const P& p) {
  { p.pid } -> std::convertible_to<int>;
};

}  // namespace

std::string_view to_string(HarnessPart p) { return text_of(kHarnessParts, p); }
std::optional<HarnessPart> parse_harness_part(std::string_view s) {
  return value_of(kHarnessParts, s);
}

std::string_view to_string(RunPhase p) { return text_of(kRunPhases, p); }
std::optional<RunPhase> parse_run_phase(std::string_view s) { return value_of(kRunPhases, s); }

std::string_view Observation::word() const {
  return std::visit([](const auto& p) { return std::remove_cvref_t<decltype(p)>::word; }, what);
}

int Observation::pid() const {
  return std::visit(
      [](const auto& p) {
        if constexpr (NamesAProcess<std::remove_cvref_t<decltype(p)>>) {
          return p.pid;
        } else {
          return 0;
        }
      },
      what);
}

const obs::HarnessFailure* harness_failed(const Observation& o, HarnessPart part) {
  const auto* f = o.as<obs::HarnessFailure>();
  return f && f->part == part ? f : nullptr;
}

const obs::Event* event_named(const Observation& o, std::string_view name) {
  const auto* e = o.as<obs::Event>();
  return e && e->name == name ? e : nullptr;
}

namespace obs {

Observation phase(Nanos t, RunPhase name) { return {t, Phase{name}}; }
Observation proc_start(Nanos t, int pid, int ppid, std::string comm, std::string cmdline, Role role,
                       int depth, std::int64_t start_ticks, char state, int job_pid) {
  return {t, ProcStart{pid, ppid, std::move(comm), std::move(cmdline), role, depth, start_ticks,
                       state, job_pid}};
}
Observation proc_parent(Nanos t, int pid, int new_ppid) { return {t, ProcParent{pid, new_ppid}}; }
Observation proc_state(Nanos t, int pid, char state) { return {t, ProcState{pid, state}}; }
Observation proc_exit(Nanos t, int pid, std::optional<Outcome> outcome) {
  return {t, ProcExit{pid, outcome}};
}
Observation proc_gone(Nanos t, int pid, Nanos last_seen) { return {t, ProcGone{pid, last_seen}}; }
Observation shm_add(Nanos t, std::string name, std::int64_t bytes, bool baseline) {
  return {t, ShmAdd{std::move(name), bytes, baseline}};
}
Observation shm_resize(Nanos t, std::string name, std::int64_t bytes) {
  return {t, ShmResize{std::move(name), bytes}};
}
Observation shm_remove(Nanos t, std::string name) { return {t, ShmRemove{std::move(name)}}; }
Observation shm_reclaim(Nanos t, std::string name, std::int64_t bytes) {
  return {t, ShmReclaim{std::move(name), bytes}};
}
Observation signal(Nanos t, int pid, int sig, std::string why) {
  return {t, Signal{pid, sig, std::move(why)}};
}
Observation sample(Nanos t, std::int64_t procs, std::int64_t shm_bytes) {
  return {t, Sample{procs, shm_bytes}};
}
Observation note(Nanos t, std::string text) { return {t, Note{std::move(text)}}; }
Observation announce(Nanos t, int pid, Role role, int rank, int worker, std::string labels) {
  return {t, Announce{pid, role, rank, worker, std::move(labels)}};
}
Observation event(Nanos t, int pid, std::string name, std::string fields) {
  return {t, Event{pid, std::move(name), std::move(fields)}};
}
Observation point(Nanos t, int pid, std::string name, long long hit, std::string labels) {
  return {t, Point{pid, std::move(name), hit, std::move(labels)}};
}
Observation fault(Nanos t, int index, int pid, FaultAction action, std::string what) {
  return {t, Fault{index, pid, action, std::move(what)}};
}
Observation memory(Nanos t, std::int64_t rss_bytes, std::int64_t processes) {
  return {t, Memory{rss_bytes, processes}};
}
Observation proc_exec(Nanos t, int pid, std::string comm, std::string cmdline, Role role) {
  return {t, ProcExec{pid, std::move(comm), std::move(cmdline), role}};
}
Observation role_inferred(Nanos t, int pid, Role role, int rank, int worker, std::string why) {
  return {t, RoleInferred{pid, role, rank, worker, std::move(why)}};
}
Observation shm_held(Nanos t, int pid, std::string path, std::int64_t bytes, std::string how,
                     bool deleted) {
  return {t, ShmHeld{pid, std::move(path), bytes, std::move(how), deleted}};
}
Observation oom_kill(Nanos t, int index, int pid, long long kills, std::string cgroup,
                     std::string kernel_line) {
  return {t, OomKill{index, pid, kills, std::move(cgroup), std::move(kernel_line)}};
}
Observation tmp_left(Nanos t, std::string path, std::int64_t bytes, unsigned owner, TmpKind residue,
                     int outside_holder) {
  return {t, TmpLeft{std::move(path), bytes, owner, residue, outside_holder}};
}
Observation tmp_reclaim(Nanos t, std::string path, std::int64_t bytes, std::string moved_to) {
  return {t, TmpReclaim{std::move(path), bytes, std::move(moved_to)}};
}
Observation harness_failure(Nanos t, HarnessPart part, std::string why, int pid) {
  return {t, HarnessFailure{part, std::move(why), pid}};
}
Observation sample_period(Nanos t, Nanos period, Nanos sample_took) {
  return {t, SamplePeriod{period, sample_took}};
}

}  // namespace obs

}  // namespace aftermath
