// The run's containment and /dev/shm modes, as asked for (`--contain`,
// `--shm`) and passed to the reaper. Header-only: the reaper, which links no
// library, parses its command line with the same pairs.
#pragma once

#include <optional>
#include <string_view>

namespace aftermath {

// How the job is contained: `auto` takes a PID namespace where the kernel
// allows one, else a subreaper; the other two insist.
enum class ContainMode { Auto, PidNamespace, Subreaper };
// The job's /dev/shm: `auto` a private tmpfs where a PID namespace has a mount
// namespace to put it in, else the host's; the other two insist.
enum class ShmMode { Auto, Private, Host };
// The /proc the job sees in a PID namespace: a procfs of its own namespace, or
// the host's.
enum class ProcMode { Own, Host };

constexpr std::string_view to_text(ContainMode m) {
  switch (m) {
    case ContainMode::PidNamespace:
      return "pidns";
    case ContainMode::Subreaper:
      return "subreaper";
    case ContainMode::Auto:
      break;
  }
  return "auto";
}
constexpr std::string_view to_text(ShmMode m) {
  switch (m) {
    case ShmMode::Private:
      return "private";
    case ShmMode::Host:
      return "host";
    case ShmMode::Auto:
      break;
  }
  return "auto";
}
constexpr std::string_view to_text(ProcMode m) { return m == ProcMode::Host ? "host" : "own"; }

constexpr std::optional<ContainMode> parse_contain_mode(std::string_view s) {
  for (auto m : {ContainMode::Auto, ContainMode::PidNamespace, ContainMode::Subreaper})
    if (s == to_text(m)) return m;
  return std::nullopt;
}
constexpr std::optional<ShmMode> parse_shm_mode(std::string_view s) {
  for (auto m : {ShmMode::Auto, ShmMode::Private, ShmMode::Host})
    if (s == to_text(m)) return m;
  return std::nullopt;
}
constexpr std::optional<ProcMode> parse_proc_mode(std::string_view s) {
  for (auto m : {ProcMode::Own, ProcMode::Host})
    if (s == to_text(m)) return m;
  return std::nullopt;
}

}  // namespace aftermath
