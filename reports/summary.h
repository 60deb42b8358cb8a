// summary.md: a compact Markdown digest of a run for CI job summaries
// (GitHub's $GITHUB_STEP_SUMMARY, GitLab's markdown artifacts). One table
// row per scenario, then details for each scenario whose verdict is not
// pass or xfail, and a hang diagnosis block (hang_summary.h) for each
// scenario that has one. Rendered from the typed run (a result.json read
// back by reports/result_read.h renders the same); it shows verdicts, never
// decides them.
#pragma once

#include <string>
#include <string_view>

#include "harness/core/result.h"

namespace aftermath {

// The heading, the table
//   | scenario | verdict | failed checks | job | all gone | shm baseline |
// (one row per run with --repeat, "name run 2/5"), with --repeat the
// "Repeated runs" table (runs, verdicts, rate with its interval, all-gone
// spread) and a line per flaky scenario naming its outcomes, and, for each
// fail/xpass/error run, its failed checks with reasons and its hang
// diagnosis; then a section with the hang diagnosis of each pass/xfail run
// that has one (an expected hang, reproduced).
std::string render_summary_md(const RunResult& run);

// Makes text safe for one Markdown table cell: '|' becomes "\|", newlines
// and other control characters become spaces, < > & become entities (so a
// command line cannot open an HTML tag in the rendered summary), and * ` [ ]
// and backslash are backslash-escaped.
std::string md_cell(std::string_view text);

}  // namespace aftermath
