// Unit tests for faults as a scenario states them (harness/scenario/fault):
// target texts parsed directly, the list of known actions, and the
// AFTERMATH_POINTS string armed_points() builds from hand-made faults.
#include "harness/scenario/fault.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace aftermath {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// --- parse_target ---------------------------------------------------------------

TEST(ParseTargetDirect, AcceptsEveryForm) {
  auto t = parse_target("worker:12/7");
  ASSERT_TRUE(t) << t.error().what;
  EXPECT_EQ(t->kind, TargetSpec::Kind::Worker);
  EXPECT_EQ(t->rank, 12);
  EXPECT_EQ(t->worker, 7);
  EXPECT_EQ(t->text, "worker:12/7");
  t = parse_target("workers:0");
  ASSERT_TRUE(t) << t.error().what;
  EXPECT_EQ(t->kind, TargetSpec::Kind::Workers);
  EXPECT_EQ(t->rank, 0);
  t = parse_target("match:python .*train");
  ASSERT_TRUE(t) << t.error().what;
  EXPECT_EQ(t->regex, "python .*train");
  for (const char* ok : {"launcher", "all", "self", "rank:0"})
    EXPECT_TRUE(parse_target(ok).ok()) << ok;
}

TEST(ParseTargetDirect, RejectsMalformedArguments) {
  struct Case {
    const char* text;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"rank:x", "'rank:R' needs a rank number, got 'x'"},
      {"rank:", "'rank:R' needs a rank number, got ''"},
      {"rank:-1", "needs a rank number"},
      {"rank:1x", "needs a rank number"},
      {"workers:", "'workers:R' needs a rank number"},
      {"worker:1", "'worker:R/W' needs a rank and a worker index, got '1'"},
      {"worker:1/", "needs a rank and a worker index"},
      {"worker:/1", "needs a rank and a worker index"},
      {"worker:a/b", "needs a rank and a worker index"},
      {"match:", "'match:<regex>' needs a regex"},
      {"match:(", "invalid regex '('"},
      {"match:[a", "invalid regex '[a'"},
      {"launcher:1", "'launcher' takes no argument"},
      {"all:", "'all' takes no argument"},
      {"self:x", "'self' takes no argument"},
      {"bogus",
       "unknown target 'bogus' (launcher, rank:R, worker:R/W, workers:R, match:<regex>, all, self, "
       "node:N, agent:N)"},
      {"", "unknown target ''"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    auto t = parse_target(c.text);
    ASSERT_FALSE(t);
    EXPECT_THAT(t.error().what, HasSubstr(c.message));
  }
}

TEST(ParseTargetDirect, EveryKindWithItsFields) {
  auto launcher = parse_target("launcher");
  ASSERT_TRUE(launcher) << launcher.error().what;
  EXPECT_EQ(launcher->kind, TargetSpec::Kind::Launcher);
  EXPECT_EQ(launcher->rank, -1);
  EXPECT_EQ(parse_target("all")->kind, TargetSpec::Kind::All);
  EXPECT_EQ(parse_target("self")->kind, TargetSpec::Kind::Self);
  auto rank = parse_target("rank:3");
  ASSERT_TRUE(rank) << rank.error().what;
  EXPECT_EQ(rank->kind, TargetSpec::Kind::Rank);
  EXPECT_EQ(rank->rank, 3);
  EXPECT_EQ(rank->worker, -1);
  EXPECT_EQ(rank->text, "rank:3");
}

TEST(ParseTargetDirect, AMatchRegexKeepsItsOwnColons) {
  auto t = parse_target("match:a:b");
  ASSERT_TRUE(t) << t.error().what;
  EXPECT_EQ(t->kind, TargetSpec::Kind::Match);
  EXPECT_EQ(t->regex, "a:b");
}

TEST(ParseTargetDirect, NumbersMustBeWholeAndFitAnInt) {
  auto t = parse_target("rank:007");
  ASSERT_TRUE(t) << t.error().what;
  EXPECT_EQ(t->rank, 7);
  for (const char* bad : {"rank:99999999999", "rank: 1", "rank:1.0", "worker:1/2/3", "worker:1/-2",
                          "Rank:1", "LAUNCHER", " launcher"}) {
    SCOPED_TRACE(bad);
    auto bad_target = parse_target(bad);
    ASSERT_FALSE(bad_target);
    EXPECT_FALSE(bad_target.error().what.empty());
  }
}

// --- known_fault_actions ----------------------------------------------------------

TEST(KnownFaultActions, KnownActionsList) {
  EXPECT_THAT(known_fault_actions(),
              ElementsAre("SIGKILL", "SIGTERM", "SIGINT", "SIGSTOP", "SIGCONT", "SIGSEGV", "SIGBUS",
                          "host_oom", "device_oom", "delay", "hang", "node_loss", "partition",
                          "agent_kill", "scancel"));
}

// --- armed_points -------------------------------------------------------------------

TEST(ArmedPoints, HandMadeFaults) {
  FaultSpec a;
  a.at.kind = TriggerSpec::Kind::Point;
  a.at.point = "p";
  a.at.labels = {{"b", "2"}, {"a", "x"}};
  FaultSpec b;
  b.at.kind = TriggerSpec::Kind::After;
  b.at.point = "ignored";
  FaultSpec c;
  c.at.kind = TriggerSpec::Kind::Point;
  c.at.point = "q";
  c.at.hit = 3;
  EXPECT_EQ(armed_points({a, b, c}), "p{a=x,b=2};q#3");
}

TEST(ArmedPoints, ABarePointIsItsNameAndAFirstHitIsStillWritten) {
  FaultSpec bare;
  bare.at.kind = TriggerSpec::Kind::Point;
  bare.at.point = "step";
  EXPECT_EQ(armed_points({bare}), "step");  // no labels: no braces; no hit: any hit
  bare.at.hit = 1;
  EXPECT_EQ(armed_points({bare}), "step#1");
}

TEST(ArmedPoints, LabelsAreWrittenInKeyOrderAndOnlyPointTriggersCount) {
  FaultSpec p;
  p.at.kind = TriggerSpec::Kind::Point;
  p.at.point = "loader.worker.getitem";
  p.at.labels = {{"worker", "3"}, {"rank", "0"}};
  p.at.hit = 12;
  std::vector<FaultSpec> faults;
  for (auto kind : {TriggerSpec::Kind::After, TriggerSpec::Kind::When, TriggerSpec::Kind::Phase}) {
    FaultSpec other;
    other.at.kind = kind;
    other.at.point = "not_armed";
    faults.push_back(other);
  }
  EXPECT_EQ(armed_points(faults), "");
  faults.insert(faults.begin() + 1, p);
  EXPECT_EQ(armed_points(faults), "loader.worker.getitem{rank=0,worker=3}#12");
}

}  // namespace
}  // namespace aftermath
