#include "harness/core/json_read.h"

#include <cmath>

namespace aftermath::json_read {

using nlohmann::json;

void fail(const std::string& path, std::string problem) {
  throw ReadError{path, std::move(problem)};
}

std::string shown(const std::string& s) {
  constexpr std::size_t kMax = 40;
  return "\"" + (s.size() <= kMax ? s : s.substr(0, kMax) + "...") + "\"";
}

void wrong_type(const std::string& path, const char* wanted, const json& v) {
  fail(path, std::string("should be ") + wanted + ", not " + v.type_name());
}

std::string member_path(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string item_path(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

bool boolean(const json& v, const std::string& path) {
  if (!v.is_boolean()) wrong_type(path, "true or false", v);
  return v.get<bool>();
}

const std::string& text(const json& v, const std::string& path) {
  if (!v.is_string()) wrong_type(path, "a string", v);
  return v.get_ref<const std::string&>();
}

double number(const json& v, const std::string& path) {
  if (!v.is_number()) wrong_type(path, "a number", v);
  return v.get<double>();
}

std::int64_t millis_to_nanos(const json& v, const std::string& path) {
  const double ms = number(v, path);
  if (!std::isfinite(ms) || std::fabs(ms) > 9.2e12) fail(path, "is out of range");
  return std::llround(ms * 1e6);
}

void from(const json& v, const std::string& path, bool& out) { out = boolean(v, path); }
void from(const json& v, const std::string& path, std::string& out) { out = text(v, path); }
void from(const json& v, const std::string& path, double& out) { out = number(v, path); }
void from(const json& v, const std::string& path, Role& out) {
  out = word<Role>(v, path, parse_role);
}
void from(const json& v, const std::string& path, Verdict& out) {
  out = word<Verdict>(v, path, parse_verdict);
}
void from(const json& v, const std::string& path, ExpectedChecks& out) {
  out = word<ExpectedChecks>(v, path, parse_expected_checks);
}
void from(const json& v, const std::string& path, CheckStatus& out) {
  out = word<CheckStatus>(v, path, parse_check_status);
}
void from(const json& v, const std::string& path, AgentState& out) {
  out = word<AgentState>(v, path, parse_agent_state);
}
void from(const json& v, const std::string& path, LeakKind& out) {
  out = word<LeakKind>(v, path, parse_leak_kind);
}
void from(const json& v, const std::string& path, TestOutcome& out) {
  out = word<TestOutcome>(v, path, parse_test_outcome);
}
void from(const json& v, const std::string& path, TimingsOrigin& out) {
  out = word<TimingsOrigin>(v, path, parse_timings_origin);
}
void from(const json& v, const std::string& path, JobContainment& out) {
  out = word<JobContainment>(v, path, parse_job_containment);
}
void from(const json& v, const std::string& path, TmpKind& out) {
  out = word<TmpKind>(v, path, parse_tmp_kind);
}
void from(const json& v, const std::string& path, ShmPlace& out) {
  out = word<ShmPlace>(v, path, parse_shm_place);
}
void from(const json& v, const std::string& path, ForkSource& out) {
  out = word<ForkSource>(v, path, parse_fork_source);
}
void from(const json& v, const std::string& path, HarnessPart& out) {
  out = word<HarnessPart>(v, path, parse_harness_part);
}
void from(const json& v, const std::string& path, RunPhase& out) {
  out = word<RunPhase>(v, path, parse_run_phase);
}
void from(const json& v, const std::string& path, ProbeStatus& out) {
  out = word<ProbeStatus>(v, path, parse_probe_status);
}
void from(const json& v, const std::string& path, FaultStatus& out) {
  out = word<FaultStatus>(v, path, parse_fault_status);
}
void from(const json& v, const std::string& path, FaultAction& out) {
  out = word<FaultAction>(v, path, [](std::string_view s) {
    return s.empty() ? std::optional(FaultAction::None) : parse_fault_action(s);
  });
}
void from(const json& v, const std::string& path, FaultMechanism& out) {
  out = word<FaultMechanism>(v, path, [](std::string_view s) {
    return s.empty() ? std::optional(FaultMechanism::None) : parse_fault_mechanism(s);
  });
}

void from(const nlohmann::json& v, const std::string& path, std::optional<Outcome>& out) {
  if (v.is_null()) {
    out.reset();
    return;
  }
  if (!v.is_object()) wrong_type(path, "an object", v);
  auto field = [&](const char* key, bool required) -> const nlohmann::json* {
    auto it = v.find(key);
    if (it != v.end()) return &*it;
    if (required) fail(member_path(path, key), "is missing");
    return nullptr;
  };
  const std::string& kind = text(*field("kind", true), member_path(path, "kind"));
  if (kind == "exited") {
    out = Outcome::exited(integer<int>(*field("code", true), member_path(path, "code")));
    return;
  }
  if (kind != "killed") fail(member_path(path, "kind"), "has an unknown value " + shown(kind));
  int signo = 0;
  if (const nlohmann::json* n = field("signo", false)) {
    signo = integer<int>(*n, member_path(path, "signo"));
  } else if (const nlohmann::json* s = field("signal", true); s->is_string()) {
    const std::optional<int> parsed = parse_signal(s->get_ref<const std::string&>());
    if (!parsed)
      fail(member_path(path, "signal"),
           "has an unknown value " + shown(s->get_ref<const std::string&>()));
    signo = *parsed;
  } else {
    signo = integer<int>(*s, member_path(path, "signal"));
  }
  bool core = false;
  if (const nlohmann::json* c = field("core_dumped", false))
    core = boolean(*c, member_path(path, "core_dumped"));
  out = Outcome::killed(signo, core);
}

}  // namespace aftermath::json_read
