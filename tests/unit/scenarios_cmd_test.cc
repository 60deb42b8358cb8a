// `aftermath list` and `aftermath validate` over planted scenario files.
#include "harness/cli/scenarios_cmd.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/support/temp_dir.h"

namespace aftermath {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;
using ::testing::internal::CaptureStderr;
using ::testing::internal::CaptureStdout;
using ::testing::internal::GetCapturedStderr;
using ::testing::internal::GetCapturedStdout;

const char* kGood =
    "name: good-one\n"
    "description: |\n  First line.\n  Second line.\n"
    "tags: [a, b]\n"
    "job:\n  command: /bin/true\n"
    "expect: pass\n";

TEST(ScenariosCmd, ListShowsNameTagsRequiresAndTheFirstLine) {
  TempDir d;
  d.write("good.yaml", kGood);
  d.write("skip.txt", "not a scenario");
  CaptureStdout();
  int rc = cmd_list(d.path());
  std::string out = GetCapturedStdout();
  EXPECT_EQ(rc, 0);
  EXPECT_THAT(out, HasSubstr("good-one                             a,b                      -      "
                             "        First line.\n"));
  EXPECT_EQ(out.find("Second line"), std::string::npos);
}

TEST(ScenariosCmd, ListNamesABadFileAndFails) {
  TempDir d;
  d.write("good.yaml", kGood);
  d.write("bad.yaml", "name: bad\njob: {command: /bin/true}\nexpect: pass\nbogus: 1\n");
  CaptureStdout();
  CaptureStderr();
  int rc = cmd_list(d.path());
  std::string out = GetCapturedStdout(), err = GetCapturedStderr();
  EXPECT_EQ(rc, 2);
  EXPECT_THAT(out, HasSubstr("good-one"));
  EXPECT_THAT(err, HasSubstr(d / "bad.yaml"));
  CaptureStderr();
  EXPECT_EQ(cmd_list(d / "absent"), 2);
  EXPECT_THAT(GetCapturedStderr(), HasSubstr("aftermath list: " + (d / "absent") + ": "));
}

TEST(ScenariosCmd, ValidateCountsOrNamesEveryProblem) {
  TempDir d;
  d.write("good.yaml", kGood);
  CaptureStdout();
  EXPECT_EQ(cmd_validate({d / "good.yaml"}), 0);
  EXPECT_EQ(GetCapturedStdout(), "aftermath validate: 1 scenario(s), all valid\n");
  d.write("all.suite", "good.yaml\nmissing.yaml\n");
  CaptureStderr();
  EXPECT_EQ(cmd_validate({d / "all.suite"}), 2);
  std::string err = GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr(d / "all.suite:2:1: missing.yaml: no such scenario file\n"));
  EXPECT_THAT(err, HasSubstr("aftermath validate: 1 problem(s)\n"));
}

}  // namespace
}  // namespace aftermath
