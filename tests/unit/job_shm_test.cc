// The job's /dev/shm on a folder of the test's own: baseline, changes,
// what the job added, and the leftovers reclaimed or kept.
#include "harness/supervise/job_shm.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/support/temp_dir.h"
#include "tests/unit/observations.h"

namespace aftermath {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

struct ShmTest : ::testing::Test {
  TempDir shm{"aftermath-jobshm"};
  std::vector<Observation> seen;
  JobShm job{[] { return Nanos(5); }, [this](Observation o) { seen.push_back(std::move(o)); }};
  template <typename P>
  std::vector<testing::Seen<P>> of() const {
    return testing::all_of<P>(seen);
  }
};

TEST_F(ShmTest, TheBaselineIsRecordedAndOnlyNewEntriesCount) {
  shm.write("old", std::string(100, 'x'));
  job.take_baseline(shm.path());
  job.set_place(false, 0);
  auto base = of<obs::ShmAdd>();
  ASSERT_EQ(base.size(), 1u);
  EXPECT_EQ(base[0].name, "old");
  EXPECT_TRUE(base[0].baseline);
  EXPECT_EQ(base[0].t, 0);
  job.sample();
  EXPECT_TRUE(job.at_baseline());
  EXPECT_EQ(job.fresh_entries(), 0);
  shm.write("torch_1_2", std::string(4096, 'y'));
  job.sample();
  auto added = of<obs::ShmAdd>();
  ASSERT_EQ(added.size(), 2u);
  EXPECT_EQ(added[1].name, "torch_1_2");
  EXPECT_FALSE(added[1].baseline);
  EXPECT_FALSE(job.at_baseline());
  EXPECT_EQ(job.fresh_entries(), 1);
  EXPECT_EQ(job.extra_bytes(), 4096);
  fs::remove(shm / "torch_1_2");
  job.sample();
  ASSERT_EQ(of<obs::ShmRemove>().size(), 1u);
  EXPECT_TRUE(job.at_baseline());
  EXPECT_EQ(job.extra_bytes(), 0);
}

// A runner's /dev/shm with 100,000 entries left by earlier jobs: a leak made
// among them is found from its own change (no scan of the 100,000), at the
// time of the sample that saw it, and only it is reclaimed.
TEST(JobShmAtScale, ALeakAmong100000BaselineEntriesIsFoundAndTimedFromItsChangeAlone) {
  char tmpl[] = "/dev/shm/aftermath-jobshm-100k-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{dir};
  constexpr int kBaseline = 100'000;
  for (int i = 0; i < kBaseline; ++i) {
    std::string p =
        dir + "/torch_" + std::to_string(1000 + i % 500) + "_" + std::to_string(i) + "_0";
    int fd = ::open(p.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0) << p;
    ::close(fd);
  }
  Nanos clock = 0;
  std::vector<Observation> seen;
  JobShm job([&] { return clock; }, [&](Observation o) { seen.push_back(std::move(o)); });
  job.take_baseline(dir);
  job.set_place(false, 0);
  clock = 10 * kMilli;
  job.sample();  // the first sample scans
  ASSERT_EQ(job.scans(), 1);
  EXPECT_EQ(job.fresh_entries(), 0);
  for (int i = 0; i < 10; ++i) job.sample();  // idle: nothing read
  clock = 777 * kMilli;
  {
    std::ofstream(dir + "/torch_4242_0_leak") << std::string(4096, 'z');
  }
  job.sample();
  EXPECT_EQ(job.scans(), 1)
      << "the leak was found by a scan of all 100,000 entries, not by its change";
  std::vector<testing::Seen<obs::ShmAdd>> added;
  for (const auto& a : testing::all_of<obs::ShmAdd>(seen))
    if (!a.baseline) added.push_back(a);
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0].name, "torch_4242_0_leak");
  EXPECT_EQ(added[0].t, 777 * kMilli);
  EXPECT_EQ(job.fresh_entries(), 1);
  EXPECT_EQ(job.extra_bytes(), 4096);
  EXPECT_FALSE(job.at_baseline());
  job.finish(false, "");
  auto reclaimed = testing::all_of<obs::ShmReclaim>(seen);
  ASSERT_EQ(reclaimed.size(), 1u);
  EXPECT_EQ(reclaimed[0].name, "torch_4242_0_leak");
  EXPECT_FALSE(fs::exists(dir + "/torch_4242_0_leak"));
  EXPECT_TRUE(fs::exists(dir + "/torch_1000_0_0"));
}

TEST_F(ShmTest, LeftoversOnTheHostAreRemovedAndRecorded) {
  job.take_baseline(shm.path());
  job.set_place(false, 0);
  shm.write("leak", "z");
  job.sample();
  job.finish(false, shm / "kept");
  auto reclaimed = of<obs::ShmReclaim>();
  ASSERT_EQ(reclaimed.size(), 1u);
  EXPECT_EQ(reclaimed[0].name, "leak");
  EXPECT_FALSE(fs::exists(shm / "leak"));
  EXPECT_TRUE(job.finished());
  shm.write("late", "z");
  job.sample();  // finished: no more looks
  EXPECT_EQ(of<obs::ShmAdd>().size(), 1u);
}

TEST_F(ShmTest, KeepLeaksLeavesTheHostsEntryInPlace) {
  job.take_baseline(shm.path());
  job.set_place(false, 0);
  shm.write("leak", "z");
  job.sample();
  job.finish(true, shm / "kept");
  EXPECT_TRUE(of<obs::ShmReclaim>().empty());
  EXPECT_TRUE(fs::exists(shm / "leak"));
  EXPECT_FALSE(fs::exists(shm / "kept"));  // copies are for a private tmpfs only
}

TEST_F(ShmTest, APrivateTmpfsStartsEmptyAndIsSeenThroughTheReaper) {
  shm.write("host-entry", "x");
  job.take_baseline(shm.path());
  job.set_place(true, 4321);
  EXPECT_TRUE(of<obs::ShmAdd>().empty());  // the host's entries are not the job's baseline
  EXPECT_EQ(job.dir(), "/proc/4321/root/dev/shm");
}

TEST_F(ShmTest, AShmDirThatCannotBeReadIsTheHarnessesFailureNotAnEmptyBaseline) {
  job.take_baseline(shm / "absent");
  auto failed = of<obs::HarnessFailure>();
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].part, HarnessPart::ShmDir);
  EXPECT_NE(failed[0].why.find("absent"), std::string::npos) << failed[0].why;
  EXPECT_NE(failed[0].why.find("No such file"), std::string::npos) << failed[0].why;

  seen.clear();
  job.take_baseline(shm.path());
  EXPECT_TRUE(of<obs::HarnessFailure>().empty());
}

TEST_F(ShmTest, APrivateTmpfsThatCannotBeSeenIsTheHarnessesFailure) {
  job.take_baseline(shm.path());
  // A reaper pid that names no process: its /proc/PID/root cannot be read.
  job.set_place(true, 0x3fffffff);
  ASSERT_EQ(of<obs::HarnessFailure>().size(), 1u);
  EXPECT_TRUE(harness_failed(seen.back(), HarnessPart::ShmDir));
  EXPECT_FALSE(harness_failed(seen.back(), HarnessPart::TmpDir));
}

}  // namespace
}  // namespace aftermath
