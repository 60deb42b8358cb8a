// Unit tests for the trainer's launcher policies (fixtures/cpp/launcher.h)
// with tiny stand-in ranks (/bin/sh scripts): who gets signalled, when, how
// the first failure is encoded, and what a dead launcher leaves behind.
// Every wait has a deadline; every stand-in is ended by pidfd before the
// test returns.
#ifdef AFTERMATH_HAVE_TRAINER

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "fixtures/cpp/launcher.h"
#include "tests/support/files.h"
#include "tests/support/temp_dir.h"

namespace trainer {
namespace {

using aftermath::testing::alive;

using aftermath::testing::slurp;

using ::testing::HasSubstr;

using aftermath::testing::TempDir;

// Bounded polling for a condition.
template <typename F>
bool within(std::chrono::milliseconds bound, F f) {
  auto end = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < end) {
    if (f()) return true;
    ::poll(nullptr, 0, 10);
  }
  return f();
}

// Ends a stand-in that outlived its test (by pidfd, only if it is ours).
void kill_leftover(int pid, const std::string& marker) {
  if (!alive(pid) ||
      slurp("/proc/" + std::to_string(pid) + "/cmdline").find(marker) == std::string::npos)
    return;
  int fd = pidfd_open(pid);
  if (fd >= 0) {
    pidfd_signal(fd, SIGKILL);
    ::close(fd);
  }
}

LaunchSpec sh(const std::string& script, Policy p, int world = 2) {
  LaunchSpec s;
  s.argv = {"/bin/sh", "-c", script};
  s.world_size = world;
  s.policy = p;
  s.master_port = 29999;
  s.term_timeout = Millis(30000);
  s.spawn_grace = Millis(30000);
  return s;
}

// Shell: rank 1 waits (bounded polling, 10 s) until rank 0 has written
// `file`, then runs `then`; rank 0 runs `body`. The handshake makes sure rank
// 0 is set up before the failure it reacts to.
std::string after(const TempDir& d, const std::string& file, const std::string& then,
                  const std::string& body) {
  std::string f = d / file;
  return "if [ $RANK = 1 ]; then i=0; while [ ! -s " + f +
         " ] && [ $i -lt 1000 ]; do sleep 0.01; "
         "i=$((i+1)); done; " +
         then + "; fi; " + body;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::map<int, RankExit> by_rank(const LaunchResult& r) {
  std::map<int, RankExit> m;
  for (const auto& e : r.exits) m[e.rank] = e;
  return m;
}

TEST(TrainerLauncher, AllRanksSucceed) {
  auto r = run_ranks(sh("exit 0", Policy::Torchrun, 3));
  EXPECT_EQ(r.exits.size(), 3u);
  EXPECT_FALSE(r.first_failure);
  EXPECT_EQ(launcher_exit_code(r), 0);
}

TEST(TrainerLauncher, RanksGetTorchrunsEnvironment) {
  TempDir d;
  auto s =
      sh("echo \"$RANK $LOCAL_RANK $WORLD_SIZE $MASTER_ADDR $MASTER_PORT $OMP_NUM_THREADS\" > " +
             d.path() + "/env.$RANK",
         Policy::Torchrun);
  auto r = run_ranks(s);
  ASSERT_EQ(launcher_exit_code(r), 0);
  EXPECT_EQ(slurp(d / "env.0"), "0 0 2 127.0.0.1 29999 1\n");
  EXPECT_EQ(slurp(d / "env.1"), "1 1 2 127.0.0.1 29999 1\n");
}

// /proc/PID/stat fields 5 and 6 (pgrp, session) of the shell itself.
const char* kIds = "set -- $(cut -d' ' -f5,6 /proc/$$/stat); echo $$ $1 $2 > ";

TEST(TrainerLauncher, TorchrunStartsEachRankInItsOwnSessionOthersDoNot) {
  for (Policy p : {Policy::Torchrun, Policy::Spawn, Policy::Naive}) {
    SCOPED_TRACE(to_string(p));
    TempDir d;
    auto r = run_ranks(sh(std::string(kIds) + d.path() + "/ids.$RANK", p, 1));
    ASSERT_EQ(launcher_exit_code(r), 0);
    std::istringstream in(slurp(d / "ids.0"));
    int pid = 0, pgrp = 0, sid = 0;
    in >> pid >> pgrp >> sid;
    ASSERT_GT(pid, 0);
    if (p == Policy::Torchrun) {
      EXPECT_EQ(pgrp, pid);
      EXPECT_EQ(sid, pid);
    } else {
      EXPECT_EQ(pgrp, ::getpgrp());
    }
  }
}

TEST(TrainerLauncher, TorchrunSignalsTheOtherRanksGroupAndEncodesTheFailure) {
  // Rank 1 fails with 3; rank 0 and its child (same group) would sleep 20 s.
  TempDir d;
  auto s = sh(after(d, "child", "exit 3", "sleep 20 & echo $! > " + d.path() + "/child; wait"),
              Policy::Torchrun);
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_ranks(s);
  double took = ms_since(t0);
  ASSERT_TRUE(r.first_failure);
  EXPECT_EQ(r.first_failure->rank, 1);
  EXPECT_EQ(r.first_failure->outcome(), "exited(3)");
  EXPECT_EQ(launcher_exit_code(r), 11);
  EXPECT_EQ(describe_failure(*r.first_failure), "rank 1 failed: exited(3)");
  EXPECT_EQ(by_rank(r)[0].outcome(), "killed(SIGTERM)");
  EXPECT_LT(took, 10000);
  // The group signal reached rank 0's child too.
  int child = std::atoi(slurp(d / "child").c_str());
  ASSERT_GT(child, 0);
  EXPECT_TRUE(within(std::chrono::seconds(5), [&] { return !alive(child); }));
  kill_leftover(child, "sleep");
}

TEST(TrainerLauncher, TorchrunEscalatesToSigkillAfterTheBound) {
  // Rank 0 ignores SIGTERM (so does its child, by inheritance).
  TempDir d;
  auto s = sh(after(d, "child", "exit 5",
                    "trap '' TERM; sleep 20 & echo $! > " + d.path() + "/child; wait"),
              Policy::Torchrun);
  s.term_timeout = Millis(300);
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_ranks(s);
  double took = ms_since(t0);
  EXPECT_EQ(launcher_exit_code(r), 11);
  EXPECT_EQ(by_rank(r)[0].outcome(), "killed(SIGKILL)");
  EXPECT_GE(took, 300);
  EXPECT_LT(took, 10000);
  int child = std::atoi(slurp(d / "child").c_str());
  ASSERT_GT(child, 0);
  EXPECT_TRUE(within(std::chrono::seconds(5), [&] { return !alive(child); }));
  kill_leftover(child, "sleep");
}

TEST(TrainerLauncher, SpawnSignalsProcessesNotGroups) {
  // Rank 0's child is not signalled by spawn: it is left as an orphan (the
  // negative control of the torchrun test above).
  TempDir d;
  auto s = sh(after(d, "child", "exit 2", "sleep 20 & echo $! > " + d.path() + "/child; wait"),
              Policy::Spawn);
  auto r = run_ranks(s);
  EXPECT_EQ(launcher_exit_code(r), 11);
  EXPECT_EQ(by_rank(r)[0].outcome(), "killed(SIGTERM)");
  int child = std::atoi(slurp(d / "child").c_str());
  ASSERT_GT(child, 0);
  EXPECT_TRUE(alive(child));
  kill_leftover(child, "sleep");
}

TEST(TrainerLauncher, SpawnEscalatesAfterItsGrace) {
  TempDir d;
  auto s = sh(
      after(d, "ready", "exit 2", "trap '' TERM; echo x > " + d.path() + "/ready; exec sleep 20"),
      Policy::Spawn);
  s.spawn_grace = Millis(200);
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_ranks(s);
  EXPECT_GE(ms_since(t0), 200);
  EXPECT_EQ(by_rank(r)[0].outcome(), "killed(SIGKILL)");
  EXPECT_EQ(launcher_exit_code(r), 11);
}

TEST(TrainerLauncher, NaiveWaitsAndNeverSignals) {
  auto s = sh("if [ $RANK = 1 ]; then exit 4; fi; exec sleep 1", Policy::Naive);
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_ranks(s);
  EXPECT_GE(ms_since(t0), 900);
  EXPECT_EQ(by_rank(r)[0].outcome(), "exited(0)");  // ran to its end
  EXPECT_EQ(launcher_exit_code(r), 11);
}

TEST(TrainerLauncher, ARankKilledByASignalIsFortyPlusRank) {
  auto r = run_ranks(sh("if [ $RANK = 1 ]; then kill -KILL $$; fi; exit 0", Policy::Torchrun));
  ASSERT_TRUE(r.first_failure);
  EXPECT_EQ(describe_failure(*r.first_failure), "rank 1 failed: killed(SIGKILL)");
  EXPECT_EQ(launcher_exit_code(r), 41);
}

TEST(TrainerLauncher, ExitCodeEncoding) {
  LaunchResult r;
  EXPECT_EQ(launcher_exit_code(r), 0);
  r.first_failure = RankExit{3, 7 << 8, 0};  // exited(7)
  EXPECT_EQ(launcher_exit_code(r), 13);
  r.first_failure = RankExit{2, SIGTERM, 0};  // killed(SIGTERM)
  EXPECT_EQ(launcher_exit_code(r), 42);
  r.error = "cannot exec";
  EXPECT_EQ(launcher_exit_code(r), 3);
}

TEST(TrainerLauncher, AnExecFailureIsReported) {
  LaunchSpec s;
  s.argv = {"/nonexistent/aftermath-rank"};
  s.world_size = 2;
  auto r = run_ranks(s);
  EXPECT_THAT(r.error, HasSubstr("cannot exec /nonexistent/aftermath-rank"));
  EXPECT_EQ(launcher_exit_code(r), 3);
}

// A launcher SIGKILLed mid-run, in a child process of the test: what
// happens to its ranks depends on the policy.
struct Orphans {
  std::vector<int> ranks;
  std::vector<bool> alive_after;
};
Orphans kill_launcher(Policy p, std::chrono::milliseconds bound) {
  TempDir d;
  std::string script = "echo $$ >> " + d.path() + "/pids; exec sleep 20";
  int ready[2];
  EXPECT_EQ(::pipe(ready), 0);
  pid_t launcher = ::fork();
  if (launcher == 0) {
    ::close(ready[0]);
    LaunchHooks h;
    int started = 0;
    h.started = [&](int, pid_t) {
      if (++started == 2) (void)!::write(ready[1], "x", 1);
    };
    run_ranks(sh(script, p), h);
    ::_exit(0);
  }
  ::close(ready[1]);
  char c;
  pollfd pf{ready[0], POLLIN, 0};
  EXPECT_EQ(::poll(&pf, 1, 10000), 1);
  EXPECT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  Orphans o;
  EXPECT_TRUE(within(std::chrono::seconds(5), [&] {
    std::istringstream in(slurp(d / "pids"));
    o.ranks.clear();
    int pid;
    while (in >> pid) o.ranks.push_back(pid);
    return o.ranks.size() == 2;
  }));
  ::kill(launcher, SIGKILL);
  ::waitpid(launcher, nullptr, 0);
  // Under spawn the ranks die of SIGINT (their parent-death signal): wait
  // for that up to `bound`.
  within(bound, [&] {
    for (int pid : o.ranks)
      if (alive(pid)) return false;
    return true;
  });
  for (int pid : o.ranks) o.alive_after.push_back(alive(pid));
  for (int pid : o.ranks) kill_leftover(pid, "sleep");
  return o;
}

TEST(TrainerLauncher, ADeadSpawnLauncherTakesItsRanksAlong) {
  auto o = kill_launcher(Policy::Spawn, std::chrono::seconds(10));
  ASSERT_EQ(o.ranks.size(), 2u);
  EXPECT_FALSE(o.alive_after[0]);
  EXPECT_FALSE(o.alive_after[1]);
}

TEST(TrainerLauncher, ADeadTorchrunLauncherOrphansItsRanks) {
  // A negative control: still there half a second after the launcher died.
  auto o = kill_launcher(Policy::Torchrun, std::chrono::milliseconds(500));
  ASSERT_EQ(o.ranks.size(), 2u);
  EXPECT_TRUE(o.alive_after[0]);
  EXPECT_TRUE(o.alive_after[1]);
}

// The root cause by the ranks' own error records, not by exit order: rank 1
// fails first (its record says 1000) but exits only once rank 0 (record
// 2000, the peer's "connection closed") is gone and seen gone. The launcher
// reports rank 1. Without records, it would report rank 0: the control.
TEST(TrainerLauncher, ErrorRecordsNameTheRootCauseWhateverTheExitOrder) {
  for (bool records : {true, false}) {
    SCOPED_TRACE(records ? "with records" : "without records");
    TempDir d;
    std::string rec0 = records ? "echo '0 2000 1' >&$AFTERMATH_TRAINER_ERROR_FD; " : "";
    std::string rec1 = records ? "echo '1 1000 1' >&$AFTERMATH_TRAINER_ERROR_FD; " : "";
    // Bounded spins: a stand-in never outlives its test by much.
    auto s =
        sh("if [ \"$RANK\" = 0 ]; then echo $$ > " + d.path() + "/r0.tmp; mv " + d.path() +
               "/r0.tmp " + d.path() + "/r0; " + rec0 + "exit 1; fi; " + rec1 + "i=0; until [ -s " +
               d.path() +
               "/r0 ]; do i=$((i+1)); [ $i -gt 500000 ] && exit 9; done; "
               "p=$(cat " +
               d.path() +
               "/r0); "
               "while [ -e /proc/$p ]; do i=$((i+1)); [ $i -gt 1000000 ] && exit 9; done; exit 1",
           Policy::Torchrun);
    s.root_cause_window = Millis(30000);  // decided once both are gone
    auto r = run_ranks(s);
    ASSERT_TRUE(r.first_failure);
    ASSERT_EQ(r.exits.size(), 2u);
    EXPECT_EQ(r.exits[0].rank, 0) << "rank 0's exit is seen first";
    EXPECT_EQ(r.first_failure->rank, records ? 1 : 0);
    EXPECT_EQ(launcher_exit_code(r), records ? 11 : 10);
  }
}

TEST(TrainerLauncher, ReservedPortsDiffer) {
  UniqueFd a, b;
  int pa = reserve_port(&a), pb = reserve_port(&b);
  EXPECT_GT(pa, 0);
  EXPECT_GT(pb, 0);
  EXPECT_NE(pa, pb);
}

}  // namespace
}  // namespace trainer

#endif  // AFTERMATH_HAVE_TRAINER

namespace trainer {
namespace {

int exited(int code) { return code << 8; }  // a wait status
int killed(int sig) { return sig; }

TEST(TrainerLauncherPickFailure, TheRootCauseBeforeItsConsequences) {
  // Rank 1 hit a host OOM (exit 3); rank 0's collective then failed (exit 1)
  // in the same instant: rank 1 is the failure, whatever the order.
  std::vector<RankExit> oom = {{0, exited(1), 5}, {1, exited(3), 5}};
  ASSERT_NE(pick_failure(oom), nullptr);
  EXPECT_EQ(pick_failure(oom)->rank, 1);
  std::vector<RankExit> reversed = {{1, exited(3), 5}, {0, exited(1), 5}};
  EXPECT_EQ(pick_failure(reversed)->rank, 1);
  // A signal beats any exit code.
  std::vector<RankExit> kill = {{0, exited(3), 5}, {2, killed(SIGKILL), 5}};
  EXPECT_EQ(pick_failure(kill)->rank, 2);
  // Equals: the lower rank.
  std::vector<RankExit> both = {{3, exited(1), 5}, {1, exited(1), 5}};
  EXPECT_EQ(pick_failure(both)->rank, 1);
  // Clean exits are not failures.
  std::vector<RankExit> clean = {{0, exited(0), 5}, {1, exited(0), 5}};
  EXPECT_EQ(pick_failure(clean), nullptr);
}

TEST(TrainerLauncherPickFailure, AnExitOneWaitsForItsCause) {
  // Rank 0's exit 1 (its peer's socket closed) is seen first, at 100 ms:
  // held for the window while rank 1 is still alive...
  std::vector<RankExit> seen = {{0, exited(1), 100}};
  EXPECT_FALSE(failure_decided(seen, 100, 250, true));
  EXPECT_FALSE(failure_decided(seen, 349, 250, true));
  // ...until rank 1's SIGKILL shows up inside it: rank 1 is reported.
  // (Two exits 1: the first seen is the cause, e.g. rank 1's own EMFILE error
  // before rank 0's "connection closed".)
  std::vector<RankExit> ones = {{1, exited(1), 100}, {0, exited(1), 140}};
  EXPECT_EQ(pick_failure(ones)->rank, 1);
  seen.push_back({1, killed(SIGKILL), 180});
  EXPECT_TRUE(failure_decided(seen, 180, 250, true));
  EXPECT_EQ(pick_failure(seen)->rank, 1);
  // Without one, the exit 1 stands when the window closes, or when no rank is left.
  std::vector<RankExit> alone = {{0, exited(1), 100}};
  EXPECT_TRUE(failure_decided(alone, 350, 250, true));
  EXPECT_TRUE(failure_decided(alone, 101, 250, false));
  // A signal or a code of the rank's own is reported at once.
  EXPECT_TRUE(failure_decided({{1, killed(SIGKILL), 100}}, 100, 250, true));
  EXPECT_TRUE(failure_decided({{1, exited(3), 100}}, 100, 250, true));
  EXPECT_FALSE(failure_decided({}, 100, 250, true));
}

}  // namespace
}  // namespace trainer
