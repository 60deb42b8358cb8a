// Unit tests for the timeline (harness/core/timeline): the process histories
// built from its observations, and the phases read off it.
#include "harness/core/timeline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tests/unit/run_fixtures.h"

namespace aftermath {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using namespace testing_run;

// ============================================================ build_histories

TEST(BuildHistories, FieldsFromProcStart) {
  Timeline tl;
  tl.facts.top_pid = kTop;
  tl.facts.init_pid = kInit;
  tl.add(obs::proc_start(msec(1), kTop, kInit, "torchrun", "torchrun --nproc 2", Role::Launcher, 0,
                         555, 'R'));
  tl.add(obs::proc_start(msec(5), 101, kTop, "python", "python train.py", Role::Rank, 1, 556, 'S'));
  auto hs = build_histories(tl);
  ASSERT_EQ(hs.size(), 2u);
  const auto& top = hs[0];
  EXPECT_EQ(top.pid, kTop);
  EXPECT_TRUE(top.is_top);
  EXPECT_FALSE(top.orphaned_at.has_value());  // the top's parent is the reaper by design
  const auto& rank = hs[1];
  EXPECT_EQ(rank.pid, 101);
  EXPECT_EQ(rank.first_ppid, kTop);
  EXPECT_EQ(rank.last_ppid, kTop);
  EXPECT_EQ(rank.depth, 1);
  EXPECT_EQ(rank.comm, "python");
  EXPECT_EQ(rank.cmdline, "python train.py");
  EXPECT_EQ(rank.role, Role::Rank);
  EXPECT_EQ(rank.started, msec(5));
  EXPECT_EQ(rank.last_state, 'S');
  EXPECT_FALSE(rank.is_top);
  EXPECT_FALSE(rank.end().has_value());
  EXPECT_FALSE(rank.orphaned_at.has_value());
}

TEST(BuildHistories, OrphanedAtFromProcParent) {
  Timeline tl;
  tl.facts.top_pid = kTop;
  tl.facts.init_pid = kInit;
  tl.add(obs::proc_start(msec(1), kTop, kInit, "top", "top"));
  tl.add(obs::proc_start(msec(2), 101, kTop, "child", "child"));
  tl.add(obs::proc_parent(msec(50), 101, kInit));
  tl.add(obs::proc_parent(msec(60), 101, 42));  // a second change keeps the first time
  auto hs = build_histories(tl);
  const auto& h = history(hs, 101);
  EXPECT_EQ(h.first_ppid, kTop);
  EXPECT_EQ(h.last_ppid, 42);
  EXPECT_EQ(h.orphaned_at, msec(50));
}

TEST(BuildHistories, OrphanedAtFromTheParentsEnd) {
  Timeline tl;
  tl.facts.top_pid = kTop;
  tl.facts.init_pid = kInit;
  tl.add(obs::proc_start(msec(1), kTop, kInit, "top", "top"));
  tl.add(obs::proc_start(msec(2), 101, kTop, "mid", "mid"));
  tl.add(obs::proc_start(msec(3), 102, 101, "leaf", "leaf"));
  tl.add(obs::proc_start(msec(4), 103, 101, "short", "short"));
  tl.add(obs::proc_exit(msec(20), 103, Outcome::exited(0)));  // ends before its parent
  tl.add(obs::proc_gone(msec(20), 103));
  tl.add(obs::proc_exit(msec(100), 101, Outcome::exited(0)));
  tl.add(obs::proc_gone(msec(100), 101));
  tl.add(obs::proc_parent(msec(130), 102, kInit));  // sampled later than the parent's pidfd
  tl.add(obs::proc_exit(msec(300), 102, Outcome::exited(0)));
  tl.add(obs::proc_gone(msec(300), 102));
  auto hs = build_histories(tl);
  EXPECT_EQ(history(hs, 102).orphaned_at, msec(100));  // the earlier of the two
  EXPECT_FALSE(history(hs, 103).orphaned_at.has_value());
  EXPECT_FALSE(history(hs, 101).orphaned_at.has_value());  // its parent, the top, never ended
}

TEST(BuildHistories, OrphanedAtFromTheParentsEndWithoutAnyReparentSample) {
  Timeline tl;
  tl.add(obs::proc_start(msec(1), 101, 1, "mid", "mid"));
  tl.add(obs::proc_start(msec(3), 102, 101, "leaf", "leaf"));
  tl.add(obs::proc_exit(msec(100), 101, std::nullopt));
  auto hs = build_histories(tl);
  EXPECT_EQ(history(hs, 102).orphaned_at, msec(100));  // still alive: orphaned
}

TEST(BuildHistories, FirstSeenUnderTheReaper) {
  Timeline tl;
  tl.facts.top_pid = kTop;
  tl.facts.init_pid = kInit;
  tl.add(obs::proc_start(msec(1), kTop, kInit, "top", "top"));
  tl.add(obs::proc_start(msec(40), 103, kInit, "daemon", "daemon"));
  auto hs = build_histories(tl);
  EXPECT_FALSE(history(hs, kTop).orphaned_at.has_value());
  EXPECT_EQ(history(hs, 103).orphaned_at, msec(40));

  tl.facts.init_pid = 0;  // unknown reaper: nothing is concluded
  EXPECT_FALSE(history(build_histories(tl), 103).orphaned_at.has_value());
}

TEST(BuildHistories, AReusedPidAsParentIsNotTheParent) {
  // 102's parent pid 101 belongs, in the timeline, to a process that started
  // after 102: a reuse, whose end says nothing about 102.
  Timeline tl;
  tl.add(obs::proc_start(msec(10), 102, 101, "child", "child"));
  tl.add(obs::proc_start(msec(50), 101, 1, "other", "other"));
  tl.add(obs::proc_exit(msec(60), 101, std::nullopt));
  tl.add(obs::proc_gone(msec(60), 101));
  auto hs = build_histories(tl);
  EXPECT_FALSE(history(hs, 102).orphaned_at.has_value());
}

TEST(BuildHistories, PidReuseMakesASecondHistory) {
  Timeline tl;
  tl.add(obs::proc_start(msec(10), 200, 1, "first", "first", Role::Worker, 1, 1000));
  tl.add(obs::proc_exit(msec(20), 200, Outcome::exited(4)));
  tl.add(obs::proc_gone(msec(21), 200));
  tl.add(obs::proc_start(msec(30), 200, 1, "second", "second", Role::Helper, 1, 2000));
  tl.add(obs::proc_state(msec(40), 200, 'S'));
  auto hs = build_histories(tl);
  ASSERT_EQ(hs.size(), 2u);
  EXPECT_EQ(hs[0].comm, "first");
  EXPECT_EQ(hs[0].exited_at, msec(20));
  EXPECT_EQ(hs[0].gone_at, msec(21));
  EXPECT_EQ(hs[0].outcome, Outcome::exited(4));
  EXPECT_EQ(hs[1].comm, "second");
  EXPECT_EQ(hs[1].started, msec(30));
  EXPECT_EQ(hs[1].last_state, 'S');
  EXPECT_FALSE(hs[1].end().has_value());
  EXPECT_FALSE(hs[1].outcome.has_value());
}

TEST(BuildHistories, EventsAfterGoneDoNotTouchTheOldHistory) {
  Timeline tl;
  tl.add(obs::proc_start(msec(10), 200, 1, "p", "p"));
  tl.add(obs::proc_gone(msec(20), 200));
  tl.add(obs::proc_state(msec(30), 200, 'Z'));
  tl.add(obs::proc_exit(msec(40), 300, std::nullopt));  // never started: ignored
  auto hs = build_histories(tl);
  ASSERT_EQ(hs.size(), 1u);
  EXPECT_EQ(hs[0].last_state, 0);
  EXPECT_FALSE(hs[0].zombie_since.has_value());
}

// The reaper stamps a reap after its waitpid returned: a scan in between sees
// the pid gone first. The status still belongs to that process, and to no
// later one that reuses the pid.
TEST(BuildHistories, TheReapersStatusAfterAScanSawThePidGone) {
  Timeline tl;
  tl.add(obs::proc_start(msec(10), 200, 1, "p", "p"));
  tl.add(obs::proc_exit(msec(20), 200, std::nullopt));  // pidfd: exited, status unknown
  tl.add(obs::proc_gone(msec(21), 200));                // the scan: reaped
  tl.add(obs::proc_exit(msec(22), 200, Outcome::killed(SIGTERM, false)));  // the reaper's record
  tl.add(obs::proc_start(msec(30), 200, 1, "reused", "reused"));
  tl.add(obs::proc_exit(msec(40), 200, Outcome::exited(0)));
  auto hs = build_histories(tl);
  ASSERT_EQ(hs.size(), 2u);
  EXPECT_EQ(hs[0].outcome, Outcome::killed(SIGTERM, false));
  EXPECT_EQ(hs[0].exited_at, msec(20));
  EXPECT_EQ(hs[0].gone_at, msec(21));
  EXPECT_EQ(hs[1].outcome, Outcome::exited(0));
}

TEST(BuildHistories, ZombieSince) {
  Timeline tl;
  // 201: exits at 10, reaped at 500 -> zombie since its exit.
  tl.add(obs::proc_start(msec(1), 201, 1, "a", "a"));
  tl.add(obs::proc_exit(msec(10), 201, Outcome::killed(SIGKILL)));
  tl.add(obs::proc_gone(msec(500), 201));
  // 202: sampled as Z before its exit event.
  tl.add(obs::proc_start(msec(1), 202, 1, "b", "b"));
  tl.add(obs::proc_state(msec(5), 202, 'Z'));
  tl.add(obs::proc_exit(msec(8), 202, std::nullopt));
  tl.add(obs::proc_gone(msec(9), 202));
  // 203: exit and reap at the same instant -> never a zombie.
  tl.add(obs::proc_start(msec(1), 203, 1, "c", "c"));
  tl.add(obs::proc_exit(msec(10), 203, Outcome::exited(0)));
  tl.add(obs::proc_gone(msec(10), 203));
  // 204: gone without an exit event: exited_at is the gone time, no zombie.
  tl.add(obs::proc_start(msec(1), 204, 1, "d", "d"));
  tl.add(obs::proc_gone(msec(30), 204));
  auto hs = build_histories(tl);
  const auto& a = history(hs, 201);
  EXPECT_EQ(a.zombie_since, msec(10));
  EXPECT_EQ(a.exited_at, msec(10));
  EXPECT_EQ(a.gone_at, msec(500));
  EXPECT_EQ(a.end(), msec(10));
  EXPECT_EQ(a.outcome, Outcome::killed(SIGKILL));
  EXPECT_EQ(history(hs, 202).zombie_since, msec(5));
  EXPECT_EQ(history(hs, 202).last_state, 'Z');
  EXPECT_FALSE(history(hs, 203).zombie_since.has_value());
  const auto& d = history(hs, 204);
  EXPECT_EQ(d.exited_at, msec(30));
  EXPECT_EQ(d.end(), msec(30));
  EXPECT_FALSE(d.zombie_since.has_value());
}

TEST(BuildHistories, StoppedSince) {
  Timeline tl;
  tl.add(obs::proc_start(msec(1), 201, 1, "a", "a", Role::Unknown, 0, 0, 'R'));
  tl.add(obs::proc_state(msec(10), 201, 'T'));
  auto hs = build_histories(tl);
  EXPECT_EQ(history(hs, 201).stopped_since, msec(10));
  tl.add(obs::proc_state(msec(20), 201, 'S'));
  EXPECT_FALSE(history(build_histories(tl), 201).stopped_since.has_value());
  tl.add(obs::proc_state(msec(30), 201, 't'));
  EXPECT_EQ(history(build_histories(tl), 201).stopped_since, msec(30));
}

// Bug: the parent-end fallback looks the parent up by pid in a map that keeps
// only the LAST history per pid. When the parent's pid was reused after the
// child started, the fallback finds the reuse, skips it (started after the
// child), and never considers the real parent, whose exit orphaned the child.
TEST(BuildHistories, OrphanedAtFromTheParentsEndWhenTheParentPidWasReused) {
  Timeline tl;
  tl.add(obs::proc_start(msec(0), 50, 1, "parent", "parent"));
  tl.add(obs::proc_start(msec(1), 60, 50, "child", "child"));
  tl.add(obs::proc_exit(msec(10), 50, Outcome::exited(0)));
  tl.add(obs::proc_gone(msec(10), 50));
  tl.add(obs::proc_start(msec(20), 50, 1, "unrelated", "unrelated"));  // pid 50 reused
  tl.add(obs::proc_exit(msec(5000), 60, Outcome::exited(0)));
  tl.add(obs::proc_gone(msec(5000), 60));
  auto hs = build_histories(tl);
  EXPECT_EQ(history(hs, 60).orphaned_at, msec(10));
}

TEST(PhaseTime, FirstOccurrence) {
  Timeline tl;
  tl.add(obs::phase(msec(5), RunPhase::Settle));
  tl.add(obs::note(msec(6), "teardown"));  // not a phase
  tl.add(obs::phase(msec(7), RunPhase::Teardown));
  tl.add(obs::phase(msec(9), RunPhase::Teardown));
  EXPECT_EQ(phase_time(tl, RunPhase::Teardown), msec(7));
  EXPECT_EQ(phase_time(tl, RunPhase::Settle), msec(5));
  EXPECT_EQ(phase_time(tl, RunPhase::Done), std::nullopt);
}

// A process first seen between fork and exec carries its parent's command
// line; the exec that follows is on the timeline, and the history (what
// reports and checks show) holds what it became.
TEST(Histories, AnExecReplacesTheCommandSeenBeforeIt) {
  Timeline tl;
  tl.add(obs::proc_start(msec(1), 20, 10, "python3", "python3 loader_job.py", Role::Unknown, 1));
  tl.add(obs::proc_exec(msec(5), 20, "torch_shm_manag",
                        "/usr/lib/python3/dist-packages/torch/bin/torch_shm_manager",
                        Role::Helper));
  tl.add(obs::proc_start(msec(6), 21, 10, "python3", "python3 loader_job.py", Role::Worker, 1));
  tl.add(obs::proc_exec(msec(7), 21, "python3", "python3 -c pass", Role::Helper));
  auto hs = build_histories(tl);
  ASSERT_EQ(hs.size(), 2u);
  EXPECT_EQ(hs[0].comm, "torch_shm_manag");
  EXPECT_EQ(hs[0].cmdline, "/usr/lib/python3/dist-packages/torch/bin/torch_shm_manager");
  EXPECT_EQ(hs[0].role, Role::Helper);  // unknown until the exec said more
  EXPECT_EQ(hs[1].cmdline, "python3 -c pass");
  EXPECT_EQ(hs[1].role, Role::Worker);  // a known role is kept
}

// ============================================================ kinds and builders

TEST(RunPhases, EachHasOneWordThatReadsBack) {
  std::set<std::string_view> words;
  for (int k = 0; k <= static_cast<int>(RunPhase::Done); ++k) {
    const auto p = static_cast<RunPhase>(k);
    EXPECT_EQ(parse_run_phase(to_string(p)), p) << to_string(p);
    words.insert(to_string(p));
  }
  EXPECT_EQ(words.size(), 10u);
  EXPECT_EQ(to_string(RunPhase::JobExited), "job_exited");
  EXPECT_FALSE(parse_run_phase("Job_exited"));
  EXPECT_FALSE(parse_run_phase(""));
}

TEST(ObsKinds, EachKindHasItsOwnWord) {
  std::set<std::string_view> words;
  int kinds = 0;
  for_each_kind([&]<typename P>(std::type_identity<P>) {
    ++kinds;
    EXPECT_TRUE(words.insert(P::word).second) << "the word " << P::word << " repeats";
    EXPECT_EQ((Observation{0, P{}}.word()), P::word);
    return false;
  });
  EXPECT_EQ(kinds, static_cast<int>(std::variant_size_v<ObsPayload>));
  EXPECT_EQ(obs::phase(0, RunPhase::Launch).word(), "phase");
  EXPECT_EQ(obs::proc_start(0, 1, 0, "a", "a").word(), "proc_start");
  EXPECT_EQ(obs::shm_held(0, 1, "/dev/shm/x", 1, "fd", false).word(), "shm_held");
  EXPECT_EQ(obs::tmp_left(0, "/tmp/pymp-1", 1, 0, TmpKind::Pymp).word(), "tmp_left");
  EXPECT_EQ(obs::oom_kill(0, 0, 1, 1, "/sys/fs/cgroup/x").word(), "oom_kill");
  EXPECT_EQ(obs::role_inferred(0, 1, Role::Rank, 0, -1, "").word(), "role_inferred");
  EXPECT_EQ(Observation{}.word(), "note");  // a default observation is an empty note
}

TEST(ObsKinds, EveryFieldKeyIsUniqueWithinItsKind) {
  for_each_kind([&]<typename P>(std::type_identity<P>) {
    std::set<std::string_view> keys;
    for_each_field<P>([&](const auto& f) {
      EXPECT_TRUE(keys.insert(f.key).second) << P::word << " repeats the key " << f.key;
      EXPECT_NE(f.key, "t_ms") << P::word;
      EXPECT_NE(f.key, "kind") << P::word;
      EXPECT_NE(f.key, "node") << P::word;
    });
    return false;
  });
}

TEST(ObsBuilders, EachPutsItsFactsWhereTheKindSays) {
  auto start =
      obs::proc_start(msec(1), 20, 10, "python3", "python3 train.py", Role::Rank, 2, 555, 'R');
  EXPECT_EQ(start.t, msec(1));
  EXPECT_EQ(start.pid(), 20);
  const auto& ps = *start.as<obs::ProcStart>();
  EXPECT_EQ(ps.ppid, 10);
  EXPECT_EQ(ps.comm, "python3");
  EXPECT_EQ(ps.cmdline, "python3 train.py");
  EXPECT_EQ(ps.role, Role::Rank);
  EXPECT_EQ(ps.depth, 2);
  EXPECT_EQ(ps.start_ticks, 555);
  EXPECT_EQ(ps.state, 'R');

  auto sig = obs::signal(msec(2), 20, 9, "fault 1");
  ASSERT_TRUE(sig.is<obs::Signal>());
  EXPECT_EQ(sig.as<obs::Signal>()->signo, 9);
  EXPECT_EQ(sig.as<obs::Signal>()->why, "fault 1");

  auto held = obs::shm_held(msec(3), 20, "/dev/shm/x", 4096, "fd", /*deleted=*/true);
  EXPECT_EQ(*held.as<obs::ShmHeld>(), (obs::ShmHeld{20, "/dev/shm/x", 4096, "fd", true}));

  auto left = obs::tmp_left(msec(4), "/tmp/pymp-1", 10, 1000, TmpKind::Pymp, 4242);
  EXPECT_EQ(*left.as<obs::TmpLeft>(), (obs::TmpLeft{"/tmp/pymp-1", 10, 1000, TmpKind::Pymp, 4242}));
  EXPECT_EQ(left.pid(), 0);  // a holder outside the job is not the process it is about

  auto oom =
      obs::oom_kill(msec(5), 1, 20, 3, "/sys/fs/cgroup/x", "Out of memory: Killed process 20");
  EXPECT_EQ(*oom.as<obs::OomKill>(),
            (obs::OomKill{1, 20, 3, "/sys/fs/cgroup/x", "Out of memory: Killed process 20"}));

  auto f = obs::fault(msec(6), 0, 20, FaultAction::Sigkill, "rank:1");
  EXPECT_EQ(*f.as<obs::Fault>(), (obs::Fault{0, 20, FaultAction::Sigkill, "rank:1"}));
  EXPECT_EQ(f.pid(), 20);

  auto failed = obs::harness_failure(msec(7), HarnessPart::TmpDir, "EACCES");
  EXPECT_TRUE(harness_failed(failed, HarnessPart::TmpDir));
  EXPECT_FALSE(harness_failed(failed, HarnessPart::ShmDir));
  EXPECT_FALSE(harness_failed(obs::note(0, "tmp"), HarnessPart::TmpDir));
  EXPECT_EQ(harness_failed(failed, HarnessPart::TmpDir)->why, "EACCES");

  EXPECT_TRUE(event_named(obs::event(0, 1, "memory", "{}"), "memory"));
  EXPECT_FALSE(event_named(obs::event(0, 1, "memory", "{}"), "collective"));
  EXPECT_FALSE(event_named(obs::point(0, 1, "memory", 1, "{}"), "memory"));
}

TEST(Timeline, AddAppendsInTheOrderGiven) {
  Timeline tl;
  tl.add(obs::note(msec(5), "later"));
  tl.add(obs::note(msec(1), "earlier, appended after"));
  ASSERT_EQ(tl.observations.size(), 2u);
  EXPECT_EQ(tl.observations[0].as<obs::Note>()->text, "later");
  EXPECT_EQ(tl.observations[1].as<obs::Note>()->text, "earlier, appended after");
}

// ============================================================ more build_histories

TEST(BuildHistories, AnnouncedOrInferredRoleRankAndWorker) {
  Timeline tl;
  tl.add(obs::proc_start(msec(1), 20, 10, "python3", "python3 train.py"));
  tl.add(obs::proc_start(msec(2), 21, 20, "python3", "python3 train.py"));
  tl.add(obs::announce(msec(3), 20, Role::Rank, 1, -1, "rank=1"));
  tl.add(obs::role_inferred(msec(4), 21, Role::Worker, 1, 3, "child of rank 1"));
  tl.add(obs::announce(msec(5), 99, Role::Rank, 7, -1, ""));  // a pid never started: ignored
  auto hs = build_histories(tl);
  ASSERT_EQ(hs.size(), 2u);
  EXPECT_EQ(hs[0].role, Role::Rank);
  EXPECT_EQ(hs[0].rank, 1);
  EXPECT_EQ(hs[0].worker, -1);
  EXPECT_EQ(hs[1].role, Role::Worker);
  EXPECT_EQ(hs[1].rank, 1);
  EXPECT_EQ(hs[1].worker, 3);
}

TEST(BuildHistories, EventsOfAPidNeverStartedMakeNoHistory) {
  Timeline tl;
  tl.add(obs::proc_state(msec(1), 30, 'Z'));
  tl.add(obs::proc_parent(msec(2), 30, 1));
  tl.add(obs::proc_exit(msec(3), 30, Outcome::exited(0)));
  tl.add(obs::proc_gone(msec(4), 30));
  EXPECT_TRUE(build_histories(tl).empty());
}

TEST(BuildHistories, TheFirstExitAndGoneAreKept) {
  Timeline tl;
  tl.add(obs::proc_start(msec(1), 20, 10, "a", "a"));
  tl.add(obs::proc_exit(msec(5), 20, Outcome::killed(9)));
  tl.add(obs::proc_exit(msec(6), 20, std::nullopt));  // a second report, without a status
  tl.add(obs::proc_gone(msec(8), 20));
  auto hs = build_histories(tl);
  ASSERT_EQ(hs.size(), 1u);
  EXPECT_EQ(hs[0].exited_at, msec(5));
  EXPECT_EQ(hs[0].gone_at, msec(8));
  EXPECT_EQ(hs[0].outcome, Outcome::killed(9));
  EXPECT_EQ(hs[0].zombie_since, msec(5));  // exited, then reaped 3 ms later
}

TEST(BuildHistories, GoneWithoutAnExitCountsAsExitedThenAndNeverAZombie) {
  Timeline tl;
  tl.add(obs::proc_start(msec(1), 20, 10, "a", "a"));
  tl.add(obs::proc_gone(msec(9), 20));
  auto hs = build_histories(tl);
  ASSERT_EQ(hs.size(), 1u);
  EXPECT_EQ(hs[0].exited_at, msec(9));
  EXPECT_EQ(hs[0].gone_at, msec(9));
  EXPECT_EQ(hs[0].zombie_since, std::nullopt);
  EXPECT_EQ(hs[0].outcome, std::nullopt);
}

}  // namespace
}  // namespace aftermath
