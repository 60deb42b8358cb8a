// The one place that writes a run's report files: result.json (the source of
// truth) and junit.xml, report.html, trace.json and summary.md, each rendered
// from it. `aftermath run`, `pytest`, `report` and `merge` all write through
// here, so the files agree byte for byte whichever command wrote them.
#pragma once

#include <string>
#include <vector>

#include "harness/core/result.h"
#include "harness/os/expected.h"

namespace aftermath {

// The report files, in the order they are written.
extern const std::vector<std::string> kReportFiles;  // result.json first

// Writes the report files for `run` into the folder `dir` (which exists):
// result.json too when `with_result` (not for `aftermath report`, which
// renders from it). A run read back from a result.json (read_result) renders
// as the run that wrote it did. Every file is tried even when one fails; the
// paths written, or an Error naming each file that could not be written.
Expected<std::vector<std::string>> write_reports(const RunResult& run, const std::string& dir,
                                                 bool with_result = true);

}  // namespace aftermath
