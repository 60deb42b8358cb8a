// Tests for the nearest-name hint (harness/cli/suggest).
#include "harness/cli/suggest.h"

#include <gtest/gtest.h>

#include "harness/cli/run_cmd.h"

namespace aftermath {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(edit_distance("timeout", "timeout"), 0u);
  EXPECT_EQ(edit_distance("timout", "timeout"), 1u);  // a letter left out
  EXPECT_EQ(edit_distance("repaet", "repeat"), 1u);   // two letters swapped
  EXPECT_EQ(edit_distance("settel", "settle"), 1u);
  EXPECT_EQ(edit_distance("out", "contain"), 5u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
}

TEST(Nearest, OnlyATypoIsNearEnough) {
  const std::vector<std::string> names{"timeout", "repeat", "settle", "out", "seed"};
  EXPECT_EQ(nearest("timout", names), "timeout");
  EXPECT_EQ(nearest("repaet", names), "repeat");
  EXPECT_EQ(nearest("frobnicate", names), "");
  EXPECT_EQ(nearest("ou", names), "out");  // one edit in two letters: still a typo
  EXPECT_EQ(nearest("x", names), "");      // one edit in one letter is a different word
  EXPECT_EQ(nearest("sed", names), "seed");
}

class MistypedHint : public ::testing::Test {
 protected:
  void SetUp() override {
    run_ = app_.add_subcommand("run", "run");
    add_run_options(run_, options_);
    app_.add_subcommand("report", "report");
  }
  CLI::App app_{"test"};
  CLI::App* run_ = nullptr;
  RunCliOptions options_;
};

TEST_F(MistypedHint, NamesTheOptionOfTheChosenCommand) {
  EXPECT_EQ(mistyped_hint(app_, {"run", "--timout", "5s", "x.yaml"}),
            "--timout: no such option of `aftermath run`; did you mean --timeout?");
  EXPECT_EQ(mistyped_hint(app_, {"run", "--repaet=3", "x.yaml"}),
            "--repaet: no such option of `aftermath run`; did you mean --repeat?");
}

TEST_F(MistypedHint, AKnownOptionOrWhatFollowsTheDoubleDashIsNotATypo) {
  EXPECT_EQ(mistyped_hint(app_, {"run", "--timeout", "5s", "--help"}), "");
  EXPECT_EQ(mistyped_hint(app_, {"run", "--", "python3", "--timout"}), "");
}

TEST_F(MistypedHint, AMistypedCommandAndAnOptionNearNothing) {
  EXPECT_EQ(mistyped_hint(app_, {"rn", "x.yaml"}),
            "rn: no such command; did you mean `aftermath run`?");
  EXPECT_EQ(mistyped_hint(app_, {"zzzzzz"}), "");
  EXPECT_EQ(mistyped_hint(app_, {"run", "--frobnicate"}),
            "--frobnicate: no such option of `aftermath run` (see `aftermath run --help`)");
}

}  // namespace
}  // namespace aftermath
