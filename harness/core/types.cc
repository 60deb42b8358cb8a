#include "harness/core/types.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "harness/core/duration.h"
#include "harness/core/enum_words.h"

namespace aftermath {

std::optional<Nanos> parse_duration(std::string_view text) { return parse_duration_ns(text); }

std::string format_duration(Nanos d) {
  char buf[64];
  double a = std::fabs(static_cast<double>(d));
  if (a >= 60e9 && std::fmod(a, 60e9) == 0)
    std::snprintf(buf, sizeof buf, "%.0fm", d / 60e9);
  else if (a >= 1e9)
    std::snprintf(buf, sizeof buf, "%gs", d / 1e9);
  else if (a >= 1e6)
    std::snprintf(buf, sizeof buf, "%gms", d / 1e6);
  else if (a >= 1e3)
    std::snprintf(buf, sizeof buf, "%gus", d / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%lldns", static_cast<long long>(d));
  return buf;
}

double to_ms(Nanos d) { return static_cast<double>(d) / 1e6; }

Outcome Outcome::from_wait_status(int status) {
  if (WIFSIGNALED(status)) return killed(WTERMSIG(status), WCOREDUMP(status));
  return exited(WEXITSTATUS(status));
}

int Outcome::exit_code() const {
  if (kind_ != Kind::Exited) throw std::logic_error("Outcome::exit_code on a killed process");
  return value_;
}

int Outcome::signal() const {
  if (kind_ != Kind::Killed) throw std::logic_error("Outcome::signal on an exited process");
  return value_;
}

std::string Outcome::to_string() const {
  if (kind_ == Kind::Exited) return "exited(" + std::to_string(value_) + ")";
  return "killed(" + signal_name(value_) + (core_ ? ", core)" : ")");
}

namespace {
struct SigName {
  int sig;
  const char* name;
};
constexpr SigName kSignals[] = {
    {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
    {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
    {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
    {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"}, {SIGCHLD, "SIGCHLD"},
    {SIGCONT, "SIGCONT"}, {SIGSTOP, "SIGSTOP"}, {SIGTSTP, "SIGTSTP"}, {SIGTTIN, "SIGTTIN"},
    {SIGTTOU, "SIGTTOU"}, {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"},
};
}  // namespace

std::string signal_name(int sig) {
  for (const auto& s : kSignals)
    if (s.sig == sig) return s.name;
  return "SIG" + std::to_string(sig);
}

std::optional<int> parse_signal(std::string_view text) {
  std::string t(text);
  for (auto& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (!t.empty() && std::all_of(t.begin(), t.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      })) {
    if (t.size() > 2) return std::nullopt;  // also keeps overflow out
    int v = std::atoi(t.c_str());
    if (v > 0 && v < 65) return v;
    return std::nullopt;
  }
  if (t.rfind("SIG", 0) != 0) t = "SIG" + t;
  for (const auto& s : kSignals)
    if (t == s.name) return s.sig;
  return std::nullopt;
}

namespace {

// Each closed value's words, one table each: the writer and the parser read
// the same one.
constexpr EnumWords<Role, 5> kRoles{{
    {Role::Launcher, "launcher"},
    {Role::Rank, "rank"},
    {Role::Worker, "worker"},
    {Role::Helper, "helper"},
    {Role::Unknown, "unknown"},
}};

constexpr EnumWords<CheckStatus, 4> kCheckStatuses{{
    {CheckStatus::Pass, "pass"},
    {CheckStatus::Fail, "fail"},
    {CheckStatus::Skipped, "skipped"},
    {CheckStatus::Error, "error"},
}};

constexpr EnumWords<Verdict, 6> kVerdicts{{
    {Verdict::Pass, "pass"},
    {Verdict::Fail, "fail"},
    {Verdict::XFail, "xfail"},
    {Verdict::XPass, "xpass"},
    {Verdict::Error, "error"},
    {Verdict::Skipped, "skipped"},
}};

constexpr EnumWords<AgentState, 3> kAgentStates{{
    {AgentState::Absent, "absent"},
    {AgentState::Done, "done"},
    {AgentState::Lost, "lost"},
}};

constexpr EnumWords<LeakKind, 5> kLeakKinds{{
    {LeakKind::Process, "process"},
    {LeakKind::Orphan, "orphan"},
    {LeakKind::Zombie, "zombie"},
    {LeakKind::Shm, "shm"},
    {LeakKind::Device, "device"},
}};

}  // namespace

std::string_view to_string(Role r) { return text_of(kRoles, r); }
std::optional<Role> parse_role(std::string_view s) { return value_of(kRoles, s); }
std::string_view to_string(CheckStatus s) { return text_of(kCheckStatuses, s); }
std::optional<CheckStatus> parse_check_status(std::string_view s) {
  return value_of(kCheckStatuses, s);
}
std::string_view to_string(Verdict v) { return text_of(kVerdicts, v); }
std::optional<Verdict> parse_verdict(std::string_view s) { return value_of(kVerdicts, s); }
std::string to_string(const ExpectedChecks& e) {
  std::string out = e.pass ? "pass" : "fail:";
  if (!e.pass)
    for (const std::string& name : e.fail) out += " " + name;
  if (!e.may_fail.empty()) {
    out += "; may fail:";
    for (const std::string& name : e.may_fail) out += " " + name;
  }
  return out;
}

namespace {
// The check names after `head` ("fail:", "may fail:") at the start of
// `part`; nullopt when it starts otherwise, names none, or a name holds a
// ':' or ';' (a second part).
std::optional<std::vector<std::string>> names_after(std::string_view part, std::string_view head) {
  if (!part.starts_with(head)) return std::nullopt;
  std::vector<std::string> names;
  std::string name;
  std::string text(part.substr(head.size()));
  for (char c : text + " ") {
    if (c == ' ' || c == ',') {
      if (!name.empty()) names.push_back(std::move(name));
      name.clear();
    } else if (c == ':' || c == ';') {
      return std::nullopt;
    } else {
      name += c;
    }
  }
  if (names.empty()) return std::nullopt;
  return names;
}
}  // namespace

std::optional<ExpectedChecks> parse_expected_checks(std::string_view s) {
  ExpectedChecks e;
  std::string_view first = s, rest;
  if (auto semi = s.find(';'); semi != std::string_view::npos) {
    first = s.substr(0, semi);
    rest = s.substr(semi + 1);
    while (rest.starts_with(' ')) rest.remove_prefix(1);
    auto may = names_after(rest, "may fail:");
    if (!may) return std::nullopt;
    e.may_fail = std::move(*may);
  }
  if (first == "pass") return e;
  auto fail = names_after(first, "fail:");
  if (!fail) return std::nullopt;
  e.pass = false;
  e.fail = std::move(*fail);
  return e;
}

std::string to_string(Shard s) { return std::to_string(s.index) + "/" + std::to_string(s.count); }

std::optional<Shard> parse_shard_text(std::string_view text) {
  auto number = [](std::string_view s) -> int {
    if (s.empty() || s.size() > 5 || s.find_first_not_of("0123456789") != std::string_view::npos)
      return -1;
    return std::stoi(std::string(s));
  };
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const int i = number(text.substr(0, slash)), n = number(text.substr(slash + 1));
  if (i < 1 || n < 1 || i > n || n > 10000) return std::nullopt;
  return Shard{i, n};
}

std::string_view to_string(AgentState a) { return text_of(kAgentStates, a); }
std::optional<AgentState> parse_agent_state(std::string_view s) {
  return value_of(kAgentStates, s);
}
constexpr EnumWords<TmpKind, 6> kTmpKinds{{
    {TmpKind::Pymp, "pymp"},
    {TmpKind::TorchShmDir, "torch-shm-dir"},
    {TmpKind::Torchelastic, "torchelastic"},
    {TmpKind::TorchrunShim, "torchrun-shim"},
    {TmpKind::SpawnErrorFile, "spawn-errorfile"},
    {TmpKind::Other, "other"},
}};

std::string_view to_string(TmpKind k) { return text_of(kTmpKinds, k); }
std::optional<TmpKind> parse_tmp_kind(std::string_view s) { return value_of(kTmpKinds, s); }

std::string_view to_string(LeakKind k) { return text_of(kLeakKinds, k); }
std::optional<LeakKind> parse_leak_kind(std::string_view s) { return value_of(kLeakKinds, s); }

namespace {

constexpr EnumWords<TestOutcome, 5> kTestOutcomes{{
    {TestOutcome::NotEnded, ""},
    {TestOutcome::Passed, "passed"},
    {TestOutcome::Failed, "failed"},
    {TestOutcome::Skipped, "skipped"},
    {TestOutcome::Error, "error"},
}};

constexpr EnumWords<TimingsOrigin, 4> kTimingsOrigins{{
    {TimingsOrigin::None, ""},
    {TimingsOrigin::FirstFault, "first fault"},
    {TimingsOrigin::TopExit, "top process exit"},
    {TimingsOrigin::Deadline, "deadline"},
}};

}  // namespace

std::string_view to_string(TestOutcome o) { return text_of(kTestOutcomes, o); }
std::optional<TestOutcome> parse_test_outcome(std::string_view s) {
  return value_of(kTestOutcomes, s);
}
std::string_view to_string(TimingsOrigin o) { return text_of(kTimingsOrigins, o); }
std::optional<TimingsOrigin> parse_timings_origin(std::string_view s) {
  return value_of(kTimingsOrigins, s);
}

}  // namespace aftermath
