// result.json's view of a type that lists its fields (fields.h): each member
// under its key, as its Shown says. The one writer of FaultRecord,
// ProcessDiagnosis, the GPU records and every observation payload in the
// reports (reports/json.cc) and in `inspect` (device_json.cc).
#pragma once

#include <concepts>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "harness/core/device.h"
#include "harness/core/fault_kind.h"
#include "harness/core/fields.h"
#include "harness/core/observation.h"
#include "harness/core/per_test_json.h"
#include "harness/core/result.h"
#include "harness/core/types.h"

namespace aftermath {

// {"kind":"exited","code":0,"text":"exited(0)"} or
// {"kind":"killed","signal":"SIGKILL","signo":9,"core_dumped":false,"text":"killed(SIGKILL)"}.
nlohmann::json to_json(const Outcome& outcome);

namespace fields_json {

// Fixture-supplied JSON text (labels, fields) parsed; a text that does not
// parse, as a string.
nlohmann::json parse_or_text(const std::string& text);

inline nlohmann::json shown_value(const std::string& v) { return v; }
inline nlohmann::json shown_value(bool v) { return v; }
inline nlohmann::json shown_value(double v) { return v; }
// A JSON value kept as it is (a check's measured values).
template <typename J>
  requires std::same_as<J, nlohmann::json>
nlohmann::json shown_value(const J& v) {
  return v;
}
template <std::integral T>
nlohmann::json shown_value(T v) {
  return v;
}
// A /proc state letter; "" for none.
inline nlohmann::json shown_value(char c) { return c ? std::string(1, c) : std::string(); }
inline nlohmann::json shown_value(Role r) { return std::string(to_string(r)); }
inline nlohmann::json shown_value(HarnessPart p) { return std::string(to_string(p)); }
inline nlohmann::json shown_value(RunPhase p) { return std::string(to_string(p)); }
inline nlohmann::json shown_value(FaultAction a) { return std::string(to_string(a)); }
inline nlohmann::json shown_value(FaultStatus s) { return std::string(to_string(s)); }
inline nlohmann::json shown_value(FaultMechanism m) { return std::string(to_string(m)); }
inline nlohmann::json shown_value(ProbeStatus s) { return std::string(to_string(s)); }
inline nlohmann::json shown_value(CheckStatus s) { return std::string(to_string(s)); }
inline nlohmann::json shown_value(Verdict v) { return std::string(to_string(v)); }
inline nlohmann::json shown_value(TestOutcome o) { return std::string(to_string(o)); }
inline nlohmann::json shown_value(TmpKind k) { return std::string(to_string(k)); }
inline nlohmann::json shown_value(const Outcome& o) { return to_json(o); }
inline nlohmann::json shown_value(const TestLeak& l) { return to_json(l); }
template <HasFields S>
nlohmann::json shown_value(const S& s);
template <typename T>
nlohmann::json shown_value(const std::vector<T>& v);
template <typename T>
nlohmann::json shown_value(const std::optional<T>& v);
template <typename T>
nlohmann::json shown_value(const std::map<std::string, T>& v);

// Adds the fields of `p` to the object `j`.
template <HasFields P>
void show_fields(nlohmann::json& j, const P& p);

template <HasFields S>
nlohmann::json shown_value(const S& s) {
  nlohmann::json j = nlohmann::json::object();
  show_fields(j, s);
  return j;
}
template <typename T>
nlohmann::json shown_value(const std::vector<T>& v) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& x : v) a.push_back(shown_value(x));
  return a;
}
template <typename T>
nlohmann::json shown_value(const std::map<std::string, T>& v) {
  nlohmann::json o = nlohmann::json::object();
  for (const auto& [k, x] : v) o[k] = shown_value(x);
  return o;
}
// null when empty: every record has the same keys, and "never happened"
// reads apart from "not recorded by this version".
template <typename T>
nlohmann::json shown_value(const std::optional<T>& v) {
  return v ? shown_value(*v) : nlohmann::json(nullptr);
}

template <typename P, typename M>
void show_field(nlohmann::json& j, const P& p, const Field<P, M>& f) {
  const M& v = p.*f.member;
  const std::string key(f.key);
  if (f.shown == Shown::WireOnly) return;
  if constexpr (std::is_same_v<M, std::string>) {
    if (f.shown == Shown::Json) {
      j[key] = parse_or_text(v);
      return;
    }
  }
  if constexpr (std::is_integral_v<M>) {
    if (f.shown == Shown::Millis || (f.shown == Shown::MillisIfSet && v != 0)) {
      j[key] = static_cast<double>(v) / 1e6;
      return;
    }
    if (f.shown == Shown::MillisIfSet) return;
    if (f.shown == Shown::SignalName) {
      j[key] = signal_name(static_cast<int>(v));
      return;
    }
  }
  if constexpr (requires {
                  requires std::is_integral_v<typename M::value_type>;
                  v.has_value();
                }) {
    if (f.shown == Shown::Millis) {
      j[key] = v ? nlohmann::json(static_cast<double>(*v) / 1e6) : nlohmann::json(nullptr);
      return;
    }
  }
  if constexpr (std::equality_comparable<M>) {
    if (f.shown == Shown::IfSet && v == M{}) return;
  }
  j[key] = shown_value(v);
}

template <HasFields P>
void show_fields(nlohmann::json& j, const P& p) {
  for_each_field<P>([&](const auto& f) { show_field(j, p, f); });
}

}  // namespace fields_json
}  // namespace aftermath
