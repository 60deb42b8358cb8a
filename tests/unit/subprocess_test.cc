// run_command: output, exit status, the deadline (the child is killed and
// reaped), and the while-waiting callback the supervisor uses to keep
// reading the job's events during a hang diagnosis.
#include "harness/core/subprocess.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

namespace aftermath {
namespace {

using ::testing::HasSubstr;

TEST(RunCommand, CapturesOutputAndStatus) {
  CommandOutcome c = run_command({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, 10 * kSecond);
  EXPECT_TRUE(c.started);
  EXPECT_FALSE(c.timed_out);
  ASSERT_TRUE(WIFEXITED(c.status));
  EXPECT_EQ(WEXITSTATUS(c.status), 3);
  EXPECT_FALSE(c.exited_zero());
  EXPECT_THAT(c.output, HasSubstr("out\n"));
  EXPECT_THAT(c.output, HasSubstr("err\n"));
  EXPECT_TRUE(run_command({"true"}, 10 * kSecond).exited_zero());  // looked up in PATH
}

TEST(RunCommand, KillsAndReapsAtTheDeadline) {
  Nanos start = monotonic_now();
  CommandOutcome c = run_command({"/bin/sleep", "30"}, 200 * kMilli);
  Nanos took = monotonic_now() - start;
  EXPECT_TRUE(c.started);
  EXPECT_TRUE(c.timed_out);
  ASSERT_TRUE(WIFSIGNALED(c.status));  // reaped: its status is known
  EXPECT_EQ(WTERMSIG(c.status), SIGKILL);
  EXPECT_LT(took, 10 * kSecond);
}

TEST(RunCommand, MissingProgramIsNotStarted) {
  CommandOutcome c = run_command({"/nonexistent/program"}, kSecond);
  EXPECT_FALSE(c.started);
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
