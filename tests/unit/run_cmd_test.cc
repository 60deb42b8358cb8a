// The `run` command's pure parts: the default name of a `-- COMMAND` run.
#include <gtest/gtest.h>

#include "harness/cli/run_cmd.h"
#include "harness/scenario/scenario.h"

namespace aftermath {
namespace {

TEST(CommandName, TheScriptNamesTheRunElseTheProgram) {
  EXPECT_EQ(command_name({"/usr/bin/python3", "train_ddp.py", "--epochs", "1"}), "cmd-train_ddp.py");
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

}  // namespace
}  // namespace aftermath
