// What the command line's inputs expand to: folders, suites (nested, with
// comments), and the problems each names by file and line.
#include "harness/cli/inputs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/temp_dir.h"

namespace aftermath {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TempDir;

TEST(ExpandInputs, FoldersGiveTheirYamlFilesSorted) {
  TempDir d;
  d.write("s/b.yaml", "");
  d.write("s/a.yaml", "");
  d.write("s/notes.txt", "");
  std::vector<std::string> errors;
  auto files = expand_inputs({d / "s", "given.yaml"}, errors);
  EXPECT_THAT(files, ElementsAre(d / "s/a.yaml", d / "s/b.yaml", "given.yaml"));
  EXPECT_TRUE(errors.empty());
}

TEST(ExpandInputs, SuitesListFilesRelativeToThemselves) {
  TempDir d;
  d.write("x/one.yaml", "");
  d.write("x/two.yaml", "");
  d.write("x/inner.suite", "two.yaml  # the second\n");
  d.write("all.suite", "# the nightly set\n\n  x/one.yaml\t\nx/inner.suite\n");
  std::vector<std::string> errors;
  auto files = expand_inputs({d / "all.suite"}, errors);
  EXPECT_THAT(files, ElementsAre(d / "x/one.yaml", d / "x/two.yaml"));
  EXPECT_TRUE(errors.empty());
}

TEST(ExpandInputs, ProblemsNameTheSuiteAndLineAndTheRestStillExpands) {
  TempDir d;
  d.write("ok.yaml", "");
  d.write("bad.suite", "ok.yaml\nmissing.yaml\n");
  std::vector<std::string> errors;
  auto files = expand_inputs({d / "bad.suite", d / "unreadable.suite"}, errors);
  EXPECT_THAT(files, ElementsAre(d / "ok.yaml"));
  EXPECT_THAT(errors, ElementsAre(d / "bad.suite:2:1: missing.yaml: no such scenario file",
                                  d / "unreadable.suite: cannot read the suite file"));
}

TEST(ExpandInputs, ASuiteThatIncludesItselfStops) {
  TempDir d;
  d.write("loop.suite", "loop.suite\n");
  std::vector<std::string> errors;
  auto files = expand_inputs({d / "loop.suite"}, errors);
  EXPECT_TRUE(files.empty());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("suites nest more than 8 deep"));
}

// `run /usr/bin/python3 train.py`, the `--` forgotten: the program is named
// with the command it would have been, and its arguments are not taken for
// scenarios. A scenario file, even an executable one, is still a scenario.
TEST(ExpandInputs, AProgramGetsTheDoubleDashHint) {
  TempDir d;
  std::string script = d.write("train", "#!/bin/sh\necho hi\n", 0755);
  std::string plain = d.write("job.yaml", "name: x\n", 0755);
  for (const std::string& program : {std::string("/bin/sh"), script}) {
    std::vector<std::string> errors;
    auto files = expand_inputs({program, "train.py", "--epochs", "1"}, errors);
    EXPECT_TRUE(files.empty());
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_EQ(errors[0], program +
                             ": a program, not a scenario or suite; did you mean `aftermath "
                             "run -- " +
                             program + " train.py --epochs 1`?");
  }
  std::vector<std::string> errors;
  EXPECT_THAT(expand_inputs({plain}, errors), ElementsAre(plain));
  EXPECT_TRUE(errors.empty());
}

TEST(ScenarioVars, NameThisProgramsFolder) {
  EXPECT_EQ(scenario_vars().at("AFTERMATH_BIN"), bin_dir());
  EXPECT_EQ(bin_dir() + "/" + std::filesystem::path(self_path()).filename().string(), self_path());
}

}  // namespace
}  // namespace aftermath
