// The job's /dev/shm on a folder of the test's own: baseline, changes,
// what the job added, and the leftovers reclaimed or kept.
#include "harness/supervise/job_shm.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/temp_dir.h"

namespace aftermath {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

struct ShmTest : ::testing::Test {
  TempDir shm{"aftermath-jobshm"};
  std::vector<Observation> seen;
  JobShm job{[] { return Nanos(5); }, [this](Observation o) { seen.push_back(std::move(o)); }};
  std::vector<Observation> of(ObsKind k) const {
    std::vector<Observation> out;
    for (const auto& o : seen)
      if (o.kind == k) out.push_back(o);
    return out;
  }
};

TEST_F(ShmTest, TheBaselineIsRecordedAndOnlyNewEntriesCount) {
  shm.write("old", std::string(100, 'x'));
  job.take_baseline(shm.path());
  job.set_place(false, 0);
  auto base = of(ObsKind::ShmAdd);
  ASSERT_EQ(base.size(), 1u);
  EXPECT_EQ(base[0].name, "old");
  EXPECT_TRUE(base[0].baseline);
  EXPECT_EQ(base[0].t, 0);
  job.sample();
  EXPECT_TRUE(job.at_baseline());
  EXPECT_EQ(job.fresh_entries(), 0);
  shm.write("torch_1_2", std::string(4096, 'y'));
  job.sample();
  auto added = of(ObsKind::ShmAdd);
  ASSERT_EQ(added.size(), 2u);
  EXPECT_EQ(added[1].name, "torch_1_2");
  EXPECT_FALSE(added[1].baseline);
  EXPECT_FALSE(job.at_baseline());
  EXPECT_EQ(job.fresh_entries(), 1);
  EXPECT_EQ(job.extra_bytes(), 4096);
  fs::remove(shm / "torch_1_2");
  job.sample();
  ASSERT_EQ(of(ObsKind::ShmRemove).size(), 1u);
  EXPECT_TRUE(job.at_baseline());
  EXPECT_EQ(job.extra_bytes(), 0);
}

TEST_F(ShmTest, LeftoversOnTheHostAreRemovedAndRecorded) {
  job.take_baseline(shm.path());
  job.set_place(false, 0);
  shm.write("leak", "z");
  job.sample();
  job.finish(false, shm / "kept");
  auto reclaimed = of(ObsKind::ShmReclaim);
  ASSERT_EQ(reclaimed.size(), 1u);
  EXPECT_EQ(reclaimed[0].name, "leak");
  EXPECT_FALSE(fs::exists(shm / "leak"));
  EXPECT_TRUE(job.finished());
  shm.write("late", "z");
  job.sample();  // finished: no more looks
  EXPECT_EQ(of(ObsKind::ShmAdd).size(), 1u);
}

TEST_F(ShmTest, KeepLeaksLeavesTheHostsEntryInPlace) {
  job.take_baseline(shm.path());
  job.set_place(false, 0);
  shm.write("leak", "z");
  job.sample();
  job.finish(true, shm / "kept");
  EXPECT_TRUE(of(ObsKind::ShmReclaim).empty());
  EXPECT_TRUE(fs::exists(shm / "leak"));
  EXPECT_FALSE(fs::exists(shm / "kept"));  // copies are for a private tmpfs only
}

TEST_F(ShmTest, APrivateTmpfsStartsEmptyAndIsSeenThroughTheReaper) {
  shm.write("host-entry", "x");
  job.take_baseline(shm.path());
  job.set_place(true, 4321);
  EXPECT_TRUE(of(ObsKind::ShmAdd).empty());  // the host's entries are not the job's baseline
  EXPECT_EQ(job.dir(), "/proc/4321/root/dev/shm");
}

TEST_F(ShmTest, AShmDirThatCannotBeReadIsTheHarnessesFailureNotAnEmptyBaseline) {
  job.take_baseline(shm / "absent");
  auto failed = of(ObsKind::HarnessFailure);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_TRUE(harness_failed(failed[0], HarnessPart::ShmDir));
  EXPECT_NE(failed[0].text.find("absent"), std::string::npos) << failed[0].text;
  EXPECT_NE(failed[0].text.find("No such file"), std::string::npos) << failed[0].text;

  seen.clear();
  job.take_baseline(shm.path());
  EXPECT_TRUE(of(ObsKind::HarnessFailure).empty());
}

TEST_F(ShmTest, APrivateTmpfsThatCannotBeSeenIsTheHarnessesFailure) {
  job.take_baseline(shm.path());
  // A reaper pid that names no process: its /proc/PID/root cannot be read.
  job.set_place(true, 0x3fffffff);
  auto failed = of(ObsKind::HarnessFailure);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_TRUE(harness_failed(failed[0], HarnessPart::ShmDir));
  EXPECT_FALSE(harness_failed(failed[0], HarnessPart::TmpDir));
}

}  // namespace
}  // namespace aftermath
