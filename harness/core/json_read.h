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

}  // namespace aftermath::json_read
