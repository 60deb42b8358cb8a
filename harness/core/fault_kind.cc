#include "harness/core/fault_kind.h"

#include <array>
#include <utility>

#include "harness/core/enum_words.h"

namespace aftermath {

namespace {

constexpr std::array<std::pair<FaultAction, std::string_view>, 16> kActions{{
    {FaultAction::None, ""},
    {FaultAction::Sigkill, "SIGKILL"},
    {FaultAction::Sigterm, "SIGTERM"},
    {FaultAction::Sigint, "SIGINT"},
    {FaultAction::Sigstop, "SIGSTOP"},
    {FaultAction::Sigcont, "SIGCONT"},
    {FaultAction::Sigsegv, "SIGSEGV"},
    {FaultAction::Sigbus, "SIGBUS"},
    {FaultAction::HostOom, "host_oom"},
    {FaultAction::DeviceOom, "device_oom"},
    {FaultAction::Delay, "delay"},
    {FaultAction::Hang, "hang"},
    {FaultAction::NodeLoss, "node_loss"},
    {FaultAction::Partition, "partition"},
    {FaultAction::AgentKill, "agent_kill"},
    {FaultAction::Scancel, "scancel"},
}};

constexpr std::array<std::pair<FaultMechanism, std::string_view>, 9> kMechanisms{{
    {FaultMechanism::None, ""},
    {FaultMechanism::Auto, "auto"},
    {FaultMechanism::Signal, "signal"},
    {FaultMechanism::Rlimit, "rlimit"},
    {FaultMechanism::Cgroup, "cgroup"},
    {FaultMechanism::Point, "point"},
    {FaultMechanism::PointReply, "point-reply"},
    {FaultMechanism::Hog, "hog"},
    {FaultMechanism::Interposer, "interposer"},
}};

constexpr std::array<std::pair<FaultStatus, std::string_view>, 4> kStatuses{{
    {FaultStatus::NotTriggered, "not_triggered"},
    {FaultStatus::Injected, "injected"},
    {FaultStatus::Skipped, "skipped"},
    {FaultStatus::Failed, "failed"},
}};

// The empty text (None) is never parsed: a stated word must name something.
template <typename E, size_t N>
std::optional<E> stated_value_of(const EnumWords<E, N>& table, std::string_view text) {
  if (text.empty()) return std::nullopt;
  return value_of(table, text);
}

}  // namespace

std::string_view to_string(FaultAction a) { return text_of(kActions, a); }
std::optional<FaultAction> parse_fault_action(std::string_view text) {
  return stated_value_of(kActions, text);
}

const std::vector<FaultAction>& all_fault_actions() {
  static const std::vector<FaultAction> all = [] {
    std::vector<FaultAction> v;
    for (const auto& [a, text] : kActions)
      if (a != FaultAction::None) v.push_back(a);
    return v;
  }();
  return all;
}

bool is_node_action(FaultAction a) {
  return a == FaultAction::NodeLoss || a == FaultAction::Partition;
}

std::string_view to_string(FaultMechanism m) { return text_of(kMechanisms, m); }
std::optional<FaultMechanism> parse_fault_mechanism(std::string_view text) {
  return stated_value_of(kMechanisms, text);
}

std::string_view to_string(FaultStatus s) { return text_of(kStatuses, s); }
std::optional<FaultStatus> parse_fault_status(std::string_view text) {
  return stated_value_of(kStatuses, text);
}

}  // namespace aftermath
