// The multi-node pieces that need no cluster: the scenario's `nodes:` and
// node faults, the clock-offset estimate, a node's part, merging checks and
// timelines over nodes, the network cut's ruleset, and the link's messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <set>

#include "harness/check/check_params.h"
#include "harness/check/scenario_load.h"
#include "harness/check/verdict.h"
#include "harness/cluster/clock_sync.h"
#include "harness/cluster/coordinator.h"
#include "harness/cluster/link.h"
#include "harness/cluster/merge.h"
#include "harness/cluster/node_part.h"
#include "harness/inject/network_cut.h"
#include "reports/json.h"
#include "reports/trace.h"
#include "tests/unit/parse_helpers.h"

namespace aftermath {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

ParseResult Parse(const std::string& text) {
  ParseContext ctx;
  ctx.file = "mn.yaml";
  ctx.scenario_dir = "/base";
  ctx.check_command = false;
  return parse_scenario(text, ctx);
}

std::string TwoNodes(const std::string& faults = "") {
  return "name: mn\n"
         "description: d\n"
         "nodes: 2\n"
         "job:\n"
         "  command: [/bin/echo, '${AFTERMATH_HEAD}:29400', "
         "'${AFTERMATH_NODE}/${AFTERMATH_NODES}']\n" +
         faults;
}

std::string Messages(const ParseResult& r) {
  std::string out;
  for (const auto& d : diagnostics_of(r)) out += d.to_string() + "\n";
  return out;
}

// --- the scenario ------------------------------------------------------------

TEST(MultiNodeScenario, NodesAndTheNodeVariablesStayForEachNodeToResolve) {
  ParseResult r = Parse(TwoNodes());
  ASSERT_TRUE(r.ok()) << Messages(r);
  EXPECT_EQ(r->nodes, 2);
  EXPECT_EQ(r->job.argv.at(1), "${AFTERMATH_HEAD}:29400");
  EXPECT_EQ(r->job.argv.at(2), "${AFTERMATH_NODE}/${AFTERMATH_NODES}");
}

TEST(MultiNodeScenario, AnAgentResolvesTheNodeVariables) {
  ParseContext ctx;
  ctx.file = "mn.yaml";
  ctx.check_command = false;
  ctx.vars = {{"AFTERMATH_HEAD", "node0"}, {"AFTERMATH_NODE", "1"}, {"AFTERMATH_NODES", "2"}};
  ParseResult r = parse_scenario(TwoNodes(), ctx);
  ASSERT_TRUE(r.ok()) << Messages(r);
  EXPECT_EQ(r->job.argv.at(1), "node0:29400");
  EXPECT_EQ(r->job.argv.at(2), "1/2");
}

TEST(MultiNodeScenario, ASingleNodeScenarioHasNoHead) {
  std::string text = TwoNodes();
  text.replace(text.find("nodes: 2\n"), 9, "");
  ParseResult r = Parse(text);
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(Messages(r), HasSubstr("unknown variable ${AFTERMATH_HEAD}"));
}

TEST(MultiNodeScenario, ANodeCountMustBeAPositiveNumber) {
  for (const char* bad : {"0", "-1", "two", "[2]", "99999"}) {
    std::string text = TwoNodes();
    text.replace(text.find("nodes: 2"), 8, std::string("nodes: ") + bad);
    ParseResult r = Parse(text);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_THAT(Messages(r), HasSubstr("mn.yaml:3:8: nodes: expected a node count")) << bad;
  }
}

TEST(MultiNodeScenario, NodeFaultsParse) {
  ParseResult r = Parse(TwoNodes(
      "faults:\n"
      "  - {action: node_loss, target: 'node:1', at: {point: step, labels: {rank: 2}, hit: 20}}\n"
      "  - {action: partition, target: 'node:0', at: {after: 1s}, duration: 5s}\n"
      "  - {action: SIGKILL, target: 'node:1', at: {after: 1s}}\n"));
  ASSERT_TRUE(r.ok()) << Messages(r);
  const auto& f = r->faults;
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].action, FaultAction::NodeLoss);
  EXPECT_EQ(f[0].target.kind, TargetSpec::Kind::Node);
  EXPECT_EQ(f[0].target.node, 1);
  EXPECT_EQ(f[1].action, FaultAction::Partition);
  EXPECT_EQ(f[1].duration, 5 * kSecond);
  EXPECT_EQ(f[2].signal, 9);
}

TEST(MultiNodeScenario, ImpossibleNodeFaultsAreNamedWithTheirLine) {
  struct Case {
    std::string fault, message;
  };
  for (const auto& c : std::vector<Case>{
           {"{action: node_loss, target: 'node:2', at: {after: 1s}}",
            "node:2 does not exist: nodes are 0..1"},
           {"{action: node_loss, target: 'rank:1', at: {after: 1s}}", "its target must be node:N"},
           {"{action: partition, target: 'node:1', at: {after: 1s}}", "faults[0].duration"},
           {"{action: host_oom, target: 'node:1', at: {after: 1s}}",
            "node:N takes the node actions"},
           {"{action: delay, target: 'node:1', at: {after: 1s}, duration: 1s}", "at a point"},
           {"{action: SIGKILL, target: 'node:x', at: {after: 1s}}", "'node:N' needs a node number"},
           {"{action: agent_kill, target: 'rank:1', at: {after: 1s}}",
            "its target must be agent:N"},
           {"{action: SIGKILL, target: 'agent:1', at: {after: 1s}}",
            "agent:N takes only agent_kill"},
           {"{action: agent_kill, target: 'agent:2', at: {after: 1s}}",
            "agent:2 does not exist: nodes are 0..1"},
           {"{action: agent_kill, target: 'agent:x', at: {after: 1s}}",
            "'agent:N' needs a node number"},
           {"{action: SIGKILL, target: 'node:1', node: 1, at: {after: 1s}}",
            "names its node already"},
           {"{action: SIGKILL, target: launcher, node: 2, at: {after: 1s}}",
            "node 2 does not exist"},
           {"{action: SIGKILL, target: launcher, node: one, at: {after: 1s}}", "faults[0].node"},
       }) {
    ParseResult r = Parse(TwoNodes("faults:\n  - " + c.fault + "\n"));
    EXPECT_FALSE(r.ok()) << c.fault;
    EXPECT_THAT(Messages(r), HasSubstr(c.message)) << c.fault;
    EXPECT_THAT(Messages(r), HasSubstr("mn.yaml:7:")) << c.fault;
  }
}

TEST(MultiNodeScenario, ANodeTargetNeedsSeveralNodes) {
  ParseResult r = Parse(
      "name: one\ndescription: d\njob:\n  command: /bin/true\n"
      "faults:\n  - {action: node_loss, target: 'node:0', at: {after: 1s}}\n");
  EXPECT_FALSE(r.ok());
  EXPECT_THAT(Messages(r), HasSubstr("needs a multi-node scenario (nodes: 2 or more)"));
}

TEST(MultiNodeScenario, ANodeRunsItsOwnNodeFaultsAndEveryOtherFault) {
  ParseResult r =
      Parse(TwoNodes("faults:\n"
                     "  - {action: node_loss, target: 'node:1', at: {after: 1s}}\n"
                     "  - {action: SIGKILL, target: 'rank:0', at: {after: 1s}}\n"
                     "  - {action: partition, target: 'node:0', at: {after: 1s}, duration: 1s}\n"));
  ASSERT_TRUE(r.ok()) << Messages(r);
  EXPECT_EQ(node_fault_indices(*r, 0), (std::vector<size_t>{1, 2}));
  EXPECT_EQ(node_fault_indices(*r, 1), (std::vector<size_t>{0, 1}));
  Scenario part = node_part(*r, 1);
  ASSERT_EQ(part.faults.size(), 2u);
  EXPECT_EQ(part.faults[0].action, FaultAction::NodeLoss);
  EXPECT_EQ(part.faults[1].action, FaultAction::Sigkill);
}

TEST(MultiNodeScenario, ANodeWatchesThePointsOfTheOtherNodesOwnFaults) {
  ParseResult r = Parse(TwoNodes(
      "faults:\n"
      "  - {action: node_loss, target: 'node:1', at: {point: step, labels: {rank: 0}, hit: 20}}\n"
      "  - {action: SIGKILL, target: 'rank:0', at: {point: step, hit: 30}}\n"
      "  - {action: SIGTERM, target: launcher, node: 0, at: {point: shutdown}}\n"
      "  - {action: partition, target: 'node:0', at: {after: 1s}, duration: 1s}\n"));
  ASSERT_TRUE(r.ok()) << Messages(r);
  // Node 0 watches node 1's node_loss point; node 1 watches node 0's
  // SIGTERM point. A fault of every node (1), or one with no point (3), is
  // watched by none.
  Scenario zero = node_part(*r, 0);
  ASSERT_EQ(zero.remote_triggers.size(), 1u);
  EXPECT_EQ(zero.remote_triggers[0].first, 0u);
  EXPECT_EQ(zero.remote_triggers[0].second.point, "step");
  EXPECT_EQ(zero.remote_triggers[0].second.labels.at("rank"), "0");
  Scenario one = node_part(*r, 1);
  ASSERT_EQ(one.remote_triggers.size(), 1u);
  EXPECT_EQ(one.remote_triggers[0].first, 2u);
  EXPECT_EQ(one.remote_triggers[0].second.point, "shutdown");
  EXPECT_EQ(fault_owner(r->faults[0]), 1);
  EXPECT_EQ(fault_owner(r->faults[1]), -1);
  EXPECT_EQ(fault_owner(r->faults[2]), 0);
}

TEST(MultiNodeScenario, AnAgentKillAndAFaultPinnedToANodeParse) {
  ParseResult r = Parse(TwoNodes(
      "faults:\n"
      "  - {action: agent_kill, target: 'agent:1', at: {point: step, labels: {rank: 2}, hit: 20}}\n"
      "  - {action: SIGTERM, target: launcher, node: 0, at: {after: 1s}}\n"));
  ASSERT_TRUE(r.ok()) << Messages(r);
  const auto& f = r->faults;
  EXPECT_EQ(f[0].action, FaultAction::AgentKill);
  EXPECT_EQ(f[0].target.kind, TargetSpec::Kind::Agent);
  EXPECT_EQ(f[0].target.node, 1);
  EXPECT_EQ(f[1].target.kind, TargetSpec::Kind::Launcher);
  EXPECT_EQ(f[1].node, 0);
  // Each belongs to its node alone.
  EXPECT_EQ(node_fault_indices(*r, 0), (std::vector<size_t>{1}));
  EXPECT_EQ(node_fault_indices(*r, 1), (std::vector<size_t>{0}));
}

TEST(MultiNodeScenario, AFaultsNodeFieldNeedsSeveralNodes) {
  ParseResult one = Parse(
      "name: one\ndescription: d\njob:\n  command: /bin/true\n"
      "faults:\n  - {action: SIGKILL, target: launcher, node: 0, at: {after: 1s}}\n");
  EXPECT_FALSE(one.ok());
  EXPECT_THAT(Messages(one), HasSubstr("needs a multi-node scenario"));
}

TEST(MultiNodeScenario, DiedWithAgentIsOnInAMultiNodeRunAndJudgedByTheCoordinatorAlone) {
  ParseResult two = Parse(TwoNodes());
  ASSERT_TRUE(two.ok()) << Messages(two);
  EXPECT_TRUE(two->checks.at(kDiedWithAgent).enabled);
  EXPECT_EQ(node_part(*two, 1).checks.count(kDiedWithAgent), 0u);
  ParseResult off = Parse(TwoNodes("checks: {died_with_agent: false}\n"));
  ASSERT_TRUE(off.ok()) << Messages(off);
  EXPECT_FALSE(off->checks.at(kDiedWithAgent).enabled);
  ParseResult one = Parse("name: one\ndescription: d\njob:\n  command: /bin/true\n");
  ASSERT_TRUE(one.ok()) << Messages(one);
  EXPECT_FALSE(one->checks.at(kDiedWithAgent).enabled);
}

// --- clocks ------------------------------------------------------------------

TEST(ClockSync, TheShortestRoundTripGivesTheEstimateAndItsBound) {
  // The agent's clock runs 1 s ahead. Sample 2 has the shortest round trip
  // (100 us) and a symmetric path: the offset comes out exact.
  std::vector<ClockSample> s = {
      {1000000, 1000000 + kSecond + 900000, 2000000},  // 1 ms, asymmetric
      {5000000, 5000000 + kSecond + 50000, 5100000},   // 100 us
      {9000000, 9000000 + kSecond + 10000, 9500000},   // 500 us, asymmetric
  };
  auto c = estimate_offset(s);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->offset, kSecond);
  EXPECT_EQ(c->round_trip, 100000);
  EXPECT_EQ(c->uncertainty, 50000);
  EXPECT_EQ(c->samples, 3);
  EXPECT_EQ(to_coordinator(5000000 + kSecond, *c), 5000000);
}

TEST(ClockSync, TheTrueOffsetIsWithinTheBoundWhateverTheLegs) {
  // One leg 90 us, the other 10 us: the estimate is off by 40 us, inside ±50 us.
  Nanos truth = -3 * kSecond;
  ClockSample s{0, 90000 + truth, 100000};
  auto c = estimate_offset({s});
  ASSERT_TRUE(c);
  EXPECT_LE(std::llabs(c->offset - truth), c->uncertainty);
  EXPECT_EQ(std::llabs(c->offset - truth), 40000);
}

TEST(ClockSync, NoUsableSampleNoEstimate) {
  EXPECT_FALSE(estimate_offset({}));
  EXPECT_FALSE(estimate_offset({{100, 50, 90}}));  // received before sent
}

// --- merging -----------------------------------------------------------------

CheckResult Check(CheckStatus s, std::string reason) {
  CheckResult c;
  c.name = "no_hang";
  c.status = s;
  c.reason = std::move(reason);
  c.measured = {{"stalled_ms", 1}};
  return c;
}

TEST(MergeCheck, AFailingNodeFailsTheCheckAndIsNamed) {
  CheckResult m = merge_check("no_hang", {{0, Check(CheckStatus::Fail, "rank 0 stalled 10 s")},
                                          {1, Check(CheckStatus::Pass, "no hang")}});
  EXPECT_EQ(m.status, CheckStatus::Fail);
  EXPECT_EQ(m.reason, "node0: rank 0 stalled 10 s");
  EXPECT_EQ(m.measured["nodes"]["1"]["stalled_ms"], 1);
}

TEST(MergeCheck, ErrorOutranksFailAndSkippedOnlyWhenAllSkip) {
  EXPECT_EQ(
      merge_check("x", {{0, Check(CheckStatus::Fail, "a")}, {1, Check(CheckStatus::Error, "b")}})
          .status,
      CheckStatus::Error);
  EXPECT_EQ(
      merge_check("x", {{0, Check(CheckStatus::Skipped, "a")}, {1, Check(CheckStatus::Pass, "b")}})
          .status,
      CheckStatus::Pass);
  EXPECT_EQ(merge_check(
                "x", {{0, Check(CheckStatus::Skipped, "a")}, {1, Check(CheckStatus::Skipped, "b")}})
                .status,
            CheckStatus::Skipped);
}

// A node's run that exited cleanly: a top process started and exited.
NodeRun CleanNode(int index, Nanos origin, Nanos offset, int pid) {
  NodeRun n;
  n.index = index;
  n.host = "node" + std::to_string(index);
  n.agent = AgentState::Done;
  n.have_result = true;
  n.verdict = Verdict::Pass;
  n.origin = origin;
  n.clock = ClockOffset{offset, 1000, 2000, 8};
  n.out_dir = "/nonexistent/node" + std::to_string(index);
  auto& tl = n.timeline;
  tl.add(obs::phase(0, RunPhase::Launch));
  tl.add(obs::proc_start(1 * kMilli, pid, 1, "python3", "python3 train.py", Role::Launcher, 0));
  tl.add(obs::proc_exit(500 * kMilli, pid, Outcome::exited(0)));
  tl.add(obs::proc_gone(501 * kMilli, pid));
  tl.add(obs::phase(600 * kMilli, RunPhase::Done));
  tl.facts.top_pid = pid;
  tl.facts.top_outcome = Outcome::exited(0);
  tl.facts.containment = JobContainment::PidNamespace;
  return n;
}

TEST(MergeNodes, EachNodeIsShiftedOntoTheCoordinatorsClockAndJudged) {
  ParseResult p = Parse(TwoNodes());
  ASSERT_TRUE(p.ok()) << Messages(p);
  // Coordinator time 0 is at 100 s on its clock. Node 0's clock equals the
  // coordinator's and its run began at 100.010 s; node 1's clock is 7 s
  // ahead and its run began at 107.030 s on it (100.030 s on ours).
  std::vector<NodeRun> nodes = {CleanNode(0, 100 * kSecond + 10 * kMilli, 0, 4000),
                                CleanNode(1, 107 * kSecond + 30 * kMilli, 7 * kSecond, 5000)};
  ScenarioResult r;
  r.name = "mn";
  RunOptions o;
  merge_nodes(r, *p, o, nodes, 100 * kSecond);
  ASSERT_EQ(r.nodes.size(), 2u);
  EXPECT_EQ(r.nodes[0].started, 10 * kMilli);
  EXPECT_EQ(r.nodes[1].started, 30 * kMilli);
  EXPECT_EQ(r.nodes[1].clock_offset, 7 * kSecond);
  EXPECT_EQ(r.nodes[1].verdict, Verdict::Pass) << r.nodes[1].verdict_reason;
  ASSERT_EQ(r.processes.size(), 2u);
  EXPECT_EQ(r.processes[1].node, 1);
  EXPECT_EQ(r.processes[1].started, 31 * kMilli);
  // The merged timeline is in order, each observation with its node.
  Nanos last = 0;
  for (const auto& ob : r.timeline.observations) {
    EXPECT_GE(ob.t, last);
    last = ob.t;
    EXPECT_TRUE(ob.node == 0 || ob.node == 1);
  }
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.verdict_reason;
  EXPECT_FALSE(r.checks.empty());
}

// The run's stall is the first node's verdict: node 0's progress stopped
// first, but its job then waited 5 s for a CPU; node 1's came 2 s sooner.
TEST(MergeNodes, TheStallIsTheNodeWhoseVerdictCameFirst) {
  ParseResult p = Parse(TwoNodes());
  ASSERT_TRUE(p.ok()) << Messages(p);
  std::vector<NodeRun> nodes = {CleanNode(0, 0, 0, 4000), CleanNode(1, 0, 0, 5000)};
  for (auto& n : nodes) n.timeline.facts.stall_window = 4 * kSecond;
  nodes[0].timeline.facts.stalled_since = 2 * kSecond;
  nodes[0].timeline.facts.stall_cpu_wait = 5 * kSecond;  // verdict at 11 s
  nodes[1].timeline.facts.stalled_since = 3 * kSecond;   // verdict at 7 s
  ScenarioResult r;
  RunOptions o;
  merge_nodes(r, *p, o, nodes, 0);
  EXPECT_EQ(r.timeline.facts.stalled_since, 3 * kSecond);
  EXPECT_EQ(r.timeline.facts.stall_cpu_wait, 0);
  EXPECT_EQ(stall_verdict_at(r.timeline.facts), 7 * kSecond);
}

TEST(MergeNodes, ALostAgentMakesTheRunAnError) {
  ParseResult p = Parse(TwoNodes());
  ASSERT_TRUE(p.ok());
  std::vector<NodeRun> nodes = {CleanNode(0, 0, 0, 4000), CleanNode(1, 0, 0, 5000)};
  nodes[1].agent = AgentState::Lost;
  nodes[1].have_result = false;
  nodes[1].lost_at = 2 * kSecond;
  ScenarioResult r;
  RunOptions o;
  merge_nodes(r, *p, o, nodes, 0);
  EXPECT_EQ(r.verdict, Verdict::Error);
  EXPECT_THAT(r.verdict_reason, HasSubstr("node1: its agent was lost"));
}

// Node 1's agent killed by the scenario at its run's 2 s: what it streamed
// until then (its launcher, a fault observation), and what the witness found.
std::vector<NodeRun> AgentKilled(std::optional<WitnessReport> witness) {
  std::vector<NodeRun> nodes = {CleanNode(0, 0, 0, 4000), CleanNode(1, 5 * kSecond, 0, 5000)};
  NodeRun& n = nodes[1];
  n.agent = AgentState::Lost;
  n.have_result = false;
  n.verdict = Verdict::Error;
  n.lost_at = 7 * kSecond;
  n.timeline = Timeline{};
  n.timeline.add(
      obs::proc_start(1 * kMilli, 5000, 1, "python3", "python3 train.py", Role::Launcher, 0, 777));
  n.timeline.add(obs::fault(2 * kSecond, 0, 5000, FaultAction::AgentKill, "after 2s"));
  n.witness = std::move(witness);
  return nodes;
}

ScenarioResult MergeAgentKilled(std::vector<NodeRun> nodes, const std::string& extra = "") {
  ParseResult p = Parse(
      TwoNodes("faults:\n  - {action: agent_kill, target: 'agent:1', at: {after: 2s}}\n" + extra));
  EXPECT_TRUE(p.ok()) << Messages(p);
  ScenarioResult r;
  RunOptions o;
  nodes[0].fault_indices = {};
  merge_nodes(r, *p, o, nodes, 0);
  return r;
}

const CheckResult* FindCheck(const ScenarioResult& r, const std::string& name) {
  for (const auto& c : r.checks)
    if (c.name == name) return &c;
  return nullptr;
}

TEST(MergeNodes, AnAgentKilledByTheScenarioIsJudgedByWhatOutlivedIt) {
  WitnessReport none;
  none.checked = 1;
  none.host = "node1";
  ScenarioResult r = MergeAgentKilled(AgentKilled(none));
  const CheckResult* c = FindCheck(r, kDiedWithAgent);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, CheckStatus::Pass) << c->reason;
  EXPECT_EQ(r.verdict, Verdict::Pass) << r.verdict_reason;
  EXPECT_EQ(r.nodes[1].verdict, Verdict::Pass) << r.nodes[1].verdict_reason;
  EXPECT_EQ(r.nodes[1].verdict_reason,
            "its agent was killed by the scenario's agent_kill at " + format_duration(7 * kSecond));
  // The fault as node 1 streamed it, on the coordinator's clock.
  ASSERT_EQ(r.timeline.facts.faults.size(), 1u);
  EXPECT_EQ(r.timeline.facts.faults[0].status, FaultStatus::Injected);
  EXPECT_EQ(r.timeline.facts.faults[0].sent, 7 * kSecond);
  // Its processes are in the run, from what it streamed.
  int node1 = 0;
  for (const auto& p : r.processes) node1 += p.node == 1;
  EXPECT_EQ(node1, 1);
}

TEST(MergeNodes, AJobProcessThatOutlivedItsAgentFailsDiedWithAgent) {
  WitnessReport w;
  w.checked = 1;
  w.host = "node1";
  w.waited = 1 * kSecond;
  WitnessSurvivor s;
  s.process = {5000, 777, "launcher"};
  s.comm = "python3";
  s.killed = true;
  w.survivors.push_back(s);
  ScenarioResult r = MergeAgentKilled(AgentKilled(w));
  const CheckResult* c = FindCheck(r, kDiedWithAgent);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, CheckStatus::Fail);
  EXPECT_THAT(c->reason, HasSubstr("node1: 1 of 1 job process(es) outlived its agent"));
  EXPECT_THAT(c->reason, HasSubstr("5000 (python3, launcher)"));
  EXPECT_THAT(c->reason, HasSubstr("the witness killed them"));
  EXPECT_EQ(r.verdict, Verdict::Fail);
  EXPECT_EQ(r.nodes[1].verdict, Verdict::Fail);
  // Named in the expectation: the known bug reproduced.
  ScenarioResult x = MergeAgentKilled(AgentKilled(w), "expect: {fail: [died_with_agent]}\n");
  EXPECT_EQ(x.verdict, Verdict::XFail) << x.verdict_reason;
}

TEST(MergeNodes, NoWitnessReportIsAnErrorNotAPass) {
  std::vector<NodeRun> nodes = AgentKilled(std::nullopt);
  nodes[1].witness_error = "the witness on node1 gave no report";
  ScenarioResult r = MergeAgentKilled(nodes);
  const CheckResult* c = FindCheck(r, kDiedWithAgent);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, CheckStatus::Error);
  EXPECT_THAT(c->reason, HasSubstr("gave no report"));
  EXPECT_EQ(r.verdict, Verdict::Error);
}

TEST(MergeNodes, AFaultIsRecordedFromTheNodeWhereItActed) {
  ParseResult p =
      Parse(TwoNodes("faults:\n  - {action: SIGKILL, target: 'rank:2', at: {after: 1s}}\n"));
  ASSERT_TRUE(p.ok()) << Messages(p);
  std::vector<NodeRun> nodes = {CleanNode(0, 0, 0, 4000), CleanNode(1, 5 * kSecond, 0, 5000)};
  for (auto& n : nodes) {
    n.fault_indices = {0};
    n.timeline.facts.faults.resize(1);
  }
  nodes[0].timeline.facts.faults[0].status = FaultStatus::NotTriggered;
  nodes[1].timeline.facts.faults[0].status = FaultStatus::Injected;
  nodes[1].timeline.facts.faults[0].sent = 1 * kSecond;
  ScenarioResult r;
  RunOptions o;
  merge_nodes(r, *p, o, nodes, 0);
  ASSERT_EQ(r.timeline.facts.faults.size(), 1u);
  EXPECT_EQ(r.timeline.facts.faults[0].status, FaultStatus::Injected);
  EXPECT_EQ(r.timeline.facts.faults[0].sent, 6 * kSecond);
}

TEST(MultiNodeTimings, TheJobSpansFromTheFirstTopsStartToTheLastTopsEnd) {
  std::vector<NodeRun> nodes = {CleanNode(0, 0, 0, 4000), CleanNode(1, 0, 0, 5000)};
  Timeline tl;
  std::vector<ProcessHistory> procs;
  for (auto& n : nodes) {
    Nanos shift = n.index * 100 * kMilli;  // node 1 starts and ends 100 ms later
    for (auto ob : n.timeline.observations) {
      ob.t += shift;
      ob.node = n.index;
      tl.add(ob);
    }
  }
  tl.facts = nodes[0].timeline.facts;
  procs = build_histories(tl);
  ASSERT_EQ(procs.size(), 2u);
  procs[0].node = 0;
  procs[1].node = 1;
  procs[0].is_top = procs[1].is_top = true;
  Timings t = compute_timings(tl, procs);
  // Node 0's top: 1 ms to 500 ms; node 1's: 101 ms to 600 ms.
  EXPECT_EQ(t.ms.at("job_ms"), 599.0);
  EXPECT_EQ(t.origin, TimingsOrigin::TopExit);
  // Node 1's top ended by its teardown (at 550 ms): the job did not end by itself.
  tl.add([] {
    Observation o = obs::phase(550 * kMilli, RunPhase::Teardown);
    o.node = 1;
    return o;
  }());
  t = compute_timings(tl, procs);
  EXPECT_EQ(t.ms.at("job_ms"), std::nullopt);
  EXPECT_EQ(t.ms.at("to_all_exited_ms"), std::nullopt);
}

// --- where the agents connect ----------------------------------------------------

TEST(CoordinatorAddress, ASetAddressWinsElseTheHostsOwnUnlessLoopback) {
  EXPECT_EQ(*pick_coordinator_address("10.1.2.1", "head", Expected<std::string>("127.0.1.1")),
            "10.1.2.1");
  EXPECT_EQ(*pick_coordinator_address("", "head", Expected<std::string>("10.9.8.7")), "10.9.8.7");
  auto loop = pick_coordinator_address("", "head", Expected<std::string>("127.0.1.1"));
  ASSERT_FALSE(loop);
  EXPECT_THAT(loop.error().what, HasSubstr("'head' resolves to 127.0.1.1, a loopback address"));
  EXPECT_THAT(loop.error().what, HasSubstr("set $AFTERMATH_COORDINATOR_ADDR"));
  auto none = pick_coordinator_address("", "head", Expected<std::string>(Error{"no such host"}));
  ASSERT_FALSE(none);
  EXPECT_THAT(none.error().what, HasSubstr("'head' does not resolve (no such host)"));
}

// --- the network cut and the link ----------------------------------------------

TEST(NetworkCut, TheRulesetKeepsLoopbackAndTheCoordinatorOnly) {
  NftNetworkCut cut("aftermath_cut_1", KeptPeer{"10.1.2.3", 4567}, "/tmp");
  std::string rules = cut.ruleset();
  EXPECT_THAT(rules, HasSubstr("table inet aftermath_cut_1 { flags owner;"));
  EXPECT_EQ(rules.find('\n'), std::string::npos);  // one line: nft -i reads lines
  EXPECT_THAT(rules, HasSubstr("iif \"lo\" accept"));
  EXPECT_THAT(rules, HasSubstr("ip saddr 10.1.2.3 tcp sport 4567 accept"));
  EXPECT_THAT(rules, HasSubstr("ip daddr 10.1.2.3 tcp dport 4567 accept"));
  EXPECT_FALSE(cut.is_cut());
}

TEST(Link, MessagesCrossInOrderAndAClosedPeerIsSeen) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  Link a{UniqueFd(sv[0])}, b{UniqueFd(sv[1])};
  ASSERT_TRUE(a.send({{"type", "ping"}, {"id", 1}}));
  ASSERT_TRUE(a.send({{"type", "ping"}, {"id", 2}, {"text", std::string("bad \xff utf8")}}));
  auto m1 = b.receive(5 * kSecond);
  ASSERT_TRUE(m1);
  EXPECT_EQ((*m1)["id"], 1);
  auto m2 = b.receive(5 * kSecond);
  ASSERT_TRUE(m2);
  EXPECT_EQ((*m2)["id"], 2);
  EXPECT_THAT((*m2)["text"].get<std::string>(), HasSubstr("bad"));
  a.close();
  std::vector<nlohmann::json> got;
  auto closed = b.receive(5 * kSecond);
  EXPECT_FALSE(closed);
}

TEST(Link, ReceiveHasADeadline) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  Link a{UniqueFd(sv[0])}, b{UniqueFd(sv[1])};
  auto m = b.receive(50 * kMilli);
  ASSERT_FALSE(m);
  EXPECT_THAT(m.error().what, HasSubstr("no message within"));
}

TEST(Link, TcpOnLoopback) {
  int port = 0;
  auto l = listen_tcp("127.0.0.1", &port);
  ASSERT_TRUE(l) << l.error().what;
  ASSERT_GT(port, 0);
  auto c = connect_tcp("127.0.0.1", port, 5 * kSecond);
  ASSERT_TRUE(c) << c.error().what;
  auto s = accept_tcp(l->get(), 5 * kSecond);
  ASSERT_TRUE(s) << s.error().what;
  EXPECT_EQ(peer_address(s->get()), "127.0.0.1");
  Link client(std::move(*c)), server(std::move(*s));
  ASSERT_TRUE(client.send({{"type", "hello"}}));
  auto m = server.receive(5 * kSecond);
  ASSERT_TRUE(m);
  EXPECT_EQ((*m)["type"], "hello");
}

}  // namespace
}  // namespace aftermath

namespace aftermath {
namespace {

// Two nodes are two machines: the same pid on each is two processes, with
// their own logs and their own tracks.
TEST(MultiNodeReports, TheSamePidOnTwoNodesIsTwoProcesses) {
  RunResult run;
  ScenarioResult s;
  s.name = "mn";
  for (int node : {0, 1}) {
    ProcessHistory p;
    p.pid = 7;
    p.node = node;
    p.comm = "python3";
    p.role = Role::Rank;
    s.processes.push_back(p);
    s.process_logs[process_key(node, 7)] = {"node" + std::to_string(node) + "/logs/rank-7.out", ""};
  }
  run.scenarios.push_back(s);
  nlohmann::json doc = to_json(run);
  const auto& procs = doc["scenarios"][0]["processes"];
  ASSERT_EQ(procs.size(), 2u);
  EXPECT_EQ(procs[0]["logs"]["stdout"], "node0/logs/rank-7.out");
  EXPECT_EQ(procs[1]["logs"]["stdout"], "node1/logs/rank-7.out");

  std::set<long long> tids;
  std::set<std::string> names;
  const nlohmann::json trace = render_trace(run);
  for (const auto& e : trace["traceEvents"])
    if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name" &&
        e["tid"].get<long long>() != kTraceHarnessTid) {
      tids.insert(e["tid"].get<long long>());
      names.insert(e["args"]["name"].get<std::string>());
    }
  EXPECT_EQ(tids.size(), 2u);
  EXPECT_THAT(names, ::testing::Contains(HasSubstr("node1 rank 7")));
  EXPECT_EQ(process_key(-1, 7), 7);  // one machine: the pid itself
}

}  // namespace
}  // namespace aftermath
