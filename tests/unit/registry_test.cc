// The check registry: names, defaults, and each check's parameters parsed
// once into their typed form, with bad values located at file:line:field.
#include "harness/check/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "harness/check/check_params.h"
#include "harness/check/scenario_load.h"

namespace aftermath {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// `--check` text through the registry; the diagnostics' strings.
std::vector<std::string> parse(const std::string& text,
                               std::map<std::string, CheckConfig>* checks) {
  auto parsed = parse_checks_text(text, "--check 1", checks);
  std::vector<std::string> out;
  if (!parsed) {
    for (const auto& d : parsed.error()) out.push_back(d.to_string());
    EXPECT_FALSE(out.empty());
  }
  return out;
}

TEST(CheckRegistry, NamesAndDefaultsInReportOrder) {
  EXPECT_EQ(known_checks().size(), 15u);
  EXPECT_EQ(known_checks().front(), "all_exited");
  for (const auto& d : default_checks())
    EXPECT_NE(std::find(known_checks().begin(), known_checks().end(), d), known_checks().end())
        << d;
  for (const char* opt_in :
       {"data_partition", "collectives_matched", "memory_growth", "died_with_agent"})
    EXPECT_EQ(std::find(default_checks().begin(), default_checks().end(), opt_in),
              default_checks().end());
  EXPECT_THAT(check_registry().multinode_defaults(), ::testing::ElementsAre("died_with_agent"));
  // Every check takes a grace, listed first in its accepted keys.
  for (const auto& name : known_checks())
    EXPECT_EQ(check_registry().keys(name).front(), "grace") << name;
}

TEST(CheckRegistry, MemoryGrowthParamsAreTyped) {
  std::map<std::string, CheckConfig> checks;
  EXPECT_THAT(parse("memory_growth: {max_kb_per_step: 128, field: rss_kb, skip_steps: 2, "
                    "min_points: 5, role: worker}",
                    &checks),
              ElementsAre());
  const auto& p = check_params<MemoryGrowthParams>(checks.at("memory_growth"));
  EXPECT_EQ(p.max_kb_per_step, 128);
  EXPECT_EQ(p.field, "rss_kb");
  EXPECT_EQ(p.skip_steps, 2);
  EXPECT_EQ(p.min_points, 5);
  EXPECT_EQ(p.role, Role::Worker);
  // No params: the defaults.
  CheckConfig none;
  EXPECT_EQ(check_params<MemoryGrowthParams>(none).max_kb_per_step, 256);
  EXPECT_EQ(check_params<MemoryGrowthParams>(none).field, "pss_kb");
}

TEST(CheckRegistry, BadParamsNameFileLineField) {
  std::map<std::string, CheckConfig> checks;
  EXPECT_THAT(
      parse("memory_growth: {max_kb_per_step: -1}", &checks),
      ElementsAre("--check 1:1:34: memory_growth.max_kb_per_step: must be a positive number"));
  EXPECT_THAT(parse("memory_growth: {min_points: 1}", &checks),
              ElementsAre(HasSubstr("memory_growth.min_points: must be an integer >= 2")));
  EXPECT_THAT(
      parse("memory_growth: {role: wizard}", &checks),
      ElementsAre(HasSubstr("memory_growth.role: must be launcher, rank, worker or helper")));
  EXPECT_THAT(parse("memory_growth: {field: 12}", &checks),
              ElementsAre(HasSubstr("memory_growth.field: must be an event field name")));
  EXPECT_THAT(parse("memory_growth: {slope: 3}", &checks),
              ElementsAre(HasSubstr("memory_growth.slope: unknown key 'slope' (accepted: grace, "
                                    "max_kb_per_step, field, skip_steps, min_points, role)")));
  EXPECT_THAT(
      parse("device_memory_released: {tolerance: lots}", &checks),
      ElementsAre(HasSubstr("device_memory_released.tolerance: expected a size like 64MiB")));
  EXPECT_THAT(parse("no_hang: {stall: 3}", &checks),
              ElementsAre("--check 1:1:18: no_hang.stall: bare number '3' needs a unit, e.g. 5s"));
  EXPECT_THAT(parse("bogus: true", &checks), ElementsAre(HasSubstr("unknown check 'bogus'")));
  // Nothing was merged from the bad texts.
  EXPECT_FALSE(checks.count("memory_growth"));
}

TEST(CheckRegistry, LaterTextMergesOverEarlier) {
  std::map<std::string, CheckConfig> checks;
  ASSERT_THAT(parse("job_exit: {code: 3}", &checks), ElementsAre());
  ASSERT_THAT(parse("job_exit: {output_regex: done}", &checks), ElementsAre());
  const auto& je = check_params<JobExitParams>(checks.at("job_exit"));
  EXPECT_EQ(je.code, 3);
  EXPECT_EQ(je.output_regex, "done");
  ASSERT_THAT(parse("no_hang: {stall: 4s}\nno_zombies: {launcher_poll: 2s}", &checks),
              ElementsAre());
  EXPECT_EQ(check_params<NoHangParams>(checks.at("no_hang")).stall, 4 * kSecond);
  EXPECT_EQ(check_params<NoZombiesParams>(checks.at("no_zombies")).launcher_poll, 2 * kSecond);
  // A diagnosis budget on top keeps the stall window.
  ASSERT_THAT(parse("no_hang: {diagnose: 90s}", &checks), ElementsAre());
  EXPECT_EQ(check_params<NoHangParams>(checks.at("no_hang")).stall, 4 * kSecond);
  EXPECT_EQ(check_params<NoHangParams>(checks.at("no_hang")).diagnose, 90 * kSecond);
}

TEST(CheckRegistry, DeviceParamsReachTheSupervisorsAccessor) {
  Scenario sc;
  EXPECT_EQ(check_params<DeviceMemoryParams>(sc).tolerance_bytes, 64ll << 20);
  ASSERT_THAT(parse("device_memory_released: {tolerance: 1GiB, deadline: 3s}", &sc.checks),
              ElementsAre());
  EXPECT_EQ(check_params<DeviceMemoryParams>(sc).tolerance_bytes, 1ll << 30);
  EXPECT_EQ(check_params<DeviceMemoryParams>(sc).deadline, 3 * kSecond);
  mutable_check_params<DeviceMemoryParams>(sc).deadline = 5 * kSecond;
  EXPECT_EQ(check_params<DeviceMemoryParams>(sc).deadline, 5 * kSecond);
}

}  // namespace
}  // namespace aftermath
