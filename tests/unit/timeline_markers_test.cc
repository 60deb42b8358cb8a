// Tests for the timeline's marks (reports/timeline_markers.h).
#include "reports/timeline_markers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace aftermath::svg {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(TimelineMarkers, AtTimeCarriesTheTimeForTheScriptsZoom) {
  Scale s{1000};
  EXPECT_EQ(at_time(s, 500, "exit"),
            "<g class=\"exit\" data-t=\"500\" transform=\"translate(715,0)\">");
}

TEST(TimelineMarkers, ABarIsAtLeastOnePixelWide) {
  Scale s{1000};
  std::string b = bar(s, 100, 100.001, 5, 9, "life", "");
  EXPECT_THAT(b, HasSubstr("width=\"1\""));
  EXPECT_THAT(b, HasSubstr("data-t0=\"100\" data-t1=\"100.001\""));
  EXPECT_THAT(b, Not(HasSubstr("<title>")));
  EXPECT_THAT(bar(s, 0, 1000, 5, 9, "orphan", "a<b"), HasSubstr("<title>a&lt;b</title>"));
}

TEST(TimelineMarkers, LabelsFlipLeftNearTheRightEdge) {
  Scale s{1000};
  EXPECT_THAT(marker_label(s, 100, 13, "x"), HasSubstr("text-anchor=\"start\""));
  EXPECT_THAT(marker_label(s, 990, 13, "x"), HasSubstr("text-anchor=\"end\""));
}

TEST(TimelineMarkers, SignalsAreClassedByNameAndSaySender) {
  Scale s{1000};
  SignalMark term{10, 42, "SIGTERM", "", "teardown"};
  std::string m = signal_marker(s, term, 0);
  EXPECT_THAT(m, HasSubstr("class=\"sig sig-term\""));
  EXPECT_THAT(m, HasSubstr("<title>SIGTERM sent to 42 at 10.0 ms (teardown)</title>"));
  SignalMark kill{10, 42, "SIGKILL", "the kernel", ""};
  EXPECT_THAT(signal_marker(s, kill, 0), HasSubstr("class=\"sig sig-kill\""));
  EXPECT_THAT(signal_marker(s, kill, 0), HasSubstr("SIGKILL from the kernel to 42"));
  SignalMark other{10, 42, "SIGUSR1", "", ""};
  EXPECT_THAT(signal_marker(s, other, 0), HasSubstr("class=\"sig sig-other\""));
  EXPECT_THAT(signal_marker(s, other, 0), HasSubstr("SIGUSR1 sent"));
}

TEST(TimelineMarkers, AFaultIsADiamondWithItsTitleEscaped) {
  Scale s{1000};
  std::string f = fault_marker(s, 0, "fault kill: <rank 1>", 4);
  EXPECT_THAT(f, HasSubstr("class=\"fault\""));
  EXPECT_THAT(f, HasSubstr("<path d=\"M0,4 L5,9 L0,14 L-5,9 Z\"/>"));
  EXPECT_THAT(f, HasSubstr("fault kill: &lt;rank 1&gt;"));
}

}  // namespace
}  // namespace aftermath::svg
