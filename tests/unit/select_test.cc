// Target selection, predicates and point matching on hand-made processes.
#include "harness/inject/select.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace aftermath {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

JobProcess proc(int pid, int ppid, Role role, int depth, std::string cmdline, int rank = -1,
                int worker = -1, bool alive = true) {
  JobProcess p;
  p.pid = pid;
  p.ppid = ppid;
  p.role = role;
  p.depth = depth;
  p.cmdline = std::move(cmdline);
  p.rank = rank;
  p.worker = worker;
  p.alive = alive;
  p.is_top = depth == 0;
  p.state = 'S';
  return p;
}

// A launcher, two ranks with two workers each (one exited), a helper, and a
// second process that announced itself as a launcher.
std::vector<JobProcess> job() {
  return {
      proc(100, 1, Role::Launcher, 0, "python launch.py --nproc 2"),
      proc(200, 100, Role::Rank, 1, "python train.py --rank 0", 0),
      proc(201, 100, Role::Rank, 1, "python train.py --rank 1", 1),
      proc(300, 200, Role::Worker, 2, "python train.py loader", 0, 0),
      proc(301, 200, Role::Worker, 2, "python train.py loader", 0, 1),
      proc(310, 201, Role::Worker, 2, "python train.py loader", 1, 0),
      proc(311, 201, Role::Worker, 2, "python train.py loader", 1, 1, /*alive=*/false),
      proc(400, 300, Role::Helper, 3, "/opt/torch/bin/torch_shm_manager"),
      proc(150, 100, Role::Launcher, 1, "torchrun agent"),
      proc(500, 100, Role::Unknown, 1, "sleep 100", -1, -1, /*alive=*/false),
  };
}

TargetSpec target(const std::string& text) {
  auto t = parse_target(text);
  EXPECT_TRUE(t) << text << ": " << t.error().what;
  return t.value_or(TargetSpec{});
}

// --- select_targets ---------------------------------------------------------------

TEST(SelectTargets, LauncherIsEveryProcessWithTheLauncherRoleDeepestFirst) {
  EXPECT_THAT(select_targets(target("launcher"), job(), 0), ElementsAre(150, 100));
}

TEST(SelectTargets, LauncherOnlyByRole) {
  // A top process that announced another role is not the launcher.
  std::vector<JobProcess> procs = {proc(100, 1, Role::Rank, 0, "train", 0),
                                   proc(101, 100, Role::Worker, 1, "train", 0, 0)};
  EXPECT_THAT(select_targets(target("launcher"), procs, 0), IsEmpty());
}

TEST(SelectTargets, Rank) {
  EXPECT_THAT(select_targets(target("rank:1"), job(), 0), ElementsAre(201));
  EXPECT_THAT(select_targets(target("rank:0"), job(), 0), ElementsAre(200));
  EXPECT_THAT(select_targets(target("rank:7"), job(), 0), IsEmpty());
}

TEST(SelectTargets, Worker) {
  EXPECT_THAT(select_targets(target("worker:0/1"), job(), 0), ElementsAre(301));
  EXPECT_THAT(select_targets(target("worker:1/0"), job(), 0), ElementsAre(310));
  // Worker 1 of rank 1 has exited.
  EXPECT_THAT(select_targets(target("worker:1/1"), job(), 0), IsEmpty());
  EXPECT_THAT(select_targets(target("worker:0/5"), job(), 0), IsEmpty());
}

TEST(SelectTargets, WorkersOfARank) {
  EXPECT_THAT(select_targets(target("workers:0"), job(), 0), ElementsAre(300, 301));
  EXPECT_THAT(select_targets(target("workers:1"), job(), 0), ElementsAre(310));
  EXPECT_THAT(select_targets(target("workers:2"), job(), 0), IsEmpty());
}

TEST(SelectTargets, MatchOnTheCommandLine) {
  EXPECT_THAT(select_targets(target("match:torch_shm"), job(), 0), ElementsAre(400));
  EXPECT_THAT(select_targets(target("match:--rank [01]$"), job(), 0), ElementsAre(200, 201));
  // Deepest first: the workers (depth 2) before the ranks and the launcher.
  EXPECT_THAT(select_targets(target("match:^python"), job(), 0),
              ElementsAre(300, 301, 310, 200, 201, 100));
  // The exited "sleep 100" is never chosen.
  EXPECT_THAT(select_targets(target("match:sleep"), job(), 0), IsEmpty());
}

TEST(SelectTargets, AllIsEveryLiveProcessDeepestFirst) {
  EXPECT_THAT(select_targets(target("all"), job(), 0),
              ElementsAre(400, 300, 301, 310, 200, 201, 150, 100));
}

TEST(SelectTargets, DeepestFirstKeepsInputOrderWithinADepth) {
  std::vector<JobProcess> procs = {
      proc(1, 0, Role::Launcher, 0, "a"), proc(9, 1, Role::Unknown, 1, "b"),
      proc(5, 9, Role::Unknown, 2, "c"), proc(3, 1, Role::Unknown, 1, "d"),
      proc(7, 9, Role::Unknown, 2, "e")};
  EXPECT_THAT(select_targets(target("all"), procs, 0), ElementsAre(5, 7, 9, 3, 1));
}

TEST(SelectTargets, Self) {
  EXPECT_THAT(select_targets(target("self"), job(), 0), IsEmpty());
  EXPECT_THAT(select_targets(target("self"), job(), 301), ElementsAre(301));
  // The point's process has exited meanwhile, or is not one of the job's.
  EXPECT_THAT(select_targets(target("self"), job(), 311), IsEmpty());
  EXPECT_THAT(select_targets(target("self"), job(), 999), IsEmpty());
}

TEST(SelectTargets, ExitedProcessesAreNeverSelected) {
  std::vector<JobProcess> procs = job();
  for (auto& p : procs) p.alive = false;
  for (const char* t : {"launcher", "rank:0", "worker:0/0", "workers:0", "match:.", "all"}) {
    EXPECT_THAT(select_targets(target(t), procs, 0), IsEmpty()) << t;
  }
  EXPECT_THAT(select_targets(target("self"), procs, 300), IsEmpty());
}

TEST(SelectTargets, NoProcesses) { EXPECT_THAT(select_targets(target("all"), {}, 0), IsEmpty()); }

// --- predicate_holds -----------------------------------------------------------------

Predicate pred(Predicate::Kind kind, int count, int rank = -1, char state = 0) {
  Predicate p;
  p.kind = kind;
  p.count = count;
  p.rank = rank;
  p.state = state;
  return p;
}

TEST(PredicateHolds, WorkersOfARank) {
  // Rank 0 has two live workers; rank 1 one live (and one exited).
  EXPECT_TRUE(predicate_holds(pred(Predicate::Kind::Workers, 2, 0), job(), 0));
  EXPECT_FALSE(predicate_holds(pred(Predicate::Kind::Workers, 3, 0), job(), 0));
  EXPECT_TRUE(predicate_holds(pred(Predicate::Kind::Workers, 1, 1), job(), 0));
  EXPECT_FALSE(predicate_holds(pred(Predicate::Kind::Workers, 2, 1), job(), 0));
  EXPECT_FALSE(predicate_holds(pred(Predicate::Kind::Workers, 1, 5), job(), 0));
}

TEST(PredicateHolds, WorkersOfAnyRank) {
  EXPECT_TRUE(predicate_holds(pred(Predicate::Kind::Workers, 3), job(), 0));
  EXPECT_FALSE(predicate_holds(pred(Predicate::Kind::Workers, 4), job(), 0));
  EXPECT_TRUE(predicate_holds(pred(Predicate::Kind::Workers, 0), {}, 0));
  EXPECT_FALSE(predicate_holds(pred(Predicate::Kind::Workers, 1), {}, 0));
}

TEST(PredicateHolds, Processes) {
  // Ten processes, eight alive.
  EXPECT_TRUE(predicate_holds(pred(Predicate::Kind::Processes, 8), job(), 0));
  EXPECT_FALSE(predicate_holds(pred(Predicate::Kind::Processes, 9), job(), 0));
  EXPECT_TRUE(predicate_holds(pred(Predicate::Kind::Processes, 1), job(), 0));
}

TEST(PredicateHolds, ShmEntries) {
  EXPECT_FALSE(predicate_holds(pred(Predicate::Kind::ShmEntries, 2), job(), 1));
  EXPECT_TRUE(predicate_holds(pred(Predicate::Kind::ShmEntries, 2), job(), 2));
  EXPECT_TRUE(predicate_holds(pred(Predicate::Kind::ShmEntries, 2), job(), 3));
  EXPECT_TRUE(predicate_holds(pred(Predicate::Kind::ShmEntries, 0), {}, 0));
}

TEST(PredicateHolds, State) {
  std::vector<JobProcess> procs = job();
  EXPECT_FALSE(predicate_holds(pred(Predicate::Kind::State, 0, -1, 'D'), procs, 0));
  EXPECT_TRUE(predicate_holds(pred(Predicate::Kind::State, 0, -1, 'S'), procs, 0));
  procs[3].state = 'D';
  EXPECT_TRUE(predicate_holds(pred(Predicate::Kind::State, 0, -1, 'D'), procs, 0));
  // A state seen on an exited process does not count ...
  procs[3].state = 'S';
  procs[6].state = 'D';  // 311, exited
  EXPECT_FALSE(predicate_holds(pred(Predicate::Kind::State, 0, -1, 'D'), procs, 0));
  // ... except a zombie, which is an exited process by definition.
  procs[6].state = 'Z';
  EXPECT_TRUE(predicate_holds(pred(Predicate::Kind::State, 0, -1, 'Z'), procs, 0));
  procs[6].state = 'T';
  EXPECT_FALSE(predicate_holds(pred(Predicate::Kind::State, 0, -1, 'T'), procs, 0));
  procs[0].state = 'T';
  EXPECT_TRUE(predicate_holds(pred(Predicate::Kind::State, 0, -1, 'T'), procs, 0));
}

// --- point_matches --------------------------------------------------------------------

TriggerSpec point_trigger(std::string name, std::map<std::string, std::string> labels = {},
                          std::optional<long long> hit = std::nullopt) {
  TriggerSpec t;
  t.kind = TriggerSpec::Kind::Point;
  t.point = std::move(name);
  t.labels = std::move(labels);
  t.hit = hit;
  return t;
}

const nlohmann::json kNoLabels = nlohmann::json::object();

TEST(PointMatches, Name) {
  TriggerSpec t = point_trigger("step");
  EXPECT_TRUE(point_matches(t, "step", 1, kNoLabels, nullptr));
  EXPECT_FALSE(point_matches(t, "step2", 1, kNoLabels, nullptr));
  EXPECT_FALSE(point_matches(t, "ste", 1, kNoLabels, nullptr));
  EXPECT_FALSE(point_matches(t, "", 1, kNoLabels, nullptr));
}

TEST(PointMatches, OnlyPointTriggers) {
  TriggerSpec t = point_trigger("step");
  t.kind = TriggerSpec::Kind::After;
  EXPECT_FALSE(point_matches(t, "step", 1, kNoLabels, nullptr));
  t.kind = TriggerSpec::Kind::When;
  EXPECT_FALSE(point_matches(t, "step", 1, kNoLabels, nullptr));
}

TEST(PointMatches, Hit) {
  TriggerSpec t = point_trigger("step", {}, 2);
  EXPECT_FALSE(point_matches(t, "step", 1, kNoLabels, nullptr));
  EXPECT_TRUE(point_matches(t, "step", 2, kNoLabels, nullptr));
  EXPECT_FALSE(point_matches(t, "step", 3, kNoLabels, nullptr));
  // Without a hit in the trigger, any hit matches.
  TriggerSpec any = point_trigger("step");
  for (long long h : {1LL, 2LL, 1000LL})
    EXPECT_TRUE(point_matches(any, "step", h, kNoLabels, nullptr));
}

TEST(PointMatches, LabelsFromTheMessage) {
  TriggerSpec t = point_trigger("getitem", {{"worker", "3"}, {"index", "12"}});
  EXPECT_TRUE(point_matches(t, "getitem", 1, {{"worker", 3}, {"index", 12}}, nullptr));
  // Numbers and strings with the same text are the same label value.
  EXPECT_TRUE(point_matches(t, "getitem", 1, {{"worker", "3"}, {"index", "12"}}, nullptr));
  // Extra labels in the message are fine.
  EXPECT_TRUE(
      point_matches(t, "getitem", 1, {{"worker", 3}, {"index", 12}, {"epoch", 0}}, nullptr));
  EXPECT_FALSE(point_matches(t, "getitem", 1, {{"worker", 4}, {"index", 12}}, nullptr));
  EXPECT_FALSE(point_matches(t, "getitem", 1, {{"worker", "03"}, {"index", 12}}, nullptr));
  // A missing label with no sender to fall back on.
  EXPECT_FALSE(point_matches(t, "getitem", 1, {{"worker", 3}}, nullptr));
  EXPECT_FALSE(point_matches(t, "getitem", 1, kNoLabels, nullptr));
}

TEST(PointMatches, StringAndBoolLabelValues) {
  TriggerSpec t = point_trigger("save", {{"kind", "full"}, {"sync", "true"}});
  EXPECT_TRUE(point_matches(t, "save", 1, {{"kind", "full"}, {"sync", true}}, nullptr));
  EXPECT_FALSE(point_matches(t, "save", 1, {{"kind", "full"}, {"sync", false}}, nullptr));
  EXPECT_FALSE(point_matches(t, "save", 1, {{"kind", "partial"}, {"sync", true}}, nullptr));
}

TEST(PointMatches, LabelsFallBackToTheSendersAnnouncedIdentity) {
  JobProcess sender = proc(301, 200, Role::Worker, 2, "python train.py loader", 0, 1);
  TriggerSpec t = point_trigger("getitem", {{"rank", "0"}, {"worker", "1"}, {"role", "worker"}});
  EXPECT_TRUE(point_matches(t, "getitem", 5, kNoLabels, &sender));
  JobProcess other = sender;
  other.worker = 2;
  EXPECT_FALSE(point_matches(t, "getitem", 5, kNoLabels, &other));
  other = sender;
  other.rank = 1;
  EXPECT_FALSE(point_matches(t, "getitem", 5, kNoLabels, &other));
  other = sender;
  other.role = Role::Rank;
  EXPECT_FALSE(point_matches(t, "getitem", 5, kNoLabels, &other));
  // Not announced (-1): no fallback.
  other = sender;
  other.worker = -1;
  EXPECT_FALSE(point_matches(t, "getitem", 5, kNoLabels, &other));
  // Labels that are not rank/worker/role never come from the sender.
  TriggerSpec index = point_trigger("getitem", {{"index", "0"}});
  EXPECT_FALSE(point_matches(index, "getitem", 5, kNoLabels, &sender));
  // A labels value that is not an object falls back too.
  EXPECT_TRUE(point_matches(t, "getitem", 5, nlohmann::json(), &sender));
  EXPECT_TRUE(point_matches(t, "getitem", 5, nlohmann::json::array(), &sender));
}

TEST(PointMatches, TheMessagesLabelWinsOverTheAnnouncedOne) {
  JobProcess sender = proc(200, 100, Role::Rank, 1, "train", 0);
  TriggerSpec t = point_trigger("step", {{"rank", "0"}});
  EXPECT_TRUE(point_matches(t, "step", 1, kNoLabels, &sender));
  EXPECT_FALSE(point_matches(t, "step", 1, {{"rank", 1}}, &sender));
  JobProcess rank1 = proc(201, 100, Role::Rank, 1, "train", 1);
  EXPECT_TRUE(point_matches(t, "step", 1, {{"rank", 0}}, &rank1));
}

TEST(PointMatches, NameHitAndLabelsTogether) {
  JobProcess sender = proc(300, 200, Role::Worker, 2, "loader", 0, 3);
  TriggerSpec t = point_trigger("loader.worker.getitem", {{"rank", "0"}, {"worker", "3"}}, 12);
  EXPECT_TRUE(point_matches(t, "loader.worker.getitem", 12, {{"index", 99}}, &sender));
  EXPECT_FALSE(point_matches(t, "loader.worker.getitem", 11, {{"index", 99}}, &sender));
  EXPECT_FALSE(point_matches(t, "loader.worker.getitem", 12, {{"worker", 2}}, &sender));
}

}  // namespace
}  // namespace aftermath
