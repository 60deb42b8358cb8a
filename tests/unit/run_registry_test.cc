// Unit tests for harness/supervise/run_registry (the runs of this process
// side by side, and the processes each one's job had).
#include "harness/supervise/run_registry.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace aftermath {
namespace {

TEST(RunRegistry, ARunLearnsWhichOtherRunHadAPidNeverItself) {
  const int a = new_run_id(), b = new_run_id();
  EXPECT_NE(a, b);
  // Pids far above any pid_max, so no other test's runs share them.
  note_run_pid(a, 1 << 30);
  EXPECT_EQ(other_run_with(b, 1 << 30), a);
  EXPECT_EQ(other_run_with(a, 1 << 30), 0) << "its own";
  EXPECT_EQ(other_run_with(b, (1 << 30) + 1), 0) << "nobody's";
  note_run_pid(b, 1 << 30);  // the pid, reused by b's job
  EXPECT_EQ(other_run_with(a, 1 << 30), b);
}

TEST(RunRegistry, RunsSideBySidePublishAtOnce) {
  std::vector<std::thread> runs;
  std::vector<int> ids(4);
  for (int i = 0; i < 4; ++i) ids[i] = new_run_id();
  for (int i = 0; i < 4; ++i)
    runs.emplace_back([&, i] {
      for (int p = 0; p < 1000; ++p) note_run_pid(ids[i], (1 << 29) + i * 1000 + p);
    });
  for (auto& t : runs) t.join();
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(other_run_with(ids[(i + 1) % 4], (1 << 29) + i * 1000 + 999), ids[i]);
}

}  // namespace
}  // namespace aftermath
