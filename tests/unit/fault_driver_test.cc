// The fault driver, one action at a time, against real children of the
// test's own (and planted cgroup / device trees where the real ones cannot
// be assumed).
#include "harness/inject/fault_driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "tests/support/children.h"
#include "tests/support/temp_dir.h"

namespace aftermath {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using testing::TempDir;
using testing_children::OwnedChild;

const std::string kFake = AFTERMATH_FAKECUDART_SO;

// A planted /dev with a GPU's control node and the stand-in CUDA runtime.
FaultDriverOptions fake_gpu_options(const TempDir& dev) {
  std::ofstream(dev / "nvidiactl").put('x');
  FaultDriverOptions o;
  o.tools.dev_root = dev.path();
  o.tools.cudart_candidates = {kFake};
  return o;
}

// A child that waits (30 s at most: it bounds its own life) for a signal.
// `ignore`: a signal it ignores, set before the constructor returns.
struct Sleeper {
  explicit Sleeper(int ignore = 0) {
    int ready[2];
    if (::pipe(ready) != 0) return;
    pid_t pid = ::fork();
    if (pid == 0) {
      ::alarm(30);
      if (ignore) ::signal(ignore, SIG_IGN);
      (void)!::write(ready[1], "r", 1);
      for (;;) ::pause();
    }
    ::close(ready[1]);
    char c;
    if (pid > 0) (void)!::read(ready[0], &c, 1);
    ::close(ready[0]);
    child.adopt(pid);
    if (pid > 0) (void)pidfd_open(pid, pidfd);
  }
  FaultTarget target() const { return FaultTarget{child.pid(), pidfd.get(), 0}; }
  OwnedChild child;
  UniqueFd pidfd;
};

FaultSpec spec(FaultAction a, int sig = 0) {
  FaultSpec f;
  f.action = a;
  f.signal = sig;
  return f;
}

TEST(FaultDriverSignal, KillsTheTargetByItsPidfd) {
  Sleeper s;
  ASSERT_GT(s.child.pid(), 0);
  FaultDriver d({});
  FaultAct a = d.act(0, spec(FaultAction::Sigkill, SIGKILL), {s.target()}, false);
  EXPECT_EQ(a.status, FaultStatus::Injected);
  EXPECT_EQ(a.mechanism, FaultMechanism::Signal);
  EXPECT_EQ(a.reason, "SIGKILL to 1 process(es)");
  EXPECT_EQ(a.answer, "continue");
  EXPECT_EQ(a.signalled, std::vector<int>{s.child.pid()});
  int status = 0;
  ASSERT_TRUE(s.child.exited_within(10000, &status));
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
}

TEST(FaultDriverSignal, ATargetThatIgnoresTheSignalIsNamedInTheRecord) {
  Sleeper ignoring(SIGINT);
  Sleeper plain;
  FaultDriver d({});
  FaultAct a =
      d.act(0, spec(FaultAction::Sigint, SIGINT), {ignoring.target(), plain.target()}, false);
  ASSERT_EQ(a.status, FaultStatus::Injected);
  EXPECT_THAT(a.reason, StartsWith("SIGINT to 2 process(es); " +
                                   std::to_string(ignoring.child.pid()) + " ignores SIGINT ("));
  EXPECT_THAT(a.reason, HasSubstr("so it had no effect there"));
  EXPECT_THAT(a.reason, Not(HasSubstr(std::to_string(plain.child.pid()))));
  int status = 0;
  ASSERT_TRUE(plain.child.exited_within(10000, &status));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << status;
  EXPECT_FALSE(ignoring.child.exited_within(50)) << "it ignores SIGINT";

  // A signal it does not ignore: nothing more said.
  FaultAct term = d.act(0, spec(FaultAction::Sigterm, SIGTERM), {ignoring.target()}, false);
  EXPECT_EQ(term.reason, "SIGTERM to 1 process(es)");
}

TEST(FaultDriverSignal, StopsTheTargetWithSigstop) {
  Sleeper s;
  FaultDriver d({});
  FaultAct a = d.act(0, spec(FaultAction::Sigstop, SIGSTOP), {s.target()}, false);
  ASSERT_EQ(a.status, FaultStatus::Injected);
  int status = 0;
  // waitpid blocks until the stop is reported; the child cannot outlive its alarm.
  ASSERT_EQ(::waitpid(s.child.pid(), &status, WUNTRACED), s.child.pid());
  EXPECT_TRUE(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP) << status;
}

TEST(FaultDriverSignal, ATargetWithoutAPidfdIsNeverSignalled) {
  Sleeper s;
  FaultTarget t = s.target();
  t.pidfd = -1;
  FaultAct a = FaultDriver::send_signal(spec(FaultAction::Sigterm, SIGTERM), {t});
  EXPECT_EQ(a.status, FaultStatus::Failed);
  EXPECT_EQ(a.mechanism, FaultMechanism::None);
  EXPECT_EQ(a.reason, "the target(s) exited before the signal");
  EXPECT_TRUE(a.signalled.empty());
  EXPECT_FALSE(s.child.exited_within(50)) << "the child was signalled";
}

TEST(FaultDriverHostOom, RlimitAtAPointLowersTheTargetsAddressSpace) {
  Sleeper s;
  FaultSpec f = spec(FaultAction::HostOom);
  f.headroom = 32 << 20;
  FaultDriver d({});
  FaultAct a = d.act(0, f, {s.target()}, /*at_point=*/true);
  ASSERT_EQ(a.status, FaultStatus::Injected) << a.reason;
  EXPECT_EQ(a.mechanism, FaultMechanism::Rlimit);
  EXPECT_EQ(a.answer, "host_oom");  // the fixture makes its allocation on this answer
  EXPECT_THAT(a.reason, StartsWith("RLIMIT_AS of pid " + std::to_string(s.child.pid())));
  rlimit now{};
  ASSERT_EQ(::prlimit(s.child.pid(), RLIMIT_AS, nullptr, &now), 0);
  EXPECT_NE(now.rlim_cur, RLIM_INFINITY);
}

TEST(FaultDriverHostOom, RlimitSaysWhyWhenItCannot) {
  TempDir proc;
  proc.write("77/status", "Name:\tkworker/0:1\nPid:\t77\n");
  FaultDriverOptions o;
  o.proc_root = proc.path();
  FaultDriver d(o);
  FaultAct a = d.act(0, spec(FaultAction::HostOom), {FaultTarget{77, -1, 0}}, true);
  EXPECT_EQ(a.status, FaultStatus::Failed);
  EXPECT_EQ(a.mechanism, FaultMechanism::Rlimit);
  EXPECT_EQ(a.reason, "cannot read the address-space size of pid 77");
  EXPECT_EQ(a.answer, "continue");
}

TEST(FaultDriverHostOom, CgroupMovesEachTargetAndCountsItsKills) {
  TempDir cg;
  cg.write("cgroup.controllers", "cpu memory pids\n");
  cg.write("cgroup.subtree_control", "memory\n");
  FaultDriverOptions o;
  o.tools.cgroup_parent = cg.path();
  FaultDriver d(o);
  FaultSpec f = spec(FaultAction::HostOom);
  f.mechanism = FaultMechanism::Cgroup;
  f.headroom = 16 << 20;
  EXPECT_FALSE(d.has_cgroups());
  FaultAct a = d.act(3, f, {FaultTarget{4242, -1, 0}}, false);
  ASSERT_EQ(a.status, FaultStatus::Injected) << a.reason;
  EXPECT_EQ(a.mechanism, FaultMechanism::Cgroup);
  EXPECT_EQ(a.answer, "host_oom");
  EXPECT_EQ(a.oom_kills, 0);
  ASSERT_EQ(a.cgroups.size(), 1u);
  EXPECT_THAT(a.cgroups[0], HasSubstr("-f3-p4242"));
  EXPECT_EQ(a.reason,
            "pid 4242 moved into " + a.cgroups[0] +
                " (memory.max 16 MiB of new charges): the kernel OOM killer acts beyond it");
  EXPECT_TRUE(d.has_cgroups());
  std::ifstream procs(a.cgroups[0] + "/cgroup.procs");
  std::string written((std::istreambuf_iterator<char>(procs)), {});
  EXPECT_EQ(written, "4242");

  EXPECT_TRUE(d.poll_oom_kills().empty());  // no kill yet
  std::ofstream(a.cgroups[0] + "/memory.events") << "oom 1\noom_kill 1\n";
  auto kills = d.poll_oom_kills();
  ASSERT_EQ(kills.size(), 1u);
  EXPECT_EQ(kills[0].fault, 3u);
  EXPECT_EQ(kills[0].pid, 4242);
  EXPECT_EQ(kills[0].kills, 1);
  EXPECT_EQ(kills[0].fault_total, 1);
  EXPECT_EQ(kills[0].cgroup, a.cgroups[0]);
  EXPECT_TRUE(d.poll_oom_kills().empty());  // counted once

  // A planted folder holds files, so it cannot be removed like a cgroup: said so.
  std::vector<std::string> notes;
  EXPECT_TRUE(d.close_cgroups(notes).empty());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], StartsWith("fault cgroup not removed: rmdir " + a.cgroups[0]));
}

TEST(FaultDriverHostOom, CgroupIsSkippedWhereThereIsNone) {
  TempDir dir;
  FaultDriverOptions o;
  o.tools.cgroup_parent = dir / "absent";
  FaultDriver d(o);
  FaultSpec f = spec(FaultAction::HostOom);
  f.mechanism = FaultMechanism::Cgroup;
  FaultAct a = d.act(0, f, {FaultTarget{4242, -1, 0}}, false);
  EXPECT_EQ(a.status, FaultStatus::Skipped);
  EXPECT_EQ(a.mechanism, FaultMechanism::Cgroup);
  EXPECT_EQ(a.reason, "no memory cgroup to limit the target in: AFTERMATH_CGROUP=" +
                          (dir / "absent") + " is not a directory");
  EXPECT_FALSE(a.oom_kills);
  EXPECT_FALSE(d.has_cgroups());
}

TEST(FaultDriverDeviceOom, SkippedWithoutAGpuKeepingTheMechanismAskedFor) {
  TempDir dev;  // no nvidiactl
  FaultDriverOptions o;
  o.tools.dev_root = dev.path();
  o.tools.cudart_candidates = {kFake};
  FaultDriver d(o);
  FaultSpec f = spec(FaultAction::DeviceOom);
  f.mechanism = FaultMechanism::Hog;
  FaultAct a = d.act(0, f, {FaultTarget{1, -1, 0}}, false);
  EXPECT_EQ(a.status, FaultStatus::Skipped);
  EXPECT_EQ(a.mechanism, FaultMechanism::Hog);
  EXPECT_THAT(a.reason, HasSubstr("nvidiactl absent"));
}

TEST(FaultDriverDeviceOom, InterposerIsPreloadedThenArmedForEachTarget) {
  TempDir dev, tools;
  std::ofstream(dev / "nvidiactl").put('x');
  FaultDriverOptions o;
  o.tools.dev_root = dev.path();
  o.tools.cudart_candidates = {kFake};
  o.tools.tools_dir = tools.path();
  FaultDriver d(o);
  FaultSpec f = spec(FaultAction::DeviceOom);
  f.mechanism = FaultMechanism::Interposer;
  std::map<std::string, std::string> env{{"LD_PRELOAD", "/lib/other.so"}};
  d.prepare_job_env({f}, env);
  ASSERT_FALSE(d.arm_dir().empty());
  std::string arm_dir = d.arm_dir();
  EXPECT_EQ(env["LD_PRELOAD"], tools.path() + "/libaftermath-cudafail.so:/lib/other.so");
  EXPECT_EQ(env["AFTERMATH_CUDA_FAIL_ARM"], arm_dir + "/");

  FaultAct a = d.act(0, f, {FaultTarget{4242, -1, 7}}, false);
  ASSERT_EQ(a.status, FaultStatus::Injected) << a.reason;
  EXPECT_EQ(a.mechanism, FaultMechanism::Interposer);
  EXPECT_EQ(a.reason,
            "the next device allocation of pid 4242 (7 in the job) returns out-of-memory "
            "(libaftermath-cudafail.so)");
  EXPECT_TRUE(std::filesystem::exists(arm_dir + "/pid-7"));
  EXPECT_TRUE(d.release_device().empty());  // no hogs
  EXPECT_FALSE(std::filesystem::exists(arm_dir));
}

TEST(FaultDriverDeviceOom, InterposerWithoutItsPreloadFails) {
  TempDir dev;
  FaultDriver d(fake_gpu_options(dev));
  FaultSpec f = spec(FaultAction::DeviceOom);
  f.mechanism = FaultMechanism::Interposer;
  FaultAct a = d.act(0, f, {FaultTarget{4242, -1, 7}}, false);
  EXPECT_EQ(a.status, FaultStatus::Failed);
  EXPECT_EQ(a.reason, "the interposer was not preloaded (no arm folder)");
}

TEST(FaultDriverDeviceOom, AtAPointTheFixtureAllocates) {
  TempDir dev;
  FaultDriver d(fake_gpu_options(dev));
  FaultSpec f = spec(FaultAction::DeviceOom);
  f.mechanism = FaultMechanism::Point;
  FaultAct a = d.act(0, f, {FaultTarget{4242, -1, 0}}, true);
  EXPECT_EQ(a.status, FaultStatus::Injected);
  EXPECT_EQ(a.mechanism, FaultMechanism::PointReply);
  EXPECT_EQ(a.answer, "device_oom");
}

TEST(FaultDriverHold, DelayAndHangAreAnswersToThePoint) {
  FaultDriver d({});
  FaultSpec delay = spec(FaultAction::Delay);
  delay.duration = 250 * kMilli;
  FaultAct a = d.act(0, delay, {FaultTarget{1, -1, 0}}, true);
  EXPECT_EQ(a.status, FaultStatus::Injected);
  EXPECT_EQ(a.mechanism, FaultMechanism::PointReply);
  EXPECT_EQ(a.answer, "delay 250");
  EXPECT_EQ(a.reason, "held at the point for " + format_duration(250 * kMilli));
  FaultAct h = d.act(0, spec(FaultAction::Hang), {FaultTarget{1, -1, 0}}, true);
  EXPECT_EQ(h.answer, "hang");
  EXPECT_EQ(h.reason, "held at the point until teardown");
}

}  // namespace
}  // namespace aftermath

namespace aftermath {
namespace {

// A planted /proc: pid -> ppid.
void plant_proc(const TempDir& proc, const std::map<int, int>& parents) {
  for (const auto& [pid, ppid] : parents) {
    const std::string dir = proc / std::to_string(pid);
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/stat") << pid << " (python3) S " << ppid << " " << pid << " " << pid
                                 << " 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 100 0 0\n";
  }
}

TEST(FaultDriverScancel, TheStepTreeIsTheTaskAndWhatHangsBelowItNow) {
  TempDir proc;
  // 10 is the job's reaper; 100 the task (the launcher), 101 its child, 102
  // a grandchild; 103 was reparented to the reaper when its parent died, 104
  // hangs below it; 200 is not a job process.
  plant_proc(proc, {{100, 10}, {101, 100}, {102, 101}, {103, 10}, {104, 103}, {200, 100}});
  FaultDriverOptions o;
  o.proc_root = proc.path();
  FaultDriver d(o);
  EXPECT_EQ(d.step_tree(100, {100, 101, 102, 103, 104}), (std::vector<int>{100, 101, 102}));
  // A pid no longer in /proc is not found, nor what hung below it.
  std::filesystem::remove_all(proc / "101");
  EXPECT_EQ(d.step_tree(100, {100, 101, 102, 103, 104}), (std::vector<int>{100}));
  // The task gone: Slurm finds nothing.
  EXPECT_TRUE(d.step_tree(105, {100, 103, 104}).empty());
}

TEST(FaultDriverScancel, SigcontAndSigtermToTheStepOrItsOwnSignal) {
  Sleeper a, b;
  FaultDriver d({});
  FaultSpec f = spec(FaultAction::Scancel);
  f.kill_wait = 7 * kSecond;
  FaultAct act = d.act(0, f, {a.target()}, false);
  EXPECT_EQ(act.status, FaultStatus::Injected);
  EXPECT_EQ(act.reason,
            "SIGCONT and SIGTERM to the step's 1 process(es) (the launcher and its descendants); "
            "SIGKILL to what it then holds after kill_wait 7s");
  int status = 0;
  ASSERT_TRUE(a.child.exited_within(10000, &status));
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);

  f.step_signal = SIGUSR1;
  act = d.act(0, f, {b.target()}, false);
  EXPECT_EQ(act.reason, "SIGUSR1 to the step's 1 process(es) (the launcher and its descendants)");
  ASSERT_TRUE(b.child.exited_within(10000, &status));
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGUSR1);
}

// A node that loses power takes every process on it, not only those the
// tracker had listed: a child forked since (a DataLoader worker starting its
// torch_shm_manager) dies with its parent.
TEST(FaultDriverNodeLoss, ADescendantNobodyListedDiesWithTheNode) {
  struct FakeCut final : NetworkCut {
    Status cut() override {
      cut_ = true;
      return {};
    }
    Status heal() override {
      cut_ = false;
      return {};
    }
    bool is_cut() const override { return cut_; }
    bool cut_ = false;
  } net;
  FaultDriverOptions o;
  o.tools.network = &net;
  FaultDriver d(o);
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::alarm(30);
    pid_t grandchild = ::fork();
    if (grandchild == 0) {
      ::alarm(30);  // an alarm is not inherited: its own bound
      for (;;) ::pause();
    }
    (void)!::write(report[1], &grandchild, sizeof grandchild);
    for (;;) ::pause();
  }
  OwnedChild child(pid);
  ::close(report[1]);
  pid_t grandchild = 0;
  ASSERT_EQ(::read(report[0], &grandchild, sizeof grandchild),
            static_cast<ssize_t>(sizeof grandchild));
  ::close(report[0]);
  UniqueFd child_fd, grandchild_fd;
  ASSERT_FALSE(pidfd_open(pid, child_fd));
  ASSERT_FALSE(pidfd_open(grandchild, grandchild_fd));
  FaultAct a = d.act(0, spec(FaultAction::NodeLoss), {FaultTarget{pid, child_fd.get(), 0}}, false);
  EXPECT_TRUE(net.is_cut());
  ASSERT_EQ(a.status, FaultStatus::Injected) << a.reason;
  EXPECT_EQ(a.reason, "the node's network cut, then SIGKILL to 2 process(es) at once");
  EXPECT_EQ(a.signalled, (std::vector<int>{pid, grandchild}));
  int status = 0;
  ASSERT_TRUE(child.exited_within(10000, &status));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  pollfd p{grandchild_fd.get(), POLLIN, 0};
  const bool gone = ::poll(&p, 1, 10000) == 1;
  EXPECT_TRUE(gone) << "the grandchild outlived its node";
  if (!gone) (void)pidfd_signal(grandchild_fd.get(), SIGKILL);  // nothing left behind
}

TEST(FaultDriverAgentKill, SkippedOutsideAMultiNodeAgent) {
  FaultDriver d({});
  FaultAct a = d.act(0, spec(FaultAction::AgentKill), {}, false);
  EXPECT_EQ(a.status, FaultStatus::Skipped);
  EXPECT_THAT(a.reason, HasSubstr("multi-node"));
  EXPECT_FALSE(a.ends_agent);
}

TEST(FaultDriverAgentKill, TheAgentEndsOnlyWhenAskedAfterTheAct) {
  int ended = 0;
  FaultDriverOptions o;
  o.tools.end_agent = [&] { ++ended; };
  FaultDriver d(o);
  Sleeper s;
  FaultAct a = d.act(0, spec(FaultAction::AgentKill), {s.target()}, false);
  EXPECT_EQ(a.status, FaultStatus::Injected);
  EXPECT_TRUE(a.ends_agent);
  EXPECT_THAT(a.reason, HasSubstr("its 1 job process(es) must die with it"));
  EXPECT_EQ(ended, 0);  // the fault is recorded (and streamed) first
  d.end_agent();
  EXPECT_EQ(ended, 1);
  EXPECT_FALSE(s.child.exited_within(50)) << "the job's processes are not the driver's to kill";
}

}  // namespace
}  // namespace aftermath
