// The fault vocabulary: every word parses to its enum and renders back the same.
#include "harness/core/fault_kind.h"

#include <gtest/gtest.h>

namespace aftermath {
namespace {

TEST(FaultKind, ActionsRoundTripAsTheScenarioWritesThem) {
  std::vector<std::string> words;
  for (FaultAction a : all_fault_actions()) {
    std::string text(to_string(a));
    words.push_back(text);
    EXPECT_EQ(parse_fault_action(text), a) << text;
  }
  EXPECT_EQ(words,
            (std::vector<std::string>{"SIGKILL", "SIGTERM", "SIGINT", "SIGSTOP", "SIGCONT",
                                      "SIGSEGV", "SIGBUS", "host_oom", "device_oom", "delay",
                                      "hang", "node_loss", "partition", "agent_kill", "scancel"}));
  EXPECT_EQ(to_string(FaultAction::None), "");
  EXPECT_EQ(parse_fault_action(""), std::nullopt);
  EXPECT_EQ(parse_fault_action("sigkill"), std::nullopt);  // the scenario parser normalises first
  EXPECT_EQ(parse_fault_action("KILL"), std::nullopt);
}

TEST(FaultKind, MechanismsAndStatusesRenderTheWordsReportsHaveAlwaysUsed) {
  EXPECT_EQ(to_string(FaultMechanism::None), "");
  EXPECT_EQ(to_string(FaultMechanism::PointReply), "point-reply");
  for (auto m : {FaultMechanism::Auto, FaultMechanism::Signal, FaultMechanism::Rlimit,
                 FaultMechanism::Cgroup, FaultMechanism::Point, FaultMechanism::PointReply,
                 FaultMechanism::Hog, FaultMechanism::Interposer})
    EXPECT_EQ(parse_fault_mechanism(to_string(m)), m) << to_string(m);
  EXPECT_EQ(parse_fault_mechanism("swap"), std::nullopt);
  EXPECT_EQ(to_string(FaultStatus::NotTriggered), "not_triggered");
  for (auto s : {FaultStatus::NotTriggered, FaultStatus::Injected, FaultStatus::Skipped,
                 FaultStatus::Failed})
    EXPECT_EQ(parse_fault_status(to_string(s)), s) << to_string(s);
  EXPECT_EQ(parse_fault_status("done"), std::nullopt);
}

}  // namespace
}  // namespace aftermath
