// A type's members listed once, for every reader and writer of it: the wire
// (timeline_wire.cc), result.json's writer (fields_json.h) and reader
// (reports/result_read.cc). A type lists them in a static `fields()`:
//
//   static constexpr auto fields() {
//     return std::tuple{field("pid", &T::pid), field("took_ms", &T::took, Shown::Millis)};
//   }
//
// The key is the member's name in result.json and on the wire alike (the
// wire carries times as integer nanoseconds under the same key).
#pragma once

#include <string_view>
#include <tuple>
#include <utility>

namespace aftermath {

// How the report (result.json) shows a field. The wire carries every field
// but a SignalName as it is, left out where it equals its default.
enum class Shown {
  Always,       // always shown
  IfSet,        // shown when it differs from its default
  WireOnly,     // not shown
  Json,         // a JSON text, shown parsed (a text that does not parse: as a string)
  Millis,       // nanoseconds, shown as milliseconds (an optional: null when empty)
  MillisIfSet,  // nanoseconds, shown as milliseconds when not 0
  SignalName,   // a signal number, shown by name: a second view of a field listed before it
};

// One member of a payload, under the name the report and the wire give it.
template <typename S, typename M>
struct Field {
  std::string_view key;
  M S::* member;
  Shown shown = Shown::Always;
  bool required = false;  // a reader refuses a document without it (every release wrote it)
};
template <typename S, typename M>
constexpr Field<S, M> field(std::string_view key, M S::* member, Shown shown = Shown::Always) {
  return {key, member, shown};
}
// A field every release wrote: missing, the document is refused.
template <typename S, typename M>
constexpr Field<S, M> needed(std::string_view key, M S::* member, Shown shown = Shown::Always) {
  return {key, member, shown, true};
}

// A type that lists its fields.
template <typename T>
concept HasFields = requires { T::fields(); };

// Calls f(field) for every field of payload type P, in order.
template <typename P, typename F>
void for_each_field(F&& f) {
  std::apply([&](const auto&... fs) { (f(fs), ...); }, P::fields());
}

}  // namespace aftermath
