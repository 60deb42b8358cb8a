// Reading JSON into typed values, for every decoder of the project's own
// documents (the wire, timeline_wire.cc; result.json, reports/result_read.cc):
// each reader throws a ReadError that names the field by its path
// ("scenarios[0].checks[2].status") and what is wrong with it, and the
// decoder's public entry point turns the first one into its Error. Nothing
// here is seen by a caller of those decoders.
#pragma once

#include <concepts>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "harness/core/device.h"
#include "harness/core/fault_kind.h"
#include "harness/core/observation.h"
#include "harness/core/timeline.h"
#include "harness/core/types.h"

namespace aftermath::json_read {

struct ReadError {
  std::string path;     // "faults[0].action"
  std::string problem;  // "is missing", "should be a string, not number"
};

[[noreturn]] void fail(const std::string& path, std::string problem);
// A received word in an error message, quoted and cut short: it may be anything.
std::string shown(const std::string& s);
[[noreturn]] void wrong_type(const std::string& path, const char* wanted, const nlohmann::json& v);
// "path.key", or "key" at the top.
std::string member_path(const std::string& path, std::string_view key);
// "path[i]".
std::string item_path(const std::string& path, std::size_t i);

bool boolean(const nlohmann::json& v, const std::string& path);
const std::string& text(const nlohmann::json& v, const std::string& path);
double number(const nlohmann::json& v, const std::string& path);
// Milliseconds as the reports write them, back to nanoseconds.
std::int64_t millis_to_nanos(const nlohmann::json& v, const std::string& path);

// The integer members (int, int64_t, long long, unsigned, uint64_t); bool and
// char read otherwise.
template <typename T>
concept Integer = std::integral<T> && !std::same_as<T, bool> && !std::same_as<T, char>;

template <Integer T>
T integer(const nlohmann::json& v, const std::string& path) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (!std::in_range<T>(u)) fail(path, "is out of range: " + std::to_string(u));
    return static_cast<T>(u);
  }
  if (v.is_number_integer()) {
    const auto s = v.get<std::int64_t>();
    if (!std::in_range<T>(s)) fail(path, "is out of range: " + std::to_string(s));
    return static_cast<T>(s);
  }
  wrong_type(path, "an integer", v);
}

// A closed value by its word, through its own parse function.
template <typename E, typename Parse>
E word(const nlohmann::json& v, const std::string& path, Parse parse) {
  const std::string& s = text(v, path);
  const std::optional<E> e = parse(s);
  if (!e) fail(path, "has an unknown value " + shown(s));
  return *e;
}

// The values every format writes alike, read into `out` (a decoder brings
// them in with `using json_read::from;` beside its own): true/false, strings,
// integers in range, numbers, and each closed value by its word (FaultAction
// and FaultMechanism's None is "").
void from(const nlohmann::json& v, const std::string& path, bool& out);
void from(const nlohmann::json& v, const std::string& path, std::string& out);
void from(const nlohmann::json& v, const std::string& path, double& out);
template <Integer T>
void from(const nlohmann::json& v, const std::string& path, T& out) {
  out = integer<T>(v, path);
}
void from(const nlohmann::json& v, const std::string& path, Role& out);
void from(const nlohmann::json& v, const std::string& path, Verdict& out);
void from(const nlohmann::json& v, const std::string& path, CheckStatus& out);
void from(const nlohmann::json& v, const std::string& path, AgentState& out);
void from(const nlohmann::json& v, const std::string& path, LeakKind& out);
void from(const nlohmann::json& v, const std::string& path, TestOutcome& out);
void from(const nlohmann::json& v, const std::string& path, TimingsOrigin& out);
void from(const nlohmann::json& v, const std::string& path, JobContainment& out);
void from(const nlohmann::json& v, const std::string& path, ShmPlace& out);
void from(const nlohmann::json& v, const std::string& path, ForkSource& out);
void from(const nlohmann::json& v, const std::string& path, HarnessPart& out);
void from(const nlohmann::json& v, const std::string& path, ProbeStatus& out);
void from(const nlohmann::json& v, const std::string& path, FaultStatus& out);
void from(const nlohmann::json& v, const std::string& path, FaultAction& out);
void from(const nlohmann::json& v, const std::string& path, FaultMechanism& out);

}  // namespace aftermath::json_read
