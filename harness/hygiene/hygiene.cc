#include "harness/hygiene/hygiene.h"

#include <charconv>
#include <cstdio>

namespace aftermath {

std::string join_ints(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

std::string_view to_string(CreatorState s) {
  switch (s) {
    case CreatorState::Alive:
      return "alive";
    case CreatorState::Gone:
      return "gone";
    case CreatorState::Unknown:
      return "unknown";
  }
  return "unknown";
}

std::optional<int> torch_creator_pid(std::string_view name) {
  if (name.rfind("torch_", 0) != 0) return std::nullopt;
  name.remove_prefix(6);
  auto us = name.find('_');
  if (us == std::string_view::npos || us == 0) return std::nullopt;
  int pid = 0;
  auto r = std::from_chars(name.data(), name.data() + us, pid);
  if (r.ec != std::errc() || r.ptr != name.data() + us || pid <= 0) return std::nullopt;
  return pid;
}

std::string format_age(Nanos age) {
  if (age < 0) age = 0;
  char buf[48];
  long long s = age / kSecond;
  if (s >= 86400)
    std::snprintf(buf, sizeof buf, "%lldd%lldh", s / 86400, (s % 86400) / 3600);
  else if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, (s % 3600) / 60);
  else if (s >= 60)
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  else if (s >= 1)
    std::snprintf(buf, sizeof buf, "%llds", s);
  else
    std::snprintf(buf, sizeof buf, "%lldms", static_cast<long long>(age / kMilli));
  return buf;
}

std::string holdings(const HygieneProcess& p) {
  std::vector<std::string> h = p.devices;
  for (const auto& s : p.shm) h.push_back(s);
  if (!p.gpus.empty()) h.push_back(format_bytes(p.gpu_bytes) + " on GPU " + join_ints(p.gpus));
  std::string out;
  for (const auto& x : h) out += (out.empty() ? "" : ", ") + x;
  return out;
}

InspectReport inspect_machine(const HygieneOptions& options) {
  return judge_machine(gather_machine(options), options);
}

}  // namespace aftermath
