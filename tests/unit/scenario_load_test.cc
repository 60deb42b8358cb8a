// The check layer's scenario loading: a scenario read with the registry gets
// every known check, typed params, and a read error as a diagnostic.
#include "harness/check/scenario_load.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "harness/check/check_params.h"
#include "harness/check/registry.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/parse_helpers.h"

namespace aftermath {
namespace {

TEST(ScenarioLoad, ReadsAFileWithTypedChecks) {
  aftermath::testing::TempDir dir;
  std::string path = dir.path() + "/s.yaml";
  std::ofstream(path) << "name: t\ndescription: d\njob: {command: /bin/true}\n"
                         "checks: {no_hang: {stall: 2s}}\n";
  ParseResult r = load_scenario(path, ParseContext{});
  ASSERT_TRUE(r.ok()) << (diagnostics_of(r).empty() ? "" : diagnostics_of(r)[0].to_string());
  EXPECT_EQ(r->checks.size(), known_checks().size());
  EXPECT_EQ(check_params<NoHangParams>(*r).stall, 2 * kSecond);
}

TEST(ScenarioLoad, MissingFileIsADiagnostic) {
  ParseResult r = load_scenario("/nonexistent/s.yaml", ParseContext{});
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(diagnostics_of(r).size(), 1u);
  EXPECT_EQ(diagnostics_of(r)[0].to_string(),
            "/nonexistent/s.yaml: cannot read: No such file or directory");
}

TEST(ScenarioLoad, BadCheckParamNamesLine) {
  ParseContext ctx;
  ctx.file = "s.yaml";
  ctx.check_command = false;
  ParseResult r = parse_scenario(
      "name: t\ndescription: d\njob: {command: x}\nchecks:\n  job_exit: {code: 300}\n", ctx);
  ASSERT_EQ(diagnostics_of(r).size(), 1u);
  EXPECT_EQ(diagnostics_of(r)[0].to_string(),
            "s.yaml:5:20: checks.job_exit.code: exit code 300 is out of range 0..255");
}

}  // namespace
}  // namespace aftermath
