// Unit tests for the pidfd calls (harness/os/pidfd): a handle opened on a
// real child of ours signals that child; a pid that names no process gives
// ESRCH; a handle on a process that was reaped cannot signal a later one.
#include "harness/os/pidfd.h"

#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/children.h"

namespace aftermath {
namespace {

using testing_children::OwnedChild;
using testing_children::readable_within;

constexpr int kDeadlineMs = 10000;

// A child that blocks in pause() until a signal ends it.
pid_t start_pausing_child() {
  pid_t pid = ::fork();
  if (pid == 0) {
    for (;;) ::pause();
  }
  return pid;
}

// A pid that names no process now: a child of ours, already reaped. Its pid
// could only be reused by a later fork, which nothing here does in between.
pid_t gone_pid() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return pid;
}

TEST(PidfdOpen, OpensAHandleOnALiveChild) {
  OwnedChild child(start_pausing_child());
  ASSERT_GT(child.pid(), 0);
  UniqueFd fd;
  ASSERT_FALSE(pidfd_open(child.pid(), fd));
  ASSERT_TRUE(fd);
  EXPECT_GE(::fcntl(fd.get(), F_GETFD), 0);
  EXPECT_FALSE(readable_within(fd.get(), 0));  // alive: a pidfd turns readable only on exit
}

TEST(PidfdOpen, AGonePidIsESRCHAndLeavesTheHandleAlone) {
  pid_t pid = gone_pid();
  ASSERT_GT(pid, 0);
  UniqueFd fd;
  std::error_code ec = pidfd_open(pid, fd);
  EXPECT_EQ(ec, std::error_code(ESRCH, std::system_category()));
  EXPECT_FALSE(fd);
}

TEST(PidfdOpen, ReplacesWhatTheHandleHeldBefore) {
  OwnedChild a(start_pausing_child());
  OwnedChild b(start_pausing_child());
  UniqueFd fd;
  ASSERT_FALSE(pidfd_open(a.pid(), fd));
  int first = fd.get();
  ASSERT_FALSE(pidfd_open(b.pid(), fd));
  // The second is opened before the first is let go, so they differ; the
  // first was closed, not leaked.
  ASSERT_NE(fd.get(), first);
  EXPECT_EQ(::fcntl(first, F_GETFD), -1);
}

TEST(PidfdSignal, ASignalThroughThePidfdKillsTheChild) {
  OwnedChild child(start_pausing_child());
  ASSERT_GT(child.pid(), 0);
  UniqueFd fd;
  ASSERT_FALSE(pidfd_open(child.pid(), fd));
  ASSERT_FALSE(pidfd_signal(fd.get(), SIGTERM));
  int status = 0;
  ASSERT_TRUE(child.exited_within(kDeadlineMs, &status));
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

TEST(PidfdSignal, SignalZeroProbesWithoutHarm) {
  OwnedChild child(start_pausing_child());
  UniqueFd fd;
  ASSERT_FALSE(pidfd_open(child.pid(), fd));
  EXPECT_FALSE(pidfd_signal(fd.get(), 0));
  EXPECT_FALSE(child.exited_within(50));  // still there: signal 0 delivers nothing
}

// Once reaped, the process is gone: its pidfd refuses to signal (and so can
// never reach a later process that took its pid).
TEST(PidfdSignal, AReapedProcessIsESRCHThroughItsPidfd) {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(3);
  OwnedChild child(pid);
  UniqueFd fd;
  ASSERT_FALSE(pidfd_open(pid, fd));
  int status = 0;
  ASSERT_TRUE(child.exited_within(kDeadlineMs, &status));
  EXPECT_EQ(pidfd_signal(fd.get(), SIGKILL), std::error_code(ESRCH, std::system_category()));
  EXPECT_EQ(pidfd_signal(fd.get(), 0), std::error_code(ESRCH, std::system_category()));
}

// Exited but not yet reaped, a zombie still takes a signal, as kill(2) does,
// and nothing comes of it: its exit status stays its own.
TEST(PidfdSignal, AZombieTakesTheSignalAndKeepsItsExitStatus) {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(3);
  OwnedChild child(pid);
  UniqueFd fd;
  ASSERT_FALSE(pidfd_open(pid, fd));
  ASSERT_TRUE(readable_within(fd.get(), kDeadlineMs));  // exited: a zombie until reaped
  EXPECT_FALSE(pidfd_signal(fd.get(), SIGKILL));
  int status = 0;
  ASSERT_TRUE(child.exited_within(kDeadlineMs, &status));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
}

TEST(PidfdSignal, AHandleThatIsNotAPidfdIsRefused) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  UniqueFd r(p[0]), w(p[1]);
  EXPECT_EQ(pidfd_signal(r.get(), 0), std::error_code(EBADF, std::system_category()));
  EXPECT_EQ(pidfd_signal(-1, 0), std::error_code(EBADF, std::system_category()));
}

}  // namespace
}  // namespace aftermath
