#include "harness/core/device.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "harness/core/enum_words.h"

namespace aftermath {

namespace {
constexpr EnumWords<ProbeStatus, 5> kProbeStatuses{{
    {ProbeStatus::Ok, "ok"},
    {ProbeStatus::Failed, "failed"},
    {ProbeStatus::TimedOut, "timed_out"},
    {ProbeStatus::Unavailable, "unavailable"},
    {ProbeStatus::Error, "error"},
}};
}  // namespace

std::string_view to_string(ProbeStatus s) { return text_of(kProbeStatuses, s); }
std::optional<ProbeStatus> parse_probe_status(std::string_view s) {
  return value_of(kProbeStatuses, s);
}

std::string format_bytes(std::int64_t bytes) {
  if (bytes < 0) return "?";
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, v < 10 ? "%.1f %s" : "%.0f %s", v, kUnits[u]);
  return buf;
}

std::optional<std::int64_t> parse_bytes(std::string_view text) {
  std::string t(text);
  const char* begin = t.c_str();
  char* end = nullptr;
  double v = std::strtod(begin, &end);
  if (end == begin || !std::isfinite(v) || v < 0 || t[0] == '+' || t[0] == '-' ||
      std::isspace(static_cast<unsigned char>(t[0])))
    return std::nullopt;
  std::string_view unit(end);
  if (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  static const std::pair<std::string_view, double> kUnits[] = {
      {"", 1},          {"B", 1},
      {"KiB", 1024.0},  {"MiB", 1048576.0},
      {"GiB", 1 << 30}, {"TiB", 1099511627776.0},
      {"kB", 1e3},      {"KB", 1e3},
      {"MB", 1e6},      {"GB", 1e9},
      {"TB", 1e12}};
  for (const auto& [name, mult] : kUnits) {
    if (unit != name) continue;
    double bytes = v * mult;
    if (bytes > 9.2e18) return std::nullopt;
    return static_cast<std::int64_t>(std::llround(bytes));
  }
  return std::nullopt;
}

}  // namespace aftermath
