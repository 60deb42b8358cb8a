// Unit tests for tmp_clean (harness/check/tmp_checks): PyTorch and
// multiprocessing residue the job left in its temp dir, on hand-made
// timelines.
#include "harness/check/tmp_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/run_fixtures.h"

namespace aftermath {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using namespace testing_run;

// ============================================================ tmp_clean

TEST(TmpClean, PassesWhenTheJobLeftNothingInItsTempDir) {
  auto r = check("tmp_clean", make_scenario(), clean_run());
  EXPECT_EQ(r.status, CheckStatus::Pass);
  EXPECT_TRUE(r.measured["left"].empty());
  EXPECT_EQ(r.measured["other_count"].get<int>(), 0);
  EXPECT_EQ(r.measured["reclaimed_by_harness"], false);
  EXPECT_EQ(r.reason, "no PyTorch or multiprocessing residue left in the temp dir");
}

TEST(TmpClean, FailsNamingTheResidueItsKindOwnerAndSize) {
  auto r = check("tmp_clean", make_scenario(), tmp_leaky_run());
  EXPECT_EQ(r.status, CheckStatus::Fail);
  const json& left = r.measured["left"];
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0]["path"], "/tmp/pymp-k2x9ab");
  EXPECT_EQ(left[0]["residue"], "pymp");
  EXPECT_EQ(left[0]["owner"], 1000);
  EXPECT_EQ(left[0]["reclaimed"], true);
  EXPECT_EQ(left[1]["reclaimed"], false);
  EXPECT_EQ(left[1]["residue"], "torch-shm-dir");
  EXPECT_EQ(r.measured["left_bytes"].get<std::int64_t>(), 0);
  EXPECT_EQ(r.measured["reclaimed_by_harness"], true);
  EXPECT_THAT(r.reason,
              HasSubstr("2 temp-dir entries left behind: /tmp/pymp-k2x9ab (pymp, uid 1000, 0 B)"));
  // torchrun's log folder is listed apart, never the job's leak.
  ASSERT_EQ(r.measured["torchrun_logs"].size(), 1u);
  EXPECT_EQ(r.measured["torchrun_logs"][0]["bytes"], 6144);
  EXPECT_THAT(
      r.reason,
      HasSubstr("torchrun's log folder (torchelastic_*, kept by torchrun's design) not judged"));
}

// torchrun makes a log folder on every run and never removes it: a clean
// torchrun job passes, its folder reported with where the harness moved it.
TEST(TmpClean, TorchrunsLogFolderAloneIsNoLeak) {
  Timeline tl = skeleton();
  tl.add(
      obs::tmp_left(kTeardown + msec(50), "/tmp/torchelastic_q1", 4096, 0, TmpKind::Torchelastic));
  tl.add(obs::tmp_reclaim(kTeardown + msec(51), "/tmp/torchelastic_q1", 4096,
                          "/out/s/logs/torchelastic_q1"));
  auto r = check("tmp_clean", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Pass) << r.reason;
  EXPECT_EQ(r.measured["torchrun_logs"][0]["moved_to"], "/out/s/logs/torchelastic_q1");
  EXPECT_EQ(r.measured["reclaimed_by_harness"], false);
  EXPECT_THAT(r.reason, HasSubstr("moved to the run's logs/"));
}

// A job's outputs may live in the temp dir: other new entries are reported,
// never failed; and what a process outside the job holds is not the job's.
TEST(TmpClean, OtherEntriesAndEntriesHeldOutsideTheJobDoNotFail) {
  Timeline tl = skeleton();
  tl.add(obs::tmp_left(kTeardown + msec(50), "/tmp/results.csv", 300, 1000, TmpKind::Other));
  tl.add(obs::tmp_left(kTeardown + msec(50), "/tmp/tmpab12cd", 0, 1000, TmpKind::Other));
  tl.add(obs::tmp_left(kTeardown + msec(50), "/tmp/pymp-neighbour", 0, 1000, TmpKind::Pymp, 4242));
  auto r = check("tmp_clean", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Pass);
  EXPECT_TRUE(r.measured["left"].empty());
  EXPECT_EQ(r.measured["other_count"].get<int>(), 2);
  EXPECT_EQ(r.measured["other"][0]["path"], "/tmp/results.csv");
  ASSERT_EQ(r.measured["held_outside_job"].size(), 1u);
  EXPECT_EQ(r.measured["held_outside_job"][0]["held_by"], 4242);
  EXPECT_EQ(r.reason,
            "no PyTorch or multiprocessing residue left in the temp dir; 2 other new entries "
            "reported, not judged; 1 held by processes outside the job");
}

TEST(TmpClean, SkippedWhenTheTempDirCouldNotBeObserved) {
  Timeline tl = tmp_leaky_run();
  tl.add(obs::harness_failure(0, HarnessPart::TmpDir,
                              "cannot open /scratch/t: No such file or directory"));
  auto r = check("tmp_clean", make_scenario(), tl);
  EXPECT_EQ(r.status, CheckStatus::Skipped);
  EXPECT_THAT(r.reason, HasSubstr("cannot open /scratch/t"));
}

}  // namespace
}  // namespace aftermath
