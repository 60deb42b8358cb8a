// Reading JSON into typed values, for every decoder of the project's own
// documents (the wire, timeline_wire.cc; result.json, reports/result_read.cc):
// each reader throws a ReadError that names the field by its path
// ("scenarios[0].checks[2].status") and what is wrong with it, and the
// decoder's public entry point turns the first one into its Error. Nothing
// here is seen by a caller of those decoders.
#pragma once

#include <concepts>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

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
void from(const nlohmann::json& v, const std::string& path, ExpectedChecks& out);
void from(const nlohmann::json& v, const std::string& path, CheckStatus& out);
void from(const nlohmann::json& v, const std::string& path, AgentState& out);
void from(const nlohmann::json& v, const std::string& path, LeakKind& out);
void from(const nlohmann::json& v, const std::string& path, TestOutcome& out);
void from(const nlohmann::json& v, const std::string& path, TimingsOrigin& out);
void from(const nlohmann::json& v, const std::string& path, JobContainment& out);
void from(const nlohmann::json& v, const std::string& path, ShmPlace& out);
void from(const nlohmann::json& v, const std::string& path, TmpKind& out);
void from(const nlohmann::json& v, const std::string& path, ForkSource& out);
void from(const nlohmann::json& v, const std::string& path, HarnessPart& out);
void from(const nlohmann::json& v, const std::string& path, RunPhase& out);
void from(const nlohmann::json& v, const std::string& path, ProbeStatus& out);
void from(const nlohmann::json& v, const std::string& path, FaultStatus& out);
void from(const nlohmann::json& v, const std::string& path, FaultAction& out);
void from(const nlohmann::json& v, const std::string& path, FaultMechanism& out);

// A process's outcome, or null: {"kind": "exited", "code": 0} or {"kind":
// "killed", "signal": 9 or "SIGKILL", "signo": 9 (read first where there),
// "core_dumped": false}.
void from(const nlohmann::json& v, const std::string& path, std::optional<Outcome>& out);

// What every decoder reads alike, over its own values. A decoder names its
// format as a type whose static `one(v, path, out)` reads one value of a
// type it knows (its own `from` overloads, the shared ones brought in with
// `using json_read::from;`); read<Format> reads that or any array, optional
// or map of string keys of it, and Fields<Format> reads objects:
//
//   struct Doc {
//     template <typename T> static void one(const json& v, const std::string& p, T&& out) {
//       from(v, p, std::forward<T>(out));
//     }
//   };
//   using Fields = json_read::Fields<Doc>;

template <typename T>
struct is_vector : std::false_type {};
template <typename T>
struct is_vector<std::vector<T>> : std::true_type {};
template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};
template <typename T>
struct is_string_map : std::false_type {};
template <typename T>
struct is_string_map<std::map<std::string, T>> : std::true_type {};

template <typename Format, typename T>
void read(const nlohmann::json& v, const std::string& path, T&& out);

// An array, each item read by the format.
template <typename Format, typename T>
void read_array(const nlohmann::json& v, const std::string& path, std::vector<T>& out) {
  if (!v.is_array()) wrong_type(path, "an array", v);
  out.clear();
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    T x{};
    read<Format>(v[i], item_path(path, i), x);
    out.push_back(std::move(x));
  }
}

// An object of one value type, by key.
template <typename Format, typename T>
void read_map(const nlohmann::json& v, const std::string& path, std::map<std::string, T>& out) {
  if (!v.is_object()) wrong_type(path, "an object", v);
  out.clear();
  for (const auto& [key, value] : v.items()) {
    T x{};
    read<Format>(value, member_path(path, key), x);
    out.emplace(key, std::move(x));
  }
}

// A value or null (nullopt).
template <typename Format, typename T>
void read_optional(const nlohmann::json& v, const std::string& path, std::optional<T>& out) {
  if (v.is_null()) {
    out.reset();
    return;
  }
  T x{};
  read<Format>(v, path, x);
  out = std::move(x);
}

template <typename Format, typename T>
void read(const nlohmann::json& v, const std::string& path, T&& out) {
  using U = std::remove_cvref_t<T>;
  if constexpr (is_vector<U>::value)
    read_array<Format>(v, path, out);
  else if constexpr (std::is_same_v<U, std::optional<Outcome>>)  // no default to read into
    from(v, path, out);
  else if constexpr (is_optional<U>::value)
    read_optional<Format>(v, path, out);
  else if constexpr (is_string_map<U>::value)
    read_map<Format>(v, path, out);
  else
    Format::one(v, path, std::forward<T>(out));
}

// One JSON object being read: its fields by key, each read by the format,
// errors by their full path.
template <typename Format>
class Fields {
 public:
  Fields(const nlohmann::json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) wrong_type(path_, "an object", j_);
  }
  // Reads the field into out if it is there; out keeps its default if not.
  // (`out` may be a proxy passed by value: a field in other units.)
  template <typename T>
  void read(std::string_view key, T&& out) const {
    if (const nlohmann::json* v = find(key))
      json_read::read<Format>(*v, at(key), std::forward<T>(out));
  }
  // The same, for a field every release wrote.
  template <typename T>
  void need(std::string_view key, T&& out) const {
    const nlohmann::json* v = find(key);
    if (!v) fail(at(key), "is missing");
    json_read::read<Format>(*v, at(key), std::forward<T>(out));
  }
  // A nested object's fields (an absent one reads as empty).
  Fields object(std::string_view key) const {
    const nlohmann::json* v = find(key);
    return Fields(v ? *v : empty(), at(key));
  }
  bool has(std::string_view key) const { return find(key) != nullptr; }
  const nlohmann::json* find(std::string_view key) const {
    const auto it = j_.find(std::string(key));
    return it == j_.end() ? nullptr : &*it;
  }
  std::string at(std::string_view key) const { return member_path(path_, key); }

 private:
  static const nlohmann::json& empty() {
    static const nlohmann::json e = nlohmann::json::object();
    return e;
  }
  const nlohmann::json& j_;
  std::string path_;
};

}  // namespace aftermath::json_read
