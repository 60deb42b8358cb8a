// run_commands: results in order, at most `parallel` at once, side by side
// for real (a handshake between the commands), each command's deadline, the
// total budget (later commands not started), the while-waiting callback.
#include "harness/os/command_batch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <string>

#include "tests/support/temp_dir.h"

namespace aftermath {
namespace {

using aftermath::testing::TempDir;
using ::testing::HasSubstr;

std::vector<std::string> sh(const std::string& script) { return {"/bin/sh", "-c", script}; }

TEST(RunCommands, ResultsInOrder) {
  CommandBatchOptions o;
  o.parallel = 2;
  auto r =
      run_commands({sh("echo one; exit 1"), sh("echo two"), {"/nonexistent/program"}, {"true"}}, o);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_TRUE(r[0].ran);
  EXPECT_EQ(r[0].outcome.output, "one\n");
  ASSERT_EQ(r[0].outcome.end, CommandOutcome::End::Exited) << r[0].outcome.describe();
  EXPECT_EQ(r[0].outcome.code, 1);
  EXPECT_EQ(r[1].outcome.output, "two\n");
  EXPECT_TRUE(r[1].outcome.exited_zero());
  EXPECT_TRUE(r[2].ran);  // its turn came; it could not start
  EXPECT_FALSE(r[2].outcome.started());
  EXPECT_THAT(r[2].outcome.output, HasSubstr("/nonexistent/program"));
  EXPECT_TRUE(r[3].outcome.exited_zero());  // looked up in PATH
  for (const auto& b : r) EXPECT_GE(b.took, 0);
  EXPECT_TRUE(run_commands({}, o).empty());
}

// Each command counts the commands running beside it (itself included).
TEST(RunCommands, NeverMoreThanParallelAtOnce) {
  TempDir t;
  std::filesystem::create_directories(t / "running");
  std::vector<std::vector<std::string>> cmds;
  for (int i = 0; i < 5; ++i)
    cmds.push_back(sh("mkdir " + t / "running" + "/" + std::to_string(i) + "; ls " + t / "running" +
                      " | wc -l; sleep 0.2; rmdir " + t / "running" + "/" + std::to_string(i)));
  CommandBatchOptions o;
  o.parallel = 2;
  auto r = run_commands(cmds, o);
  ASSERT_EQ(r.size(), 5u);
  for (const auto& b : r) {
    EXPECT_TRUE(b.outcome.exited_zero()) << b.outcome.output;
    EXPECT_LE(std::stoi(b.outcome.output), 2) << b.outcome.output;
  }
}

// Three commands that each wait (bounded) until all three have started: they
// all see three only if they run side by side.
TEST(RunCommands, SideBySide) {
  TempDir t;
  std::filesystem::create_directories(t / "started");
  std::string cmd = "touch " + t / "started" + "/$$; i=0; while [ $(ls " + t / "started" +
                    " | wc -l) -lt 3 ] && [ $i -lt 400 ]; do sleep 0.025; i=$((i+1)); done; ls " +
                    t / "started" + " | wc -l";
  CommandBatchOptions o;
  o.parallel = 3;
  auto r = run_commands({sh(cmd), sh(cmd), sh(cmd)}, o);
  for (const auto& b : r) EXPECT_EQ(b.outcome.output, "3\n");
}

TEST(RunCommands, EachCommandHasItsDeadline) {
  CommandBatchOptions o;
  o.parallel = 2;
  o.per_command = 200 * kMilli;
  Nanos start = monotonic_now();
  auto r = run_commands({{"/bin/sleep", "30"}, sh("echo quick")}, o);
  Nanos took = monotonic_now() - start;
  ASSERT_EQ(r.size(), 2u);
  EXPECT_TRUE(r[0].outcome.timed_out());
  EXPECT_GE(r[0].took, 200 * kMilli);
  EXPECT_FALSE(r[1].outcome.timed_out());
  EXPECT_EQ(r[1].outcome.output, "quick\n");
  EXPECT_GE(took, 200 * kMilli);
  EXPECT_LT(took, 10 * kSecond);
}

TEST(RunCommands, TheTotalBudgetEndsTheBatch) {
  CommandBatchOptions o;
  o.parallel = 1;
  o.per_command = 30 * kSecond;
  o.total = 300 * kMilli;
  Nanos start = monotonic_now();
  auto r = run_commands({{"/bin/sleep", "30"}, {"/bin/sleep", "30"}, {"/bin/sleep", "30"}}, o);
  Nanos took = monotonic_now() - start;
  ASSERT_EQ(r.size(), 3u);
  EXPECT_TRUE(r[0].ran);
  EXPECT_TRUE(r[0].outcome.timed_out());  // killed at the total, not its own 30 s
  for (size_t i : {1u, 2u}) {
    EXPECT_FALSE(r[i].ran);
    EXPECT_FALSE(r[i].outcome.started());
    EXPECT_EQ(r[i].outcome.output, "not started: the time budget ran out");
  }
  EXPECT_GE(took, 300 * kMilli);
  EXPECT_LT(took, 10 * kSecond);
  // Less than min_start left: not started at all.
  o.total = 500 * kMilli;
  o.min_start = kSecond;
  r = run_commands({sh("echo never")}, o);
  EXPECT_FALSE(r[0].ran);
}

TEST(RunCommands, CallsWhileWaiting) {
  CommandBatchOptions o;
  int calls = 0;
  o.while_waiting = [&] { ++calls; };
  auto r = run_commands({{"/bin/sleep", "0.4"}}, o);
  EXPECT_TRUE(r[0].outcome.exited_zero());
  EXPECT_GE(calls, 3);  // 400 ms in slices of at most 50 ms, whatever the load
}

}  // namespace
}  // namespace aftermath
