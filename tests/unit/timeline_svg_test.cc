// Tests for a scenario's whole timeline SVG (reports/timeline_svg.h); the
// page around it is tested in html_test.cc.
#include "reports/timeline_svg.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/lanes_fixture.h"

namespace aftermath::svg {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(TimelineSvg, FramesLanesCurvesAndLinesUnderOneClip) {
  json sc = {{"timings_ms", {{"total_ms", 1000}}},
             {"processes", json::array({{{"pid", 10}, {"role", "rank"}, {"started_ms", 0}}})},
             {"timeline", json::array({{{"kind", "phase"}, {"t_ms", 100}, {"name", "teardown"}},
                                       {{"kind", "sample"}, {"t_ms", 0}, {"procs", 1}}})}};
  std::string out = timeline_svg(testing_reports::typed_scenario(sc), "s0-x", "");
  EXPECT_EQ(out.rfind("<svg class=\"timeline\" id=\"tl-s0-x\"", 0), 0u);
  EXPECT_THAT(out, HasSubstr("data-end=\"1000\""));
  EXPECT_THAT(out, HasSubstr("<clipPath id=\"clip-s0-x\">"));
  EXPECT_THAT(out, HasSubstr("class=\"lane\" data-pid=\"10\""));
  EXPECT_THAT(out, HasSubstr("curve procs"));
  EXPECT_THAT(out, HasSubstr("<g class=\"phase\" data-t=\"100\""));
  EXPECT_THAT(out, HasSubstr(">200 ms</text>"));  // an axis tick
  EXPECT_EQ(out.substr(out.size() - 6), "</svg>");
}

}  // namespace
}  // namespace aftermath::svg
