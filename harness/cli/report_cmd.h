// `aftermath report` and `aftermath diff`: the human-facing reports rendered
// again from a result.json, e.g. one downloaded from CI.
#pragma once

#include <string>

namespace aftermath {

// Reads result.json at `result_path` and writes junit.xml, report.html,
// trace.json and summary.md into `out_dir` (created if missing), one line per
// file on stdout: the files `aftermath run` wrote beside it, rendered the same
// way.
// Returns 0 on success, 2 when the input cannot be read or parsed, 1 when an
// output cannot be written. Every error names the file.
int cmd_report(const std::string& result_path, const std::string& out_dir);

// Prints the comparison of two result.json files (a = baseline, b = new).
// Returns 0 when every verdict and check status is the same, 1 when any
// differs (or a scenario is in only one run), 2 when either file cannot be
// read or parsed.
int cmd_diff(const std::string& a_path, const std::string& b_path);

}  // namespace aftermath
