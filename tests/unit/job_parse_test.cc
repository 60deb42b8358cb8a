// The job section: the one part of scenario parsing that looks at the file
// system (the program must exist and be executable, the cwd a directory).
#include "harness/scenario/job_parse.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace aftermath {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Parsed {
  Job job;
  std::vector<std::string> errors;
};

Parsed parse(const std::string& yaml, const std::string& base, bool check = true) {
  YAML::Node root = YAML::Load(yaml);
  FieldReader r("s.yaml");
  Parsed p;
  parse_job(r, Entry{"job", root, root, "job"}, base, check, &p.job);
  for (const auto& d : r.take()) p.errors.push_back(d.to_string());
  return p;
}

TEST(JobParse, ResolvesRelativeProgramAndCwd) {
  aftermath::testing::TempDir dir;
  dir.write("bin/run.sh", "#!/bin/sh\n", 0755);
  dir.write("work/.keep", "");
  Parsed p = parse("{command: [bin/run.sh, a], args: [b], env: {X: y}, cwd: work}", dir.path());
  ASSERT_THAT(p.errors, ElementsAre());
  EXPECT_EQ(p.job.argv, (std::vector<std::string>{dir / "bin/run.sh", "a", "b"}));
  EXPECT_EQ(p.job.cwd, dir / "work");
  EXPECT_EQ(p.job.env.at("X"), "y");
}

TEST(JobParse, BadCommandNamesFileLineField) {
  aftermath::testing::TempDir dir;
  dir.write("data.txt", "x", 0644);
  EXPECT_THAT(
      parse("{command: data.txt}", dir.path()).errors,
      ElementsAre(HasSubstr("s.yaml:1:11: job.command: command 'data.txt' not found in PATH")));
  EXPECT_THAT(
      parse("{command: ./data.txt}", dir.path()).errors,
      ElementsAre("s.yaml:1:11: job.command: command is not executable: " + dir / "data.txt"));
  EXPECT_THAT(parse("{command: /bin/true, cwd: data.txt}", dir.path()).errors,
              ElementsAre("s.yaml:1:27: job.cwd: " + dir / "data.txt" + ": not a directory"));
  EXPECT_THAT(parse("{args: [x]}", dir.path()).errors,
              ElementsAre("s.yaml:1:1: job.command: missing required field"));
  // Without the lookup (`list`), nothing is checked on disk.
  EXPECT_THAT(parse("{command: ./nothing-here}", dir.path(), false).errors, ElementsAre());
}

}  // namespace
}  // namespace aftermath
