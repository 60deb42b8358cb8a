// The one duration grammar of the project, header-only so the fixtures (which
// do not link the harness) parse their options exactly as scenarios are parsed:
//
//   duration := [spaces] number unit [spaces]
//   number   := digits with at most one '.', e.g. 500, 1.5, .5, 5.
//   unit     := ns | us | ms | s | m | min | h      (mandatory)
//
// A bare number, a sign, an exponent or any other unit is not a duration: a
// unit-less "5" reads as seconds to one person and milliseconds to another.
// fixtures/python/fixture_util.py's parse_duration accepts the same grammar.
#pragma once

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace aftermath {

// Nanoseconds, or nullopt when `text` is not a duration (or overflows int64 ns).
inline std::optional<std::int64_t> parse_duration_ns(std::string_view text) {
  auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  size_t i = 0;
  bool dot = false;
  while (i < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[i])) || (text[i] == '.' && !dot))) {
    if (text[i] == '.') dot = true;
    ++i;
  }
  std::string num(text.substr(0, i));
  std::string_view unit = text.substr(i);
  if (num.empty() || num == ".") return std::nullopt;
  double scale;
  if (unit == "ns")
    scale = 1;
  else if (unit == "us")
    scale = 1e3;
  else if (unit == "ms")
    scale = 1e6;
  else if (unit == "s")
    scale = 1e9;
  else if (unit == "m" || unit == "min")
    scale = 60e9;
  else if (unit == "h")
    scale = 3600e9;
  else
    return std::nullopt;
  double v = std::strtod(num.c_str(), nullptr) * scale;
  if (!std::isfinite(v) || v > 9.2e18) return std::nullopt;
  return static_cast<std::int64_t>(std::llround(v));
}

// What an error about a bad duration says it should look like.
inline constexpr const char* kDurationGrammar =
    "a number with a unit: ns, us, ms, s, m, h; e.g. 500ms";

}  // namespace aftermath
