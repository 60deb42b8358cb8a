// The one place that writes a run's report files: result.json (the source of
// truth) and junit.xml, report.html, trace.json and summary.md, each rendered
// from it. `aftermath run`, `pytest`, `report` and `merge` all write through
// here, so the files agree byte for byte whichever command wrote them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/os/expected.h"

namespace aftermath {

// The report files, in the order they are written.
extern const std::vector<std::string> kReportFiles;  // result.json first

// Writes the report files for `result` into the folder `dir` (which exists):
// result.json too when `with_result` (not for `aftermath report`, which
// renders from it). Every file is tried even when one fails; the paths
// written, or an Error naming each file that could not be written.
Expected<std::vector<std::string>> write_reports(const nlohmann::json& result,
                                                 const std::string& dir, bool with_result = true);

}  // namespace aftermath
