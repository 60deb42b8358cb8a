// Unit tests for the trainer's samplers (fixtures/cpp/sampler.h), its
// command line and its sample reports: DistributedSampler's partition,
// padding and drop_last arithmetic, the bucket sampler's uneven batch counts
// (77 vs 78 in the default configuration), the broken sampler's overlap.
// Torch-free: compiled only when the trainer fixture is built.
#ifdef AFTERMATH_HAVE_TRAINER

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "fixtures/cpp/dataset.h"
#include "fixtures/cpp/options.h"
#include "fixtures/cpp/report.h"
#include "fixtures/cpp/sampler.h"
#include "fixtures/cpp/sys.h"

namespace trainer {
namespace {

using ::testing::HasSubstr;

SamplerConfig cfg(std::int64_t n, int world, bool drop_last = false, std::uint64_t seed = 0) {
  SamplerConfig c;
  c.size = n;
  c.world = world;
  c.drop_last = drop_last;
  c.seed = seed;
  return c;
}

TEST(TrainerSampler, NumSamplesFollowsDistributedSampler) {
  EXPECT_EQ(num_samples(10, 3, false), 4);  // ceil(10/3)
  EXPECT_EQ(num_samples(10, 3, true), 3);   // ceil((10-3)/3)
  EXPECT_EQ(num_samples(9, 3, true), 3);    // divisible: drop_last changes nothing
  EXPECT_EQ(num_samples(11, 4, true), 2);   // ceil(7/4)
  EXPECT_EQ(num_samples(2, 3, false), 1);
  EXPECT_EQ(num_samples(2, 3, true), 0);  // ceil(-1/3) == 0
}

TEST(TrainerSampler, RanksPartitionTheDatasetUpToPadding) {
  for (std::int64_t n : {1, 7, 10, 12, 101}) {
    for (int world : {1, 2, 3, 4}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " world=" + std::to_string(world));
      std::map<std::int64_t, int> seen;
      std::int64_t consumed = 0;
      for (int r = 0; r < world; ++r) {
        auto idx = distributed_indices(cfg(n, world), r, 0);
        EXPECT_EQ(static_cast<std::int64_t>(idx.size()), num_samples(n, world, false));
        for (auto i : idx) ++seen[i];
        consumed += static_cast<std::int64_t>(idx.size());
      }
      EXPECT_EQ(static_cast<std::int64_t>(seen.size()), n);  // complete
      EXPECT_EQ(consumed - n,
                num_samples(n, world, false) * world - n);  // only the padding repeats
    }
  }
}

TEST(TrainerSampler, RankTakesEveryWorldthIndexOfThePaddedPermutation) {
  // N=10, R=4: total 12, the 2 padded indices repeat the permutation's first two.
  auto perm = permutation(10, /*seed=*/5);
  auto c = cfg(10, 4, false, 5);
  std::vector<std::int64_t> padded = perm;
  padded.push_back(perm[0]);
  padded.push_back(perm[1]);
  for (int r = 0; r < 4; ++r) {
    std::vector<std::int64_t> want;
    for (size_t i = static_cast<size_t>(r); i < padded.size(); i += 4) want.push_back(padded[i]);
    EXPECT_EQ(distributed_indices(c, r, 0), want) << "rank " << r;
  }
}

TEST(TrainerSampler, DropLastTruncatesWithoutRepeats) {
  auto c = cfg(10, 4, /*drop_last=*/true);
  std::set<std::int64_t> seen;
  std::int64_t consumed = 0;
  for (int r = 0; r < 4; ++r) {
    auto idx = distributed_indices(c, r, 0);
    EXPECT_EQ(idx.size(), 2u);  // ceil((10-4)/4)
    seen.insert(idx.begin(), idx.end());
    consumed += static_cast<std::int64_t>(idx.size());
  }
  EXPECT_EQ(consumed, 8);
  EXPECT_EQ(seen.size(), 8u);  // disjoint; two indices dropped
}

TEST(TrainerSampler, ShuffleIsSeededBySeedPlusEpoch) {
  auto c = cfg(50, 2, false, 7);
  EXPECT_EQ(distributed_indices(c, 0, 0), distributed_indices(c, 0, 0));
  EXPECT_NE(distributed_indices(c, 0, 0), distributed_indices(c, 0, 1));
  auto c8 = cfg(50, 2, false, 8);
  EXPECT_EQ(distributed_indices(c, 0, 1), distributed_indices(c8, 0, 0));  // 7+1 == 8+0
}

TEST(TrainerSampler, BrokenSamplerGivesEveryRankEverything) {
  auto c = cfg(9, 3);
  auto a = broken_indices(c, 0, 0), b = broken_indices(c, 2, 0);
  EXPECT_EQ(a, b);
  EXPECT_EQ(std::set<std::int64_t>(a.begin(), a.end()).size(), 9u);
  auto batches = plan_epoch(SamplerKind::Broken, c, 1, 0, 4, 1234);
  EXPECT_EQ(batches.size(), 3u);  // 9 samples in batches of 4
}

TEST(TrainerSampler, BucketSamplerGivesTheDefaultRanks77And78Batches) {
  Options o;  // the defaults
  auto c = cfg(o.dataset_size, 2, false, 0);
  auto r0 = plan_epoch(SamplerKind::Bucket, c, 0, 0, o.batch_size, o.data_seed);
  auto r1 = plan_epoch(SamplerKind::Bucket, c, 1, 0, o.batch_size, o.data_seed);
  EXPECT_EQ(r0.size(), 77u);
  EXPECT_EQ(r1.size(), 78u);
  // Samples stay equal (DistributedSampler's guarantee); only batches differ.
  size_t s0 = 0, s1 = 0;
  for (const auto& b : r0) s0 += b.size();
  for (const auto& b : r1) s1 += b.size();
  EXPECT_EQ(s0, s1);
  EXPECT_EQ(static_cast<std::int64_t>(s0), num_samples(o.dataset_size, 2, false));
  // The plain DistributedSampler batches evenly.
  EXPECT_EQ(plan_epoch(SamplerKind::Distributed, c, 0, 0, o.batch_size, o.data_seed).size(),
            plan_epoch(SamplerKind::Distributed, c, 1, 0, o.batch_size, o.data_seed).size());
}

TEST(TrainerSampler, BucketBatchesHoldOneBucketEachAndTheRanksSamples) {
  auto c = cfg(500, 2, false, 3);
  auto mine = distributed_indices(c, 1, 0);
  auto batches = bucket_batches(mine, 8, 1234, 3, 0);
  std::multiset<std::int64_t> got;
  for (const auto& b : batches) {
    ASSERT_FALSE(b.empty());
    EXPECT_LE(b.size(), 8u);
    auto bucket = [](int len) {
      int k = 0;
      for (int bound : kBucketBounds)
        if (len > bound) ++k;
      return k;
    };
    int first = bucket(sample_length(b[0], 1234));
    for (auto i : b) EXPECT_EQ(bucket(sample_length(i, 1234)), first);
    got.insert(b.begin(), b.end());
  }
  EXPECT_EQ(got, std::multiset<std::int64_t>(mine.begin(), mine.end()));
}

TEST(TrainerSampler, SamplesAreAPureFunctionOfTheirIndex) {
  std::vector<std::uint8_t> a(96), b(96);
  fill_sample(a.data(), 42, 96, 16, 1234);
  fill_sample(b.data(), 42, 96, 16, 1234);
  EXPECT_EQ(a, b);
  fill_sample(b.data(), 43, 96, 16, 1234);
  EXPECT_NE(a, b);
}

TEST(TrainerReport, IndexChunksFitTheirBound) {
  std::vector<std::int64_t> idx;
  for (int i = 0; i < 3000; ++i) idx.push_back(i * 7);
  auto chunks = chunk_indices(idx, 500);
  std::string joined;
  for (const auto& c : chunks) {
    EXPECT_LE(c.size(), 500u);
    joined += (joined.empty() ? "" : ",") + c;
  }
  std::string want;
  for (auto i : idx) want += (want.empty() ? "" : ",") + std::to_string(i);
  EXPECT_EQ(joined, want);
}

TEST(TrainerOptions, DefaultsAndParsing) {
  std::string err;
  auto o =
      parse_options({"aftermath-trainer", "launch", "--workers", "4", "--watchdog", "pdeathsig",
                     "--status-interval", "500ms", "--sharing", "file_system", "--join", "on"},
                    &err);
  ASSERT_TRUE(o) << err;
  EXPECT_EQ(o->mode, "launch");
  EXPECT_EQ(o->workers, 4);
  EXPECT_EQ(o->watchdog, Watchdog::Pdeathsig);
  EXPECT_EQ(o->status_interval, Millis(500));
  EXPECT_EQ(o->sharing, Sharing::FileSystem);
  EXPECT_TRUE(o->join);
  EXPECT_EQ(o->policy, Policy::Torchrun);
  EXPECT_EQ(o->args.size(), 10u);  // passed on to the ranks unchanged
  Options d;
  EXPECT_EQ(d.workers, 16);
  EXPECT_EQ(d.status_interval, Millis(5000));
  EXPECT_EQ(d.manager_delay, Millis(2000));
  EXPECT_EQ(d.term_timeout, Millis(30000));
}

// The fixture's durations are the harness's grammar (harness/core/duration.h).
TEST(TrainerOptions, DurationsUseTheHarnessGrammar) {
  EXPECT_EQ(trainer::parse_duration("1.5s"), Millis(1500));
  EXPECT_EQ(trainer::parse_duration("2min"), Millis(120000));
  EXPECT_EQ(trainer::parse_duration("250us"), Millis(0));
  EXPECT_EQ(trainer::parse_duration("5"), std::nullopt);
  EXPECT_EQ(trainer::parse_duration("-1s"), std::nullopt);
  EXPECT_EQ(trainer::parse_duration("5sec"), std::nullopt);
}

TEST(TrainerOptions, BadInputIsNamed) {
  std::string err;
  EXPECT_FALSE(parse_options({"t", "launch", "--watchdog", "sometimes"}, &err));
  EXPECT_THAT(err, HasSubstr("bad value 'sometimes' for --watchdog"));
  EXPECT_FALSE(parse_options({"t", "launch", "--status-interval", "5"}, &err));  // units required
  EXPECT_THAT(err, HasSubstr("--status-interval"));
  EXPECT_FALSE(parse_options({"t", "launch", "--status-interval", "5d"}, &err));  // no such unit
  EXPECT_THAT(err, HasSubstr("--status-interval"));
  EXPECT_FALSE(parse_options({"t", "launch", "--bogus", "1"}, &err));
  EXPECT_THAT(err, HasSubstr("unknown option '--bogus'"));
  EXPECT_FALSE(parse_options({"t", "fly"}, &err));
  EXPECT_FALSE(parse_options({"t", "rank", "--sample-bytes", "32"}, &err));  // < 4*(16+1)
}

}  // namespace
}  // namespace trainer

#endif  // AFTERMATH_HAVE_TRAINER
