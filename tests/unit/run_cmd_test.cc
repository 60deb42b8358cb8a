// The `run` command's pure parts: the default name of a `-- COMMAND` run,
// --shard's slices.
#include "harness/cli/run_cmd.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "harness/scenario/scenario.h"

namespace aftermath {
namespace {

TEST(CommandName, TheScriptNamesTheRunElseTheProgram) {
  EXPECT_EQ(command_name({"/usr/bin/python3", "train_ddp.py", "--epochs", "1"}),
            "cmd-train_ddp.py");
  // torchrun through the shim: the training script, not the shim.
  EXPECT_EQ(command_name({"python3", "fixtures/python/torchrun_shim.py", "--standalone",
                          "--nproc_per_node", "2", "jobs/train_ddp.py"}),
            "cmd-train_ddp.py");
  EXPECT_EQ(command_name({"bash", "run.sh"}), "cmd-run.sh");
  EXPECT_EQ(command_name({"/opt/bin/tc_clean", "--children", "3"}), "cmd-tc_clean");
  EXPECT_EQ(command_name({"./my job"}), "cmd-my_job");
  EXPECT_EQ(command_name({}), "cmd");
}

TEST(CommandName, TheDefaultIsAValidNameForLowerCaseScripts) {
  EXPECT_TRUE(valid_scenario_name(command_name({"python3", "train.py"})));
  EXPECT_FALSE(valid_scenario_name("Train"));
  EXPECT_FALSE(valid_scenario_name("-x"));
  EXPECT_FALSE(valid_scenario_name(""));
  EXPECT_TRUE(valid_scenario_name("nightly.ddp-2_ranks"));
}

TEST(Shard, ParsesIOfN) {
  auto s = parse_shard("2/4");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 2);
  EXPECT_EQ(s->count, 4);
  for (const char* bad :
       {"", "2", "0/4", "5/4", "2/0", "-1/4", "a/b", "2/4/6", "1/100000", "2 /4"}) {
    auto b = parse_shard(bad);
    ASSERT_FALSE(b) << bad;
    EXPECT_NE(b.error().what.find("--shard: expected I/N"), std::string::npos) << b.error().what;
  }
}

TEST(Shard, TheShardsTogetherRunEachScenarioOnce) {
  for (std::size_t total : {0u, 1u, 7u, 43u}) {
    for (int n : {1, 2, 3, 5, 50}) {
      std::vector<int> runs(total, 0);
      std::size_t biggest = 0, smallest = total;
      for (int i = 1; i <= n; ++i) {
        auto pos = shard_positions(total, Shard{i, n});
        EXPECT_TRUE(std::is_sorted(pos.begin(), pos.end()));
        for (std::size_t k : pos) ++runs.at(k);
        biggest = std::max(biggest, pos.size());
        smallest = std::min(smallest, pos.size());
      }
      for (std::size_t k = 0; k < total; ++k)
        EXPECT_EQ(runs[k], 1) << total << " " << n << " " << k;
      EXPECT_LE(biggest - smallest, 1u) << "balanced";
    }
  }
  // Every N-th from the I-th: neighbours go to different shards.
  EXPECT_EQ(shard_positions(7, Shard{2, 3}), (std::vector<std::size_t>{1, 4}));
}

}  // namespace
}  // namespace aftermath

namespace aftermath {
namespace {

TEST(SallocCommand, TheSameInvocationInANewAllocationWithoutSlurm) {
  std::vector<std::string> argv = {"aftermath", "run", "--slurm", "--out", "o", "x.yaml"};
  EXPECT_EQ(salloc_command("/usr/bin/salloc", "/opt/aftermath", argv, 3),
            (std::vector<std::string>{"/usr/bin/salloc", "-N3", "--quiet", "/opt/aftermath", "run",
                                      "--out", "o", "x.yaml"}));
  // After "--" everything is the job's own, --slurm included.
  std::vector<std::string> job = {"aftermath", "run", "--slurm", "--", "prog", "--slurm"};
  EXPECT_EQ(salloc_command("s", "a", job, 2),
            (std::vector<std::string>{"s", "-N2", "--quiet", "a", "run", "--", "prog", "--slurm"}));
}

}  // namespace
}  // namespace aftermath
