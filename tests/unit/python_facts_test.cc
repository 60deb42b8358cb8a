#include "harness/core/python_facts.h"

#include <gtest/gtest.h>

namespace aftermath {
namespace {

TorchVersion v(const char* text) { return parse_torch_version(text).value(); }

TEST(TorchVersion, ParsesWhatTorchPrints) {
  EXPECT_EQ(v("2.13.0+cpu"), (TorchVersion{2, 13, 0, {}}));
  EXPECT_EQ(v("2.13.0+cpu").text, "2.13.0+cpu");
  EXPECT_EQ(v("1.13.0a0"), (TorchVersion{1, 13, 0, {}}));
  EXPECT_EQ(v("2.6.0a0+git1234"), (TorchVersion{2, 6, 0, {}}));
  EXPECT_EQ(v("2.11"), (TorchVersion{2, 11, 0, {}}));
  EXPECT_FALSE(parse_torch_version("two"));
  EXPECT_FALSE(parse_torch_version("2"));
  EXPECT_FALSE(parse_torch_version(""));
  EXPECT_TRUE(v("1.13.1") < v("2.0.0"));
  EXPECT_TRUE(v("2.9.1") < v("2.10.0"));  // numbers, not text
}

TEST(TorchRange, ComparisonsJoinedByCommas) {
  auto r = [](const char* t) { return TorchRange::parse(t).value(); };
  EXPECT_TRUE(r("<2.0").contains(v("1.13.1")));
  EXPECT_FALSE(r("<2.0").contains(v("2.0.0")));
  EXPECT_TRUE(r(">=2.2,<2.6").contains(v("2.5.1")));
  EXPECT_FALSE(r(">=2.2,<2.6").contains(v("2.6.0")));
  EXPECT_FALSE(r(">=2.2, <2.6").contains(v("2.1.2")));
  // Two numbers name a whole minor release.
  EXPECT_TRUE(r("1.13").contains(v("1.13.1")));
  EXPECT_TRUE(r("==2.13").contains(v("2.13.0+cpu")));
  EXPECT_FALSE(r("1.13").contains(v("1.12.1")));
  EXPECT_FALSE(r(">2.2").contains(v("2.2.2")));
  EXPECT_TRUE(r(">2.2").contains(v("2.3.0")));
  EXPECT_TRUE(r("<=2.2").contains(v("2.2.9")));
  // Three numbers: that release.
  EXPECT_TRUE(r("2.13.0").contains(v("2.13.0+cpu")));
  EXPECT_FALSE(r("2.13.0").contains(v("2.13.1")));
  EXPECT_TRUE(r("!=2.13.0").contains(v("2.13.1")));
  EXPECT_EQ(r(" >=2.4 ").text(), ">=2.4");
}

TEST(TorchRange, RefusesWhatIsNoRange) {
  for (const char* bad : {"", ">=", ">=2.x", "2", "=>2.0", "2.1.", "2.1.0.1", ">=2.0,", "latest"}) {
    auto r = TorchRange::parse(bad);
    EXPECT_FALSE(r) << bad;
  }
  EXPECT_EQ(TorchRange::parse(">=2.x").error().what,
            "'>=2.x': '2.x' is not a version (MAJOR.MINOR or MAJOR.MINOR.PATCH)");
}

// What no Python attribute says, by release: the rows of the table.
TEST(TorchBehaviour, FollowsTheReleasesThatChangedIt) {
  EXPECT_FALSE(torch_behaviour(v("1.13.1")).torchrun_signals_sessions);
  EXPECT_FALSE(torch_behaviour(v("2.1.2")).torchrun_signals_sessions);
  EXPECT_TRUE(torch_behaviour(v("2.2.0")).torchrun_signals_sessions);  // PR #113231
  EXPECT_EQ(torch_behaviour(v("2.3.1")).torchrun_monitor_interval, 5 * kSecond);
  EXPECT_EQ(torch_behaviour(v("2.4.0")).torchrun_monitor_interval, 100 * kMilli);  // PR #124692
  EXPECT_EQ(torch_behaviour(v("2.13.0")).shm_manager_linger, 2000 * kMilli);
}

TEST(PythonFacts, DefaultsAreTheMostPatientRelease) {
  PythonFacts d = default_python_facts();
  EXPECT_EQ(d.torchrun_monitor_interval, 5 * kSecond);
  EXPECT_EQ(d.loader_status_interval, 5 * kSecond);
  EXPECT_EQ(d.source, "default");
  EXPECT_EQ(d.label(), "python unknown");
  EXPECT_EQ(helper_grace(d), 5 * kSecond);
  EXPECT_EQ(settle_quiet(d), 6 * kSecond);
  PythonFacts f = d;
  f.loader_status_interval = 10 * kSecond;
  f.shm_manager_linger = 4 * kSecond;
  EXPECT_EQ(settle_quiet(f), 11 * kSecond);
  EXPECT_EQ(helper_grace(f), 7 * kSecond);
  f.torch = v("2.13.0+cpu");
  EXPECT_EQ(f.label(), "torch 2.13.0+cpu");
  f.torch.reset();
  f.python = "3.11.7";
  EXPECT_EQ(f.label(), "no torch (python 3.11.7)");
}

}  // namespace
}  // namespace aftermath
