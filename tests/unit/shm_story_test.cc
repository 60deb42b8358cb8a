// Unit tests for the /dev/shm story (harness/check/shm_story): what the job
// created and left, and when the extra entries were last all gone, read off
// hand-made timelines.
#include "harness/check/shm_story.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>

#include "tests/support/units.h"

namespace aftermath {
namespace {

using testing_units::msec;

using Sizes = std::map<std::string, std::int64_t>;

TEST(ShmStory, AnEmptyTimelineHasNothingToTell) {
  auto s = shm_story(Timeline{});
  EXPECT_EQ(s.created, 0);
  EXPECT_TRUE(s.leaked.empty());
  EXPECT_EQ(s.back_to_baseline, std::nullopt);
  EXPECT_FALSE(s.unavailable);
}

TEST(ShmStory, BaselineEntriesAreNeitherCreatedNorLeakedNorABaselineReturn) {
  Timeline tl;
  tl.add(obs::shm_add(0, "old", 10, /*baseline=*/true));
  tl.add(obs::shm_resize(msec(5), "old", 20));
  tl.add(obs::shm_add(0, "old_two", 7, /*baseline=*/true));
  tl.add(obs::shm_remove(msec(10), "old_two"));
  auto s = shm_story(tl);
  EXPECT_EQ(s.created, 0);
  EXPECT_TRUE(s.leaked.empty());
  EXPECT_EQ(s.back_to_baseline, std::nullopt);
}

TEST(ShmStory, LeavesWhatWasAddedAndNeverRemovedAtItsLastSize) {
  Timeline tl;
  tl.add(obs::shm_add(msec(1), "a", 4096));
  tl.add(obs::shm_add(msec(2), "b", 100));
  tl.add(obs::shm_resize(msec(3), "b", 8192));
  tl.add(obs::shm_add(msec(4), "gone", 1));
  tl.add(obs::shm_remove(msec(5), "gone"));
  auto s = shm_story(tl);
  EXPECT_EQ(s.created, 3);
  EXPECT_EQ(s.leaked, (Sizes{{"a", 4096}, {"b", 8192}}));
  EXPECT_EQ(s.back_to_baseline, std::nullopt);
}

TEST(ShmStory, BackToBaselineIsWhenTheLastExtraEntryWent) {
  Timeline tl;
  tl.add(obs::shm_add(msec(10), "a", 1));
  tl.add(obs::shm_add(msec(15), "b", 1));
  tl.add(obs::shm_remove(msec(20), "a"));  // b is still there
  tl.add(obs::shm_remove(msec(25), "b"));
  tl.add(obs::shm_add(msec(30), "c", 1));
  tl.add(obs::shm_remove(msec(40), "c"));
  auto s = shm_story(tl);
  EXPECT_EQ(s.created, 3);
  EXPECT_TRUE(s.leaked.empty());
  EXPECT_EQ(s.back_to_baseline, msec(40));  // the last return, not the first
}

TEST(ShmStory, AnEntryAddedAfterTheReturnUndoesIt) {
  Timeline tl;
  tl.add(obs::shm_add(msec(10), "a", 1));
  tl.add(obs::shm_remove(msec(20), "a"));
  tl.add(obs::shm_add(msec(30), "b", 64));
  auto s = shm_story(tl);
  EXPECT_EQ(s.back_to_baseline, std::nullopt);
  EXPECT_EQ(s.leaked, (Sizes{{"b", 64}}));
}

TEST(ShmStory, TheHarnessReclaimingAnEntryIsNoReturnToBaseline) {
  Timeline tl;
  tl.add(obs::shm_add(msec(10), "a", 4096));
  tl.add(obs::shm_reclaim(msec(900), "a", 4096));
  auto s = shm_story(tl);
  EXPECT_EQ(s.leaked, (Sizes{{"a", 4096}}));
  EXPECT_EQ(s.back_to_baseline, std::nullopt);
}

TEST(ShmStory, ANameCreatedTwiceCountsTwiceAndLeavesItsLastSize) {
  Timeline tl;
  tl.add(obs::shm_add(msec(10), "a", 1));
  tl.add(obs::shm_remove(msec(20), "a"));
  tl.add(obs::shm_add(msec(30), "a", 2));
  auto s = shm_story(tl);
  EXPECT_EQ(s.created, 2);
  EXPECT_EQ(s.leaked, (Sizes{{"a", 2}}));
}

TEST(ShmStory, UnavailableOnlyFromTheHarnessFailingToReadShm) {
  Timeline other;
  other.add(
      obs::harness_failure(0, HarnessPart::TmpDir, "cannot open /tmp: No such file or directory"));
  other.add(obs::note(0, "shm unavailable: a note's text is not a failure"));
  EXPECT_FALSE(shm_story(other).unavailable);

  Timeline tl;
  tl.add(obs::harness_failure(0, HarnessPart::ShmDir, "cannot open /dev/shm: Not a directory"));
  EXPECT_TRUE(shm_story(tl).unavailable);
}

}  // namespace
}  // namespace aftermath
