// The one writer of the report files: every file from the same result, each
// named once, the failures each named.
#include "reports/write_reports.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "reports/html.h"
#include "reports/json.h"
#include "reports/junit.h"
#include "reports/summary.h"
#include "reports/trace.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/writer_fixture.h"

namespace aftermath {
namespace {

namespace fs = std::filesystem;
using testing_writers::sample_run;

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(WriteReports, TheFiveFilesEachRenderedFromTheResult) {
  testing::TempDir dir{"aftermath-reports"};
  const nlohmann::json result = to_json(sample_run());
  auto written = write_reports(sample_run(), dir.path());
  ASSERT_TRUE(written) << written.error().what;
  ASSERT_EQ(written->size(), 5u);
  for (size_t i = 0; i < kReportFiles.size(); ++i) EXPECT_EQ((*written)[i], dir / kReportFiles[i]);
  EXPECT_EQ(nlohmann::json::parse(slurp(dir / "result.json")), result);
  EXPECT_EQ(slurp(dir / "junit.xml"), render_junit(sample_run()));
  EXPECT_EQ(slurp(dir / "report.html"), render_html(sample_run(), dir.path()));
  EXPECT_EQ(nlohmann::json::parse(slurp(dir / "trace.json")), render_trace(sample_run()));
  EXPECT_EQ(slurp(dir / "summary.md"), render_summary_md(sample_run()));
}

TEST(WriteReports, RenderingAgainLeavesResultJsonAlone) {
  testing::TempDir dir{"aftermath-reports"};
  dir.write("result.json", "as the run wrote it");
  auto written = write_reports(sample_run(), dir.path(), false);
  ASSERT_TRUE(written) << written.error().what;
  EXPECT_EQ(written->size(), 4u);
  EXPECT_EQ(slurp(dir / "result.json"), "as the run wrote it");
  EXPECT_TRUE(fs::exists(dir / "summary.md"));
}

TEST(WriteReports, EveryFileThatCannotBeWrittenIsNamedAndTheRestAreStillTried) {
  testing::TempDir dir{"aftermath-reports"};
  // A folder where a file should go: that one file cannot be written.
  fs::create_directory(dir / "report.html");
  auto written = write_reports(sample_run(), dir.path());
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error().what, "cannot write " + (dir / "report.html"));
  EXPECT_TRUE(fs::exists(dir / "trace.json"));
  EXPECT_TRUE(fs::exists(dir / "summary.md"));

  auto nowhere = write_reports(sample_run(), dir / "absent");
  ASSERT_FALSE(nowhere);
  EXPECT_NE(nowhere.error().what.find(dir / "absent/result.json"), std::string::npos);
  EXPECT_NE(nowhere.error().what.find(dir / "absent/summary.md"), std::string::npos);
}

}  // namespace
}  // namespace aftermath
