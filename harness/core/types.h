// Value types shared by every layer: durations, process outcomes, roles, check
// statuses and verdicts. Closed types, never ints or free strings: reports
// serialise these, nothing re-derives them from text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/os/clock.h"

namespace aftermath {

// Parses "500ms", "20s", "2m", "1h", "250us", "1.5s" (a bare number is
// rejected: units are mandatory). Returns nullopt on anything else.
std::optional<Nanos> parse_duration(std::string_view text);
// Formats a duration with the largest unit that keeps it short: "1.5s", "20ms".
std::string format_duration(Nanos d);
double to_ms(Nanos d);

// How a process ended. Exactly one of the two states; each accessor is valid
// in its state only.
class Outcome {
 public:
  enum class Kind { Exited, Killed };
  static Outcome exited(int code) { return Outcome(Kind::Exited, code, false); }
  static Outcome killed(int signal, bool core_dumped = false) {
    return Outcome(Kind::Killed, signal, core_dumped);
  }
  // From a waitpid()/waitid() status word.
  static Outcome from_wait_status(int status);

  Kind kind() const { return kind_; }
  bool is_exited() const { return kind_ == Kind::Exited; }
  bool is_killed() const { return kind_ == Kind::Killed; }
  int exit_code() const;  // precondition: is_exited()
  int signal() const;     // precondition: is_killed()
  bool core_dumped() const { return core_; }
  // "exited(0)", "killed(SIGKILL)", "killed(SIGSEGV, core)".
  std::string to_string() const;
  bool operator==(const Outcome& o) const {
    return kind_ == o.kind_ && value_ == o.value_ && core_ == o.core_;
  }

 private:
  Outcome(Kind k, int v, bool core) : kind_(k), value_(v), core_(core) {}
  Kind kind_;
  int value_;
  bool core_;
};

// "SIGKILL" for 9; "SIG42" for unnamed ones.
std::string signal_name(int sig);
// "SIGKILL", "KILL", "9" -> 9. nullopt if unknown.
std::optional<int> parse_signal(std::string_view text);

enum class Role { Launcher, Rank, Worker, Helper, Unknown };
std::string_view to_string(Role r);
std::optional<Role> parse_role(std::string_view s);

enum class CheckStatus { Pass, Fail, Skipped, Error };
std::string_view to_string(CheckStatus s);
std::optional<CheckStatus> parse_check_status(std::string_view s);

// A scenario's outcome against its expectation.
// Skipped: the scenario was not launched (a requirement of it is not met here).
enum class Verdict { Pass, Fail, XFail, XPass, Error, Skipped };
std::string_view to_string(Verdict v);
std::optional<Verdict> parse_verdict(std::string_view s);

// What a scenario expected of its checks, as its result carries it: a pass,
// or these checks failing (a known bug reproduced); and, either way, the
// checks a known race of the job's own may fail in some runs. The text is
// "pass" or "fail: a b", then "; may fail: c d" where some may.
struct ExpectedChecks {
  bool pass = true;                   // else `fail` names the checks expected to fail
  std::vector<std::string> fail;      // non-empty iff !pass
  std::vector<std::string> may_fail;  // never one of `fail`
  bool operator==(const ExpectedChecks&) const = default;
};
std::string to_string(const ExpectedChecks& e);
// The text above (names split on spaces or commas); nullopt for any other.
std::optional<ExpectedChecks> parse_expected_checks(std::string_view s);

// One slice of a sharded run (`run --shard I/N`): the I-th (1-based) of N,
// 1 <= I <= N <= 10000.
struct Shard {
  int index = 1;
  int count = 1;
  bool operator==(const Shard&) const = default;
};
std::string to_string(Shard s);  // "I/N"
// "I/N" within those bounds; nullopt for any other text.
std::optional<Shard> parse_shard_text(std::string_view text);

// A multi-node run's agent on one node: it reported to the end (done), its
// connection ended first (lost), or it never connected (absent).
enum class AgentState { Absent, Done, Lost };
std::string_view to_string(AgentState a);
std::optional<AgentState> parse_agent_state(std::string_view s);

// What a pytest test left behind: a process still running, an orphan, a
// zombie, a /dev/shm entry, device memory.
enum class LeakKind { Process, Orphan, Zombie, Shm, Device };
std::string_view to_string(LeakKind k);
std::optional<LeakKind> parse_leak_kind(std::string_view s);

// How a pytest test ended, as pytest names it ("error": a fixture broke);
// NotEnded: the run ended during the test ("").
enum class TestOutcome { NotEnded, Passed, Failed, Skipped, Error };
std::string_view to_string(TestOutcome o);
// pytest's word; "" is NotEnded; nullopt for a word pytest does not use.
std::optional<TestOutcome> parse_test_outcome(std::string_view s);

// What a run's recovery timings count from: its first injected fault, else
// the top process's exit, else the job deadline; None: none of them came
// (""). The text is "first fault", "top process exit", "deadline".
enum class TimingsOrigin { None, FirstFault, TopExit, Deadline };
std::string_view to_string(TimingsOrigin o);
std::optional<TimingsOrigin> parse_timings_origin(std::string_view s);

// What a temp-dir entry is, by its name: a multiprocessing folder (pymp-*),
// a torch_shm_manager's folder (torch-shm-dir-*), torchrun's log folder
// (torchelastic_*), the torchrun shim's folder (aftermath-torchrun-*), an
// mp.spawn error file (pytorch-errorfile-*.pickle), or anything else.
// "pymp" | "torch-shm-dir" | "torchelastic" | "torchrun-shim" |
// "spawn-errorfile" | "other".
enum class TmpKind { Pymp, TorchShmDir, Torchelastic, TorchrunShim, SpawnErrorFile, Other };
std::string_view to_string(TmpKind k);
std::optional<TmpKind> parse_tmp_kind(std::string_view s);

}  // namespace aftermath
