// What the command line's inputs expand to: folders, suites (nested, with
// comments), and the problems each names by file and line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/cli/inputs.h"
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

TEST(ScenarioVars, NameThisProgramsFolder) {
  EXPECT_EQ(scenario_vars().at("AFTERMATH_BIN"), bin_dir());
  EXPECT_EQ(bin_dir() + "/" + std::filesystem::path(self_path()).filename().string(), self_path());
}

}  // namespace
}  // namespace aftermath
