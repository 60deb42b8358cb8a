// spawn: descriptors (kept ones at their numbers, every other one closed),
// signal dispositions, a failed exec reported as an error, the
// die-with-parent link. run_command: output, exit status, the deadline (the child is killed and
// reaped), and the while-waiting callback the supervisor uses to keep
// reading the job's events during a hang diagnosis.
#include "harness/os/spawn.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "tests/support/children.h"

namespace aftermath {
namespace {

using ::testing::HasSubstr;
using testing_children::OwnedChild;

// Runs /bin/sh -c SCRIPT through spawn with stdout on a pipe; what it printed.
std::string spawn_and_read(SpawnOptions o, const std::string& script) {
  int out[2];
  EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
  o.argv = {"/bin/sh", "-c", script};
  o.stdout_fd = out[1];
  auto pid = spawn(o);
  ::close(out[1]);
  EXPECT_TRUE(pid.ok()) << (pid.ok() ? "" : pid.error().what);
  OwnedChild child(pid.ok() ? *pid : -1);
  std::string text;
  char buf[256];
  ssize_t n;
  while (testing_children::readable_within(out[0], 10'000) &&
         (n = ::read(out[0], buf, sizeof buf)) > 0)
    text.append(buf, static_cast<size_t>(n));
  ::close(out[0]);
  child.reap_within(10'000);
  return text;
}

TEST(Spawn, KeepsOnlyTheNamedDescriptors) {
  int keep[2], stray[2];
  ASSERT_EQ(::pipe2(keep, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe(stray), 0);  // not close-on-exec: spawn must still close it
  SpawnOptions o;
  o.keep_fds = {keep[0]};
  std::string seen = spawn_and_read(
      o, "for fd in " + std::to_string(keep[0]) + " " + std::to_string(stray[0]) +
             "; do [ -e /proc/self/fd/$fd ] && echo open $fd || echo closed $fd; done");
  EXPECT_THAT(seen, HasSubstr("open " + std::to_string(keep[0])));
  EXPECT_THAT(seen, HasSubstr("closed " + std::to_string(stray[0])));
  for (int fd : {keep[0], keep[1], stray[0], stray[1]}) ::close(fd);
}

TEST(Spawn, ResetsSignalsUnlessAskedNotTo) {
  struct sigaction ign{}, old{};
  ign.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGUSR1, &ign, &old), 0);
  // SigIgn bit 10 is SIGUSR1.
  const std::string script = "grep SigIgn /proc/self/status";
  SpawnOptions reset;
  SpawnOptions inherit;
  inherit.reset_signals = false;
  std::string with_reset = spawn_and_read(reset, script);
  std::string inherited = spawn_and_read(inherit, script);
  ::sigaction(SIGUSR1, &old, nullptr);
  auto mask = [](const std::string& line) {
    return std::stoull(line.substr(line.find_first_of("0123456789abcdef", 7)), nullptr, 16);
  };
  ASSERT_THAT(with_reset, HasSubstr("SigIgn"));
  EXPECT_EQ(mask(with_reset) & (1ull << (SIGUSR1 - 1)), 0u);
  EXPECT_NE(mask(inherited) & (1ull << (SIGUSR1 - 1)), 0u);
}

TEST(Spawn, AFailedExecIsAnErrorWithItsErrno) {
  SpawnOptions o;
  o.argv = {"/nonexistent/program"};
  auto pid = spawn(o);
  ASSERT_FALSE(pid.ok());
  EXPECT_EQ(pid.error().errnum, ENOENT);
  EXPECT_THAT(pid.error().what, HasSubstr("/nonexistent/program"));
  EXPECT_FALSE(spawn(SpawnOptions{}).ok());  // no command
}

TEST(Spawn, ChildDiesWithItsParent) {
  // A middle process spawns a sleeper with die_with_parent, reports its pid,
  // and exits: the sleeper must get SIGKILL.
  int report[2];
  ASSERT_EQ(::pipe2(report, O_CLOEXEC), 0);
  pid_t middle = ::fork();
  ASSERT_GE(middle, 0);
  if (middle == 0) {
    SpawnOptions o;
    o.argv = {"/bin/sleep", "30"};
    o.die_with_parent = true;
    auto pid = spawn(o);
    int v = pid.ok() ? *pid : -1;
    (void)!::write(report[1], &v, sizeof v);
    ::_exit(0);
  }
  OwnedChild mid(middle);
  ::close(report[1]);
  int sleeper = -1;
  ASSERT_TRUE(testing_children::readable_within(report[0], 10'000));
  ASSERT_EQ(::read(report[0], &sleeper, sizeof sleeper), static_cast<ssize_t>(sizeof sleeper));
  ::close(report[0]);
  ASSERT_GT(sleeper, 0);
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, sleeper, 0));
  mid.reap_within(10'000);
  if (fd < 0) {
    EXPECT_EQ(errno, ESRCH);  // already gone
    return;
  }
  // The sleeper is not our child; its pidfd becomes readable when it exits.
  bool died = testing_children::readable_within(fd, 10'000);
  EXPECT_TRUE(died);
  if (!died) ::syscall(SYS_pidfd_send_signal, fd, SIGKILL, nullptr, 0);  // leave nothing
  ::close(fd);
}

TEST(RunCommand, CapturesOutputAndStatus) {
  CommandOutcome c = run_command({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, 10 * kSecond);
  EXPECT_TRUE(c.started());
  EXPECT_FALSE(c.timed_out());
  ASSERT_EQ(c.end, CommandOutcome::End::Exited) << c.describe();
  EXPECT_EQ(c.code, 3);
  EXPECT_EQ(c.describe(), "exited 3");
  EXPECT_FALSE(c.exited_zero());
  EXPECT_THAT(c.output, HasSubstr("out\n"));
  EXPECT_THAT(c.output, HasSubstr("err\n"));
  EXPECT_TRUE(run_command({"true"}, 10 * kSecond).exited_zero());  // looked up in PATH
}

TEST(RunCommand, KillsAndReapsAtTheDeadline) {
  Nanos start = monotonic_now();
  CommandOutcome c = run_command({"/bin/sleep", "30"}, 200 * kMilli);
  Nanos took = monotonic_now() - start;
  EXPECT_TRUE(c.started());
  EXPECT_TRUE(c.timed_out());
  EXPECT_EQ(c.describe(), "timed out");
  EXPECT_LT(took, 10 * kSecond);
}

TEST(RunCommand, ASignalThatEndsItIsNamed) {
  CommandOutcome c = run_command({"/bin/sh", "-c", "kill -SEGV $$"}, 10 * kSecond);
  ASSERT_EQ(c.end, CommandOutcome::End::Signaled) << c.describe();
  EXPECT_EQ(c.code, SIGSEGV);
  EXPECT_EQ(c.describe(), "killed by SIGSEGV");
  EXPECT_FALSE(c.exited_zero());
  EXPECT_FALSE(c.timed_out());
}

TEST(RunCommand, MissingProgramIsNotStarted) {
  CommandOutcome c = run_command({"/nonexistent/program"}, kSecond);
  EXPECT_FALSE(c.started());
  EXPECT_THAT(c.output, HasSubstr("/nonexistent/program"));
}

TEST(RunCommand, CallsWhileWaitingUntilTheChildEnds) {
  int calls = 0;
  CommandOutcome c = run_command({"/bin/sleep", "0.4"}, 10 * kSecond, 4096, [&] { ++calls; });
  EXPECT_TRUE(c.exited_zero());
  // 400 ms in slices of at most 50 ms: several calls, whatever the load.
  EXPECT_GE(calls, 3);
  int none = 0;
  EXPECT_TRUE(run_command({"/bin/true"}, 10 * kSecond, 4096, {}).exited_zero());
  EXPECT_EQ(none, 0);
}

TEST(RunCommand, OutputIsCapped) {
  CommandOutcome c = run_command({"/bin/sh", "-c", "head -c 100000 /dev/zero"}, 10 * kSecond, 1000);
  EXPECT_TRUE(c.exited_zero());
  EXPECT_EQ(c.output.size(), 1000u);
}

}  // namespace
}  // namespace aftermath
