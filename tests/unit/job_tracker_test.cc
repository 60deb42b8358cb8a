// The job tracker on real processes: this test stands where the reaper
// stands, a child of it is the job's top, and the top's own child is what
// the tracker must find, classify, watch and signal.
#include "harness/supervise/job_tracker.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>

#include "harness/observe/proc.h"
#include "harness/supervise/tmp_watch.h"
#include "tests/support/children.h"
#include "tests/support/loop.h"

namespace aftermath {
namespace {

using ::testing::HasSubstr;
using testing_children::OwnedChild;
using testing_children::readable_within;

// A top process (a fork of this test) and its one child, /bin/sleep 30 run
// with `env`, reported only once it has exec'd. Both bound their own lives.
struct Family {
  explicit Family(std::vector<std::string> env) {
    std::vector<const char*> envp;
    for (const auto& e : env) envp.push_back(e.c_str());
    envp.push_back(nullptr);
    const char* argv[] = {"sleep", "30", nullptr};
    int report[2];
    if (::pipe(report) != 0) return;
    pid_t top = ::fork();
    if (top == 0) {
      // Between fork and exec: no allocation (everything above is built).
      int exec_seen[2];
      if (::pipe2(exec_seen, O_CLOEXEC) != 0) _exit(2);
      pid_t c = ::fork();
      if (c == 0) {
        ::execve("/bin/sleep", const_cast<char* const*>(argv),
                 const_cast<char* const*>(envp.data()));
        _exit(127);
      }
      ::close(exec_seen[1]);
      char b;
      while (::read(exec_seen[0], &b, 1) > 0) {
      }
      (void)!::write(report[1], &c, sizeof c);
      ::alarm(30);
      for (;;) ::pause();
    }
    ::close(report[1]);
    this->top.adopt(top);
    if (readable_within(report[0], 10000) &&
        ::read(report[0], &child, sizeof child) == sizeof child)
      (void)pidfd_open(child, child_fd);
    ::close(report[0]);
  }
  ~Family() {
    if (child_fd) (void)pidfd_signal(child_fd.get(), SIGKILL);  // then init reaps it, with the top
  }
  OwnedChild top;
  pid_t child = 0;
  UniqueFd child_fd;
};

struct Recorder {
  Nanos t = 0;
  std::vector<Observation> seen;
  std::vector<int> exits;
  int role_changes = 0;
  int refreshes = 0;
  JobTrackerHooks hooks() {
    JobTrackerHooks h;
    h.now = [this] { return t; };
    h.record = [this](Observation o) { seen.push_back(std::move(o)); };
    h.on_role_change = [this] { ++role_changes; };
    h.on_exit = [this](int pid) { exits.push_back(pid); };
    h.on_refreshed = [this] { ++refreshes; };
    return h;
  }
  // The first observation of kind P about pid; nullptr when there is none.
  template <typename P>
  const Observation* find(int pid) const {
    for (const auto& o : seen)
      if (o.is<P>() && o.pid() == pid) return &o;
    return nullptr;
  }
  template <typename P>
  const P* payload(int pid) const {
    const Observation* o = find<P>(pid);
    return o ? o->as<P>() : nullptr;
  }
};

struct TrackerTest : ::testing::Test {
  boost::asio::io_context ctx;
  Recorder rec;
  JobTracker tracker{ctx, "/proc", rec.hooks()};
  void contain(const Family& f) {
    tracker.set_containment(::getpid(), false);
    tracker.set_init_pid(::getpid());
    tracker.add_top(0, f.top.pid(), f.top.pid(), "top", "the top");
  }
  // Runs the loop until pred() holds, 10 s at most.
  template <typename Pred>
  bool run_until(Pred pred) {
    return testing::run_loop_until(ctx, pred);
  }
};

TEST_F(TrackerTest, AWalkFindsTheTopsChildWithItsDepthAndRoleFromItsEnvironment) {
  Family f({"RANK=2", "PATH=/bin"});
  ASSERT_GT(f.child, 0);
  contain(f);
  const auto* top = rec.payload<obs::ProcStart>(f.top.pid());
  ASSERT_TRUE(top);
  EXPECT_EQ(top->role, Role::Launcher);
  tracker.walk();
  const auto* start = rec.payload<obs::ProcStart>(f.child);
  ASSERT_TRUE(start) << "the top's child was not found";
  EXPECT_EQ(start->ppid, f.top.pid());
  EXPECT_EQ(start->depth, 1);
  EXPECT_EQ(start->comm, "sleep");
  EXPECT_EQ(start->cmdline, "sleep 30");
  const auto* role = rec.payload<obs::RoleInferred>(f.child);
  ASSERT_TRUE(role);
  EXPECT_EQ(role->role, Role::Rank);
  EXPECT_EQ(role->rank, 2);
  EXPECT_EQ(role->why, "RANK=2 in its environment");
  EXPECT_GE(rec.role_changes, 1);
  EXPECT_GE(rec.refreshes, 1);
  EXPECT_EQ(tracker.live_count(), 2);
  auto view = tracker.view();
  ASSERT_EQ(view.size(), 2u);
  auto child =
      std::find_if(view.begin(), view.end(), [&](const JobProcess& p) { return p.pid == f.child; });
  ASSERT_NE(child, view.end());
  EXPECT_EQ(child->role, Role::Rank);
  EXPECT_EQ(child->rank, 2);
  EXPECT_FALSE(child->is_top);
  EXPECT_TRUE(tracker.find(f.top.pid())->is_top);
}

TEST_F(TrackerTest, WithoutRankItStaysUnknownAndAnAnnouncementWins) {
  Family f({"PATH=/bin"});
  ASSERT_GT(f.child, 0);
  contain(f);
  tracker.walk();
  ASSERT_TRUE(rec.find<obs::ProcStart>(f.child));
  EXPECT_FALSE(rec.find<obs::RoleInferred>(f.child));
  tracker.announce(f.child, Role::Worker, 0, 3);
  const TrackedProcess* p = tracker.find(f.child);
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->announced);
  EXPECT_EQ(p->role, Role::Worker);
  EXPECT_EQ(p->worker, 3);
}

TEST_F(TrackerTest, AnExitIsSeenThroughThePidfdAndTheZombieByTheNextWalk) {
  Family f({"PATH=/bin"});
  ASSERT_GT(f.child, 0);
  contain(f);
  tracker.walk();
  ASSERT_TRUE(rec.find<obs::ProcStart>(f.child));
  ASSERT_FALSE(pidfd_signal(f.child_fd.get(), SIGKILL));
  ASSERT_TRUE(run_until([&] { return !rec.exits.empty(); }));
  EXPECT_EQ(rec.exits, std::vector<int>{f.child});
  const auto* exit = rec.payload<obs::ProcExit>(f.child);
  ASSERT_TRUE(exit);
  EXPECT_FALSE(exit->outcome);  // its parent reaps it, not the reaper
  EXPECT_EQ(tracker.live_count(), 1);
  EXPECT_EQ(tracker.present_count(), 2);  // a zombie: its parent never waits
  tracker.walk();
  const auto* z = rec.payload<obs::ProcState>(f.child);
  ASSERT_TRUE(z);
  EXPECT_EQ(z->state, 'Z');
  EXPECT_EQ(tracker.live_pids(), std::vector<int>{f.top.pid()});
}

// A zombie's reap is seen by a later read that finds it gone: its ProcGone
// says when it was last still there, which is all a scan can know.
TEST_F(TrackerTest, AScanThatFindsAZombieGoneSaysWhenItWasLastSeen) {
  // Its parent (the top) dies first; the zombie comes to this process, which
  // reaps it when the test says so.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  struct Unset {
    ~Unset() { ::prctl(PR_SET_CHILD_SUBREAPER, 0); }
  } unset;
  Family f({"PATH=/bin"});
  ASSERT_GT(f.child, 0);
  contain(f);
  rec.t = 100;
  tracker.walk();
  ASSERT_FALSE(pidfd_signal(f.child_fd.get(), SIGKILL));
  ASSERT_TRUE(run_until([&] { return !rec.exits.empty(); }));
  rec.t = 200;
  tracker.walk();
  ASSERT_TRUE(rec.find<obs::ProcState>(f.child));
  EXPECT_EQ(rec.payload<obs::ProcState>(f.child)->state, 'Z');
  EXPECT_FALSE(rec.find<obs::ProcGone>(f.child));
  f.top.kill_and_reap();
  int status = 0;
  ASSERT_TRUE(OwnedChild(f.child).exited_within(10000, &status));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  rec.t = 900;
  tracker.walk();
  const Observation* gone = rec.find<obs::ProcGone>(f.child);
  ASSERT_TRUE(gone);
  EXPECT_EQ(gone->t, 900);
  EXPECT_EQ(gone->as<obs::ProcGone>()->last_seen, 200);
}

TEST_F(TrackerTest, SignalLiveGoesDeepestFirst) {
  Family f({"PATH=/bin"});
  ASSERT_GT(f.child, 0);
  contain(f);
  tracker.walk();
  tracker.signal_live(SIGKILL, "teardown");
  std::vector<int> order;
  for (const auto& o : rec.seen)
    if (const auto* sig = o.as<obs::Signal>()) {
      order.push_back(sig->pid);
      EXPECT_EQ(sig->signo, SIGKILL);
      EXPECT_EQ(sig->why, "teardown");
    }
  EXPECT_EQ(order, (std::vector<int>{f.child, f.top.pid()}));
  int status = 0;
  ASSERT_TRUE(f.top.exited_within(10000, &status));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TEST_F(TrackerTest, AReapIsAnExitWithItsOutcomeAndAnUnknownPidANote) {
  Family f({"PATH=/bin"});
  ASSERT_GT(f.child, 0);
  contain(f);
  tracker.walk();
  tracker.reaped(7, f.child, Outcome::killed(SIGTERM), false, "");
  const Observation* exit = rec.find<obs::ProcExit>(f.child);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->t, 7);
  EXPECT_EQ(exit->as<obs::ProcExit>()->outcome, Outcome::killed(SIGTERM));
  ASSERT_TRUE(rec.find<obs::ProcGone>(f.child));
  EXPECT_EQ(tracker.present_count(), 1);
  tracker.reaped(8, 999999, Outcome::exited(0), false, "");
  ASSERT_FALSE(rec.seen.empty());
  ASSERT_TRUE(rec.seen.back().is<obs::Note>());
  EXPECT_THAT(rec.seen.back().as<obs::Note>()->text,
              HasSubstr("reaped an unobserved process (pid 999999 in the job)"));
}

// Births the reaper announces (a PID namespace without process events): a
// tick that also refreshes (something was marked, or the refresh period came)
// consumes the announcement and must look for the newcomer, not leave it
// unknown until the next birth or the walk every 25th refresh.
TEST_F(TrackerTest, ABirthTheReaperAnnouncedIsLookedForByARefreshingTick) {
  Family f({"PATH=/bin"});
  ASSERT_GT(f.child, 0);
  contain(f);
  tracker.forks_from_reaper();
  tracker.note_fork();
  tracker.mark_dirty();
  tracker.tick();
  EXPECT_TRUE(rec.find<obs::ProcStart>(f.child)) << "the announced newcomer was not looked for";
  EXPECT_TRUE(tracker.had(f.child));
}

// The temp-dir watch asks whose an entry's maker is as soon as the entry
// appears: a maker younger than the tracker's last look, whose birth nothing
// announced yet, is the job's, found by a walk. Without it the maker is
// alive and unknown: another's, and its entry (a torch_shm_manager's folder)
// neither reclaimed nor blamed.
TEST_F(TrackerTest, TheTempDirLookupWalksForAMakerNotYetKnown) {
  Family f({"PATH=/bin"});
  ASSERT_GT(f.child, 0);
  contain(f);
  tracker.forks_from_reaper();  // and no birth announced yet
  const ProcReader proc("/proc");
  JobLookup lookup = tracker_lookup(tracker, proc, 0);
  ASSERT_FALSE(tracker.had(f.child));
  EXPECT_EQ(lookup.whose(f.child), JobLookup::Whose::Job);
  EXPECT_EQ(lookup.whose(f.top.pid()), JobLookup::Whose::Job);
  // Alive outside the job's tree: another's. Gone and never known: unknown.
  EXPECT_EQ(lookup.whose(::getppid()), JobLookup::Whose::Outside);
  pid_t gone = ::fork();
  if (gone == 0) _exit(0);
  ASSERT_EQ(::waitpid(gone, nullptr, 0), gone);
  EXPECT_EQ(lookup.whose(gone), JobLookup::Whose::Unknown);
}

TEST_F(TrackerTest, AFreshListOfTheJobHasItsNewcomers) {
  Family f({"PATH=/bin"});
  ASSERT_GT(f.child, 0);
  contain(f);
  tracker.forks_from_reaper();
  const ProcReader proc("/proc");
  JobLookup lookup = tracker_lookup(tracker, proc, 0);
  auto has = [&](const std::vector<int>& v) {
    return std::find(v.begin(), v.end(), f.child) != v.end();
  };
  EXPECT_FALSE(has(lookup.present(false)));
  EXPECT_TRUE(has(lookup.present(true)));
}

TEST_F(TrackerTest, ExitStatusesNobodySawAreNamed) {
  std::vector<Observation> events = {obs::proc_exit(1, 41, std::nullopt),
                                     obs::proc_exit(2, 42, Outcome::exited(0))};
  auto note = tracker.fill_exit_statuses(events);
  ASSERT_TRUE(note);
  EXPECT_EQ(
      *note,
      "reaped by their parent, exit status unknown (no process events here: not root): pid 41");
  events.pop_back();
  events[0].as<obs::ProcExit>()->outcome = Outcome::exited(1);
  EXPECT_FALSE(tracker.fill_exit_statuses(events));
}

// The daemon pattern, both forks read from one batch of the kernel's events:
// the top's child forks a grandchild and exits, the grandchild is
// re-parented before any look. Each starts when its fork was read, not when
// a look found it: the child (found first, in the same pass) must not start
// after the grandchild whose ancestry goes through it, or the grandchild has
// no parent at its start (a pytest test loses its daemon). The clock moves on
// every reading, as a real one does while a pass reads /proc.
//
// With `true`, the top reaps the child before any look (what subprocess.run
// does): the child is never seen, and the grandchild's first tracked
// ancestor, found through the fork events, is the top.
class TrackerForkTimes : public ::testing::TestWithParam<bool> {};

TEST_P(TrackerForkTimes, TheDaemonPatternsGrandchildIsTheJobsThroughItsForks) {
  const bool child_reaped = GetParam();
  auto events = JobTracker::open_events("/proc");
  if (!events) GTEST_SKIP() << "no process events here (root only)";
  boost::asio::io_context ctx;
  Recorder rec;
  JobTrackerHooks hooks = rec.hooks();
  hooks.now = [&rec] { return rec.t += 10; };
  JobTracker tracker{ctx, "/proc", hooks, std::move(events)};
  // This test stands where the reaper stands: orphans of the job come to it.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  struct Unset {
    ~Unset() { ::prctl(PR_SET_CHILD_SUBREAPER, 0); }
  } unset;
  int go[2], report[2];
  ASSERT_EQ(::pipe(go), 0);
  ASSERT_EQ(::pipe(report), 0);
  pid_t top = ::fork();
  if (top == 0) {
    char b;
    if (::read(go[0], &b, 1) != 1) _exit(2);
    pid_t child = ::fork();
    if (child == 0) {
      pid_t grandchild = ::fork();
      if (grandchild == 0) {
        ::alarm(30);
        for (;;) ::pause();
      }
      pid_t ids[2] = {::getpid(), grandchild};
      (void)!::write(report[1], ids, sizeof ids);
      _exit(0);  // the grandchild is re-parented; this one a zombie of the top
    }
    if (child_reaped) ::waitpid(child, nullptr, 0);
    ::alarm(30);
    for (;;) ::pause();
  }
  ::close(go[0]);
  ::close(report[1]);
  OwnedChild owned(top);
  tracker.set_containment(::getpid(), false);
  tracker.set_init_pid(::getpid());
  tracker.add_top(rec.t, top, top, "top", "the top");
  tracker.walk();  // the top tracked: its forks are the job's
  ASSERT_TRUE(tracker.find(top));
  ASSERT_EQ(::write(go[1], "g", 1), 1);
  pid_t ids[2] = {0, 0};
  ASSERT_TRUE(readable_within(report[0], 10000));
  ASSERT_EQ(::read(report[0], ids, sizeof ids), static_cast<ssize_t>(sizeof ids));
  const pid_t child = ids[0], grandchild = ids[1];
  UniqueFd gfd;
  ASSERT_FALSE(pidfd_open(grandchild, gfd));  // no error
  // Re-parented: its parent is no longer the child (a bounded wait on state).
  auto ppid_of = [](pid_t pid) {  // 0: gone
    std::ifstream st("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(st, line);
    auto close = line.rfind(')');
    int ppid = 0;
    if (close != std::string::npos) std::sscanf(line.c_str() + close + 4, "%d", &ppid);
    return ppid;
  };
  // Bounded waits on state: the grandchild re-parented, and (child_reaped)
  // the child no longer the top's (reaped: gone, or its pid another's).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto wait_until = [&](auto done) {
    while (!done() && std::chrono::steady_clock::now() < deadline) ::sched_yield();
    return done();
  };
  ASSERT_TRUE(wait_until([&] {
    int ppid = ppid_of(grandchild);
    return ppid != child && ppid != 0;
  }));
  if (child_reaped) {
    ASSERT_TRUE(wait_until([&] { return ppid_of(child) != top; }));
  }
  tracker.tick();  // both forks read at once, then what is left found
  const Observation* g = rec.find<obs::ProcStart>(grandchild);
  ASSERT_TRUE(g);
  EXPECT_TRUE(tracker.had(grandchild));
  if (child_reaped) {
    EXPECT_FALSE(rec.find<obs::ProcStart>(child)) << "never seen";
    EXPECT_EQ(g->as<obs::ProcStart>()->ppid, top) << "its first tracked ancestor, from the forks";
  } else {
    const Observation* c = rec.find<obs::ProcStart>(child);
    ASSERT_TRUE(c);
    EXPECT_EQ(g->as<obs::ProcStart>()->ppid, child) << "its ancestry, from the fork events";
    EXPECT_LE(c->t, g->t) << "the child starts no later than its grandchild";
    EXPECT_TRUE(tracker.had(child));
  }
  EXPECT_FALSE(tracker.had(::getppid()));
  (void)pidfd_signal(gfd.get(), SIGKILL);
  ::waitpid(grandchild, nullptr, 0);  // re-parented to this test
  ::close(go[1]);
  ::close(report[0]);
}

INSTANTIATE_TEST_SUITE_P(Daemon, TrackerForkTimes, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? "ChildReapedUnseen" : "ChildAZombie";
                         });

TEST(RoleByRule, TheTopIsTheLauncherAndTheShmManagerAHelper) {
  EXPECT_EQ(role_by_rule("python3", "python3 train.py", true), Role::Launcher);
  EXPECT_EQ(role_by_rule("torch_shm_manag", "", false), Role::Helper);
  EXPECT_EQ(role_by_rule("x", "/usr/lib/torch/bin/torch_shm_manager --daemon", false),
            Role::Helper);
  EXPECT_EQ(role_by_rule("python3", "python3 train.py", false), Role::Unknown);
}

}  // namespace
}  // namespace aftermath
