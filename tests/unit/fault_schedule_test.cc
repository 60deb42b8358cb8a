// The fault schedule over a real job of one process (a child of the test,
// which stands where the reaper stands): triggers, order, waiting for a
// target, and what each fault's record says.
#include "harness/supervise/fault_schedule.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <tuple>

#include "tests/support/children.h"
#include "tests/support/loop.h"

namespace aftermath {
namespace {

using ::testing::HasSubstr;
using testing_children::OwnedChild;

pid_t sleeper() {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::alarm(30);
    for (;;) ::pause();
  }
  return pid;
}

FaultSpec fault(FaultAction a, int sig, const std::string& target, TriggerSpec::Kind k) {
  FaultSpec f;
  f.action = a;
  f.signal = sig;
  f.target.text = target;
  f.target.kind = target == "launcher" ? TargetSpec::Kind::Launcher
                  : target == "self"   ? TargetSpec::Kind::Self
                                       : TargetSpec::Kind::Rank;
  if (f.target.kind == TargetSpec::Kind::Rank) f.target.rank = 1;
  f.at.kind = k;
  f.at.text = "trigger";
  if (k == TriggerSpec::Kind::Phase) f.at.phase = "startup";
  return f;
}

struct ScheduleTest : ::testing::Test {
  boost::asio::io_context ctx;
  Nanos t0 = monotonic_now();
  std::vector<Observation> seen;
  int samples = 0;
  OwnedChild top{sleeper()};
  JobTracker tracker{ctx, "/proc", tracker_hooks()};
  FaultDriver driver{FaultDriverOptions{}};
  std::vector<FaultSpec> faults;
  std::vector<FaultRecord> records;
  std::unique_ptr<FaultSchedule> schedule;
  std::vector<std::tuple<size_t, std::string, long long>> relayed;  // remote triggers passed on

  Nanos now() const { return monotonic_now() - t0; }
  JobTrackerHooks tracker_hooks() {
    JobTrackerHooks h;
    h.now = [this] { return now(); };
    h.record = [this](Observation o) { seen.push_back(std::move(o)); };
    h.on_role_change = [] {};
    h.on_exit = [](int) {};
    h.on_refreshed = [] {};
    return h;
  }
  void start(std::vector<FaultSpec> f) {
    faults = std::move(f);
    records.assign(faults.size(), FaultRecord{});
    FaultScheduleHooks h;
    h.now = [this] { return now(); };
    h.record = [this](Observation o) { seen.push_back(std::move(o)); };
    h.sample = [this] {
      ++samples;
      tracker.walk();
    };
    h.remote_trigger = [this](size_t fault, const std::string& point, long long hit) {
      relayed.emplace_back(fault, point, hit);
    };
    schedule = std::make_unique<FaultSchedule>(ctx, faults, records, tracker, driver, h);
    tracker.set_containment(::getpid(), false);
    tracker.set_init_pid(::getpid());
    tracker.add_top(now(), top.pid(), top.pid(), "top", "top");
    schedule->start(now());
  }
  // Runs the loop until pred() holds, 10 s at most.
  template <typename Pred>
  bool run_until(Pred pred) {
    return testing::run_loop_until(ctx, pred);
  }
};

TEST_F(ScheduleTest, AnAfterTriggerFiresAtItsTimeOnATakenView) {
  ASSERT_GT(top.pid(), 0);
  FaultSpec f = fault(FaultAction::Sigkill, SIGKILL, "launcher", TriggerSpec::Kind::After);
  f.at.after = 20 * kMilli;
  start({f});
  ASSERT_TRUE(run_until([&] { return records[0].status != FaultStatus::NotTriggered; }));
  EXPECT_EQ(records[0].status, FaultStatus::Injected);
  EXPECT_EQ(records[0].mechanism, FaultMechanism::Signal);
  EXPECT_EQ(records[0].pids, std::vector<int>{top.pid()});
  EXPECT_EQ(records[0].target_role, "launcher");
  ASSERT_TRUE(records[0].sent);
  EXPECT_GE(*records[0].sent, 20 * kMilli);  // not before its time
  EXPECT_EQ(samples, 1);                     // a fresh view for the selector
  int faults_seen = 0;
  for (const auto& o : seen)
    if (const auto* f = o.as<obs::Fault>()) {
      ++faults_seen;
      EXPECT_EQ(f->pid, top.pid());
      EXPECT_EQ(f->action, FaultAction::Sigkill);
    }
  EXPECT_EQ(faults_seen, 1);
  int status = 0;
  ASSERT_TRUE(top.exited_within(10000, &status));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TEST_F(ScheduleTest, APointFiresOnItsProcessAndTheNextWaitsItsTurn) {
  ASSERT_GT(top.pid(), 0);
  FaultSpec hang = fault(FaultAction::Hang, 0, "self", TriggerSpec::Kind::Point);
  hang.at.point = "step";
  hang.at.hit = 2;
  FaultSpec later = fault(FaultAction::Delay, 0, "self", TriggerSpec::Kind::Point);
  later.at.point = "step";
  later.duration = 5 * kMilli;
  start({hang, later});
  EXPECT_EQ(schedule->on_point(top.pid(), "step", 1, nlohmann::json::object()), "continue");
  EXPECT_EQ(records[0].status, FaultStatus::NotTriggered);
  EXPECT_EQ(schedule->on_point(top.pid(), "step", 2, nlohmann::json::object()), "hang");
  EXPECT_EQ(records[0].status, FaultStatus::Injected);
  EXPECT_EQ(records[0].point, "step");
  EXPECT_EQ(records[0].hit, 2);
  EXPECT_EQ(schedule->on_point(top.pid(), "step", 3, nlohmann::json::object()), "delay 5");
  EXPECT_EQ(records[1].status, FaultStatus::Injected);
  EXPECT_EQ(samples, 0);  // a point's own process needs no fresh view
  UnfiredContext u = schedule->unfired(false, false);
  EXPECT_EQ(u.next_fault, 2u);
  EXPECT_EQ(u.point_hits.at("step"), 3);
}

TEST_F(ScheduleTest, ATargetNotThereYetIsWaitedForUntilTheJobEnds) {
  ASSERT_GT(top.pid(), 0);
  start({fault(FaultAction::Sigterm, SIGTERM, "rank:1", TriggerSpec::Kind::Phase)});
  // phase: startup fires at once (posted on the loop).
  ASSERT_TRUE(run_until([&] { return records[0].waiting_since.has_value(); }));
  EXPECT_EQ(records[0].status, FaultStatus::NotTriggered);
  ASSERT_FALSE(seen.empty());
  ASSERT_TRUE(seen.back().is<obs::Note>());
  EXPECT_THAT(seen.back().as<obs::Note>()->text,
              HasSubstr("no live job process matches 'rank:1' yet: waiting for one"));
  schedule->on_job_end();
  schedule->retry_waiting();
  EXPECT_EQ(records[0].status, FaultStatus::Failed);
  EXPECT_THAT(records[0].reason,
              HasSubstr("no live job process matched 'rank:1' from its trigger"));
  EXPECT_FALSE(top.exited_within(0)) << "nothing was signalled";
}

TEST_F(ScheduleTest, APointMatchingAnotherNodesFaultIsPassedOnOnce) {
  ASSERT_GT(top.pid(), 0);
  start({});
  TriggerSpec at;
  at.kind = TriggerSpec::Kind::Point;
  at.point = "step";
  at.hit = 2;
  schedule->watch({{5, at}});
  EXPECT_EQ(schedule->on_point(top.pid(), "step", 1, nlohmann::json::object()), "continue");
  EXPECT_TRUE(relayed.empty());
  EXPECT_EQ(schedule->on_point(top.pid(), "step", 2, nlohmann::json::object()), "continue");
  EXPECT_EQ(schedule->on_point(top.pid(), "step", 2, nlohmann::json::object()), "continue");
  ASSERT_EQ(relayed.size(), 1u);
  EXPECT_EQ(relayed[0], std::make_tuple(size_t{5}, std::string("step"), 2LL));
}

TEST_F(ScheduleTest, AFaultTriggeredOnAnotherNodeFiresInItsTurn) {
  ASSERT_GT(top.pid(), 0);
  FaultSpec first = fault(FaultAction::Sigcont, SIGCONT, "launcher", TriggerSpec::Kind::Point);
  first.at.point = "never";
  FaultSpec kill = fault(FaultAction::Sigkill, SIGKILL, "launcher", TriggerSpec::Kind::Point);
  kill.at.point = "step";
  start({first, kill});
  // Its turn has not come: the earlier fault has not fired.
  schedule->fire_remote(1, 0, "step", 20);
  ctx.poll();
  EXPECT_EQ(records[1].status, FaultStatus::NotTriggered);
  EXPECT_FALSE(top.exited_within(0));
  schedule->fire_remote(0, 0, "never", 1);
  ASSERT_TRUE(run_until([&] { return records[1].status != FaultStatus::NotTriggered; }));
  EXPECT_EQ(records[0].status, FaultStatus::Injected);
  EXPECT_EQ(records[1].status, FaultStatus::Injected);
  EXPECT_THAT(records[1].reason, HasSubstr("triggered on node 0"));
  EXPECT_EQ(records[1].point, "step");
  EXPECT_EQ(records[1].hit, 20);
  int status = 0;
  ASSERT_TRUE(top.exited_within(10000, &status));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  // Once fired, a late trigger changes nothing.
  schedule->fire_remote(1, 0, "step", 21);
  ctx.poll();
  EXPECT_EQ(records[1].hit, 20);
}

TEST_F(ScheduleTest, NothingFiresOnceStopped) {
  ASSERT_GT(top.pid(), 0);
  FaultSpec f = fault(FaultAction::Sigkill, SIGKILL, "launcher", TriggerSpec::Kind::After);
  f.at.after = 10 * kMilli;
  start({f});
  schedule->stop();
  Nanos until = monotonic_now() + 100 * kMilli;
  while (monotonic_now() < until) ctx.run_one_for(std::chrono::milliseconds(20));
  EXPECT_EQ(records[0].status, FaultStatus::NotTriggered);
  EXPECT_FALSE(top.exited_within(0));
}

}  // namespace
}  // namespace aftermath
