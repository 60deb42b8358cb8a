// `aftermath report`, `aftermath merge` and `aftermath diff`: the reports
// rendered again from result.json files, e.g. ones downloaded from CI.
#pragma once

#include <string>
#include <vector>

namespace aftermath {

// Reads result.json at `result_path` and writes junit.xml, report.html,
// trace.json and summary.md into `out_dir` (created if missing), one line per
// file on stdout: the files `aftermath run` wrote beside it, rendered the same
// way.
// Returns 0 on success, 2 when the input cannot be read or parsed, 1 when an
// output cannot be written. Every error names the file.
int cmd_report(const std::string& result_path, const std::string& out_dir);

// `aftermath merge --out OUT INPUT...`: the runs of INPUTs (folders holding a
// result.json, or result.json files), typically the shards of `run --shard
// I/N`, as one run (reports/merge_runs.h): writes result.json, junit.xml,
// report.html, trace.json and summary.md into `out_dir` (created), one line
// per file on stdout, then the counts and the "reports: ..." line. Logs are
// not copied: the merged result.json points at the inputs' folders.
// `command_line`: the merge's own, recorded as the run's.
// Returns 2 for bad input (missing, unreadable, not JSON, not a result.json,
// the same scenario run in two inputs, OUT holding an input), each named on
// stderr, and then writes nothing; 1 when the inputs are shards of one run
// that leave positions missing or covered twice (said on stderr; the reports
// are still written), when any verdict is fail, xpass or error, or when a
// report cannot be written; else 0.
int cmd_merge(const std::vector<std::string>& inputs, const std::string& out_dir,
              const std::string& command_line);

// Prints the comparison of two result.json files (a = baseline, b = new).
// Returns 0 when every verdict and check status is the same, 1 when any
// differs (or a scenario is in only one run), 2 when either file cannot be
// read or parsed.
int cmd_diff(const std::string& a_path, const std::string& b_path);

}  // namespace aftermath
