#include "reports/write_reports.h"

#include <fstream>

#include "reports/html.h"
#include "reports/json.h"
#include "reports/junit.h"
#include "reports/summary.h"
#include "reports/trace.h"

namespace aftermath {

const std::vector<std::string> kReportFiles = {"result.json", "junit.xml", "report.html",
                                               "trace.json", "summary.md"};

namespace {

// Replace, not throw: captured output and command lines are arbitrary bytes,
// and losing a whole report over one bad byte would be far worse.
std::string dump(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string render(const std::string& file, const RunResult& run, const nlohmann::json& result,
                   const std::string& dir) {
  if (file == "result.json") return dump(result, 2);
  if (file == "junit.xml") return render_junit(run);
  if (file == "report.html") return render_html(run, dir);
  if (file == "trace.json") return dump(render_trace(run), -1);
  return render_summary_md(run);
}

}  // namespace

Expected<std::vector<std::string>> write_reports(const RunResult& run, const std::string& dir,
                                                 bool with_result) {
  const nlohmann::json result = to_json(run);
  std::vector<std::string> written;
  std::string failed;
  for (const auto& file : kReportFiles) {
    if (file == "result.json" && !with_result) continue;
    const std::string path = dir + "/" + file;
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << render(file, run, result, dir);
    f.close();
    if (f)
      written.push_back(path);
    else
      failed += (failed.empty() ? "" : ", ") + path;
  }
  if (!failed.empty()) return Error{"cannot write " + failed};
  return written;
}

}  // namespace aftermath
