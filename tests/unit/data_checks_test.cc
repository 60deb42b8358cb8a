// Unit tests for data_partition and collectives_matched
// (harness/check/data_checks): hand-made timelines with the events a
// training job sends, each check once passing and once with the fault
// planted (overlap, a missing index, unequal counts, a divergent op).
#include "harness/check/data_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/core/timeline.h"
#include "harness/scenario/scenario.h"
#include "tests/unit/check_fixtures.h"

namespace aftermath {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

using testing_checks::msec;

constexpr int kInit = 10;
constexpr int kLauncher = 100;
constexpr int kRank0 = 101;
constexpr int kRank1 = 102;
constexpr Nanos kTeardown = msec(5000);

Scenario make_scenario() { return testing_checks::every_check_scenario(); }

// A launcher and two ranks that announced themselves (finish() ends them).
Timeline job() {
  Timeline tl;
  tl.facts.top_pid = kLauncher;
  tl.facts.init_pid = kInit;
  tl.add(obs::phase(0, RunPhase::Launch));
  tl.add(obs::proc_start(msec(1), kLauncher, kInit, "aftermath-train", "trainer launch",
                         Role::Launcher));
  tl.add(obs::proc_start(msec(2), kRank0, kLauncher, "aftermath-train", "trainer rank",
                         Role::Unknown, 1));
  tl.add(obs::proc_start(msec(2), kRank1, kLauncher, "aftermath-train", "trainer rank",
                         Role::Unknown, 1));
  tl.add(obs::announce(msec(3), kRank0, Role::Rank, 0, -1, "{}"));
  tl.add(obs::announce(msec(3), kRank1, Role::Rank, 1, -1, "{}"));
  return tl;
}

// Ends the ranks as asked (nullopt: alive at teardown) and closes the timeline.
void finish(Timeline& tl, std::optional<Outcome> rank0, std::optional<Outcome> rank1) {
  if (rank0) tl.add(obs::proc_exit(msec(4000), kRank0, rank0));
  if (rank1) tl.add(obs::proc_exit(msec(4000), kRank1, rank1));
  tl.add(obs::phase(kTeardown, RunPhase::Teardown));
  tl.add(obs::phase(kTeardown + msec(100), RunPhase::Done));
}

void event(Timeline& tl, Nanos t, int pid, const std::string& name, const json& fields) {
  tl.add(obs::event(t, pid, name, fields.dump()));
}

std::string csv(const std::vector<int>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

CheckResult run(const char* check, const Timeline& tl) {
  static Scenario sc = make_scenario();
  auto procs = build_histories(tl);
  auto in = make_check_input(sc, tl, procs);
  return std::string(check) == "data_partition" ? data_partition(in) : collectives_matched(in);
}

// ---------------------------------------------------------- data_partition

void dataset(Timeline& tl, int size, int world, bool drop_last = false) {
  event(tl, msec(10), kRank0, "dataset",
        {{"size", size}, {"world", world}, {"rank", 0}, {"drop_last", drop_last}});
  event(tl, msec(10), kRank1, "dataset",
        {{"size", size}, {"world", world}, {"rank", 1}, {"drop_last", drop_last}});
}

void samples(Timeline& tl, int pid, int rank, const std::vector<int>& idx, bool last,
             int epoch = 0) {
  event(tl, msec(100), pid, "rank.samples",
        {{"rank", rank}, {"epoch", epoch}, {"indices", csv(idx)}, {"last", last ? 1 : 0}});
}

TEST(DataPartition, DisjointAndCompletePasses) {
  Timeline tl = job();
  dataset(tl, 10, 2);
  samples(tl, kRank0, 0, {3, 1, 7}, false);  // in two chunks
  samples(tl, kRank0, 0, {5, 9}, true);
  samples(tl, kRank1, 1, {0, 2, 4, 6, 8}, true);
  finish(tl, Outcome::exited(0), Outcome::exited(0));
  auto r = run("data_partition", tl);
  EXPECT_EQ(r.status, CheckStatus::Pass) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("complete"));
  EXPECT_EQ(r.measured["epochs"][0]["distinct"], 10);
  EXPECT_EQ(r.measured["epochs"][0]["duplicates"], 0);
  EXPECT_EQ(r.measured["epochs"][0]["consumed_per_rank"]["0"], 5);
}

TEST(DataPartition, PaddingDuplicatesAreAllowedUpToThePad) {
  // N=5, R=2: num_samples 3, total 6, one index padded (repeated).
  Timeline tl = job();
  dataset(tl, 5, 2);
  samples(tl, kRank0, 0, {4, 0, 2}, true);
  samples(tl, kRank1, 1, {1, 3, 4}, true);
  finish(tl, Outcome::exited(0), Outcome::exited(0));
  auto r = run("data_partition", tl);
  EXPECT_EQ(r.status, CheckStatus::Pass) << r.reason;
  EXPECT_EQ(r.measured["allowed_duplicates"], 1);
  EXPECT_EQ(r.measured["epochs"][0]["duplicates"], 1);
}

TEST(DataPartition, DropLastAllowsTheDroppedTail) {
  // N=5, R=2, drop_last: num_samples ceil(3/2)=2, total 4: one index dropped.
  Timeline tl = job();
  dataset(tl, 5, 2, /*drop_last=*/true);
  samples(tl, kRank0, 0, {4, 0}, true);
  samples(tl, kRank1, 1, {1, 3}, true);
  finish(tl, Outcome::exited(0), Outcome::exited(0));
  auto r = run("data_partition", tl);
  EXPECT_EQ(r.status, CheckStatus::Pass) << r.reason;
  EXPECT_EQ(r.measured["allowed_missing"], 1);
}

TEST(DataPartition, OverlapFails) {
  // The broken sampler: every rank consumes everything.
  Timeline tl = job();
  dataset(tl, 6, 2);
  samples(tl, kRank0, 0, {0, 1, 2, 3, 4, 5}, true);
  samples(tl, kRank1, 1, {0, 1, 2, 3, 4, 5}, true);
  finish(tl, Outcome::exited(0), Outcome::exited(0));
  auto r = run("data_partition", tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_THAT(r.reason, HasSubstr("overlap: 6 repeated consumption(s), padding allows 0"));
  EXPECT_THAT(r.reason, HasSubstr("index 0 by ranks 0, 1"));
}

TEST(DataPartition, MissingIndexFails) {
  Timeline tl = job();
  dataset(tl, 6, 2);
  samples(tl, kRank0, 0, {0, 2, 4}, true);
  samples(tl, kRank1, 1, {1, 3}, true);  // 5 never consumed
  finish(tl, Outcome::exited(0), Outcome::exited(0));
  auto r = run("data_partition", tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_THAT(r.reason, HasSubstr("incomplete: 1 index(es) never consumed"));
  EXPECT_THAT(r.reason, HasSubstr("e.g. 5"));
}

TEST(DataPartition, OutOfRangeFails) {
  Timeline tl = job();
  dataset(tl, 4, 2);
  samples(tl, kRank0, 0, {0, 2}, true);
  samples(tl, kRank1, 1, {1, 7}, true);
  finish(tl, Outcome::exited(0), Outcome::exited(0));
  auto r = run("data_partition", tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_THAT(r.reason, HasSubstr("outside [0, 4): 7 (rank 1)"));
}

TEST(DataPartition, AKilledRankIsNotJudgedIncomplete) {
  // Rank 1 was killed mid-epoch: missing indices are not a partition bug,
  // but an overlap among what was consumed still would be.
  Timeline tl = job();
  dataset(tl, 6, 2);
  samples(tl, kRank0, 0, {0, 2, 4}, true);
  samples(tl, kRank1, 1, {1}, false);
  finish(tl, Outcome::exited(0), Outcome::killed(9));
  auto r = run("data_partition", tl);
  EXPECT_EQ(r.status, CheckStatus::Pass) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("completeness not judged (epoch 0: rank(s) 1 did not finish)"));
  EXPECT_EQ(r.measured["epochs"][0]["missing"], nullptr);
}

TEST(DataPartition, EpochsAreJudgedApart) {
  Timeline tl = job();
  dataset(tl, 4, 2);
  samples(tl, kRank0, 0, {0, 1}, true, 0);
  samples(tl, kRank1, 1, {2, 3}, true, 0);
  samples(tl, kRank0, 0, {3, 0}, true, 1);
  samples(tl, kRank1, 1, {1, 2}, true, 1);
  finish(tl, Outcome::exited(0), Outcome::exited(0));
  auto r = run("data_partition", tl);
  EXPECT_EQ(r.status, CheckStatus::Pass) << r.reason;
  EXPECT_EQ(r.measured["epochs"].size(), 2u);
}

TEST(DataPartition, RanksKnownByTheEventFieldWhenNotAnnounced) {
  Timeline tl;
  tl.add(obs::phase(0, RunPhase::Launch));
  event(tl, msec(10), 500, "dataset", {{"size", 2}, {"world", 2}, {"rank", 0}});
  event(tl, msec(10), 501, "rank.samples", {{"rank", 0}, {"indices", "0"}, {"last", 1}});
  event(tl, msec(10), 502, "rank.samples", {{"rank", 1}, {"indices", "0"}, {"last", 1}});
  tl.add(obs::phase(msec(20), RunPhase::Teardown));
  auto r = run("data_partition", tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_THAT(r.reason, HasSubstr("index 0 by ranks 0, 1"));
}

TEST(DataPartition, SkippedWithTheReasonWhenNothingWasReported) {
  Timeline tl = job();
  finish(tl, Outcome::exited(0), Outcome::exited(0));
  auto r = run("data_partition", tl);
  EXPECT_EQ(r.status, CheckStatus::Skipped);
  EXPECT_THAT(r.reason, HasSubstr("no \"dataset\" or \"rank.samples\" events"));

  Timeline only_samples = job();
  samples(only_samples, kRank0, 0, {0}, true);
  finish(only_samples, Outcome::exited(0), Outcome::exited(0));
  auto s = run("data_partition", only_samples);
  EXPECT_EQ(s.status, CheckStatus::Skipped);
  EXPECT_THAT(s.reason, HasSubstr("dataset size is unknown"));
}

TEST(DataPartition, MalformedEventsFail) {
  Timeline tl = job();
  dataset(tl, 4, 2);
  event(tl, msec(100), kRank0, "rank.samples", {{"rank", 0}, {"indices", "1,x"}});
  finish(tl, Outcome::exited(0), Outcome::exited(0));
  auto r = run("data_partition", tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_THAT(r.reason, HasSubstr("malformed \"rank.samples\""));
}

// ----------------------------------------------------- collectives_matched

void collective(Timeline& tl, Nanos t, int pid, const std::string& op, int seq, bool end) {
  event(tl, t, pid, "collective", {{"op", op}, {"seq", seq}, {"state", end ? "end" : "begin"}});
}

// `n` all-reduces on both ranks, each begun and ended.
void steps(Timeline& tl, int n) {
  for (int s = 1; s <= n; ++s)
    for (int pid : {kRank0, kRank1}) {
      collective(tl, msec(100 + s), pid, "allreduce", s, false);
      collective(tl, msec(100 + s), pid, "allreduce", s, true);
    }
}

TEST(CollectivesMatched, EqualCountsPass) {
  Timeline tl = job();
  steps(tl, 5);
  event(tl, msec(300), kRank0, "rank.collectives", {{"rank", 0}, {"count", 5}});
  event(tl, msec(300), kRank1, "rank.collectives", {{"rank", 1}, {"count", 5}});
  finish(tl, Outcome::exited(0), Outcome::exited(0));
  auto r = run("collectives_matched", tl);
  EXPECT_EQ(r.status, CheckStatus::Pass) << r.reason;
  EXPECT_EQ(r.reason, "2 ranks ran 5 collectives each");
  EXPECT_EQ(r.measured["ranks"][0]["source"], "rank.collectives");
}

TEST(CollectivesMatched, UnequalReportedCountsFail) {
  Timeline tl = job();
  event(tl, msec(300), kRank0, "rank.collectives", {{"rank", 0}, {"count", 231}});
  event(tl, msec(300), kRank1, "rank.collectives", {{"rank", 1}, {"count", 234}});
  finish(tl, Outcome::exited(0), Outcome::exited(0));
  auto r = run("collectives_matched", tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_THAT(r.reason, HasSubstr("unequal collective counts: rank 0 ran 231, rank 1 ran 234"));
}

TEST(CollectivesMatched, AHangWithADivergentOpFailsAndSaysWhoWaitsWhere) {
  // Uneven inputs without Join: rank 0 ran out of batches and waits in its
  // trailing barrier while rank 1 waits in the next all-reduce. The counts
  // of begun collectives agree; the ops at #6 do not.
  Timeline tl = job();
  steps(tl, 5);
  collective(tl, msec(200), kRank0, "barrier", 6, false);
  collective(tl, msec(200), kRank1, "allreduce", 6, false);
  finish(tl, std::nullopt, std::nullopt);
  auto r = run("collectives_matched", tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_THAT(r.reason, HasSubstr("collective #6 is barrier on rank 0 but allreduce on rank 1"));
  EXPECT_THAT(r.reason, HasSubstr("rank 0 waits in barrier #6, rank 1 waits in allreduce #6"));
  EXPECT_EQ(r.measured["first_divergence"], 6);
}

TEST(CollectivesMatched, CountsFromEventsWhenNotReported) {
  Timeline tl = job();
  steps(tl, 3);
  collective(tl, msec(200), kRank1, "allreduce", 4, false);
  finish(tl, std::nullopt, std::nullopt);
  auto r = run("collectives_matched", tl);
  EXPECT_EQ(r.status, CheckStatus::Fail);
  EXPECT_THAT(r.reason, HasSubstr("rank 0 ran 3, rank 1 ran 4"));
  EXPECT_EQ(r.measured["ranks"][1]["source"], "collective events");
  EXPECT_EQ(r.measured["ranks"][1]["open"], "allreduce #4");
}

TEST(CollectivesMatched, RanksThatStoppedEarlyAreLeftOut) {
  // Rank 0 was SIGKILLed after 2 collectives: not a mismatch; with a
  // single rank left there is nothing to compare.
  Timeline tl = job();
  steps(tl, 2);
  collective(tl, msec(200), kRank1, "allreduce", 3, false);
  finish(tl, Outcome::killed(9), std::nullopt);
  auto r = run("collectives_matched", tl);
  EXPECT_EQ(r.status, CheckStatus::Skipped);
  EXPECT_THAT(r.reason,
              HasSubstr("fewer than two ranks to compare (stopped early: rank 0 killed(SIGKILL))"));
  EXPECT_EQ(r.measured["ranks"][0]["stopped_early"], "killed(SIGKILL)");
}

TEST(CollectivesMatched, RanksReapedByTheirLauncherAreComparedByTheirReport) {
  // The launcher reaped both ranks: the harness knows no outcome, but the
  // reported counts say both finished.
  Timeline tl = job();
  steps(tl, 4);
  event(tl, msec(300), kRank0, "rank.collectives", {{"rank", 0}, {"count", 4}});
  event(tl, msec(300), kRank1, "rank.collectives", {{"rank", 1}, {"count", 4}});
  tl.add(obs::proc_exit(msec(4000), kRank0, std::nullopt));
  tl.add(obs::proc_exit(msec(4000), kRank1, std::nullopt));
  finish(tl, std::nullopt, std::nullopt);
  auto r = run("collectives_matched", tl);
  EXPECT_EQ(r.status, CheckStatus::Pass) << r.reason;

  // Without a report and with no outcome known, a rank that ended is left out.
  Timeline quiet = job();
  steps(quiet, 4);
  event(quiet, msec(300), kRank1, "rank.collectives", {{"rank", 1}, {"count", 4}});
  quiet.add(obs::proc_exit(msec(4000), kRank0, std::nullopt));
  finish(quiet, std::nullopt, Outcome::exited(0));
  auto q = run("collectives_matched", quiet);
  EXPECT_EQ(q.status, CheckStatus::Skipped);
  EXPECT_THAT(q.reason, HasSubstr("rank 0 ended without reporting its count"));
}

TEST(CollectivesMatched, SkippedWithoutEvents) {
  Timeline tl = job();
  finish(tl, Outcome::exited(0), Outcome::exited(0));
  auto r = run("collectives_matched", tl);
  EXPECT_EQ(r.status, CheckStatus::Skipped);
  EXPECT_THAT(r.reason, HasSubstr("no collectives"));
}

}  // namespace
}  // namespace aftermath
