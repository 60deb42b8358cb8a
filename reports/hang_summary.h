// summary.md's "Hang diagnosis" block: where each live process of a hung job
// was stuck, in a few lines a CI job summary can hold (hang_view.h). The full
// stacks stay in report.html and result.json; the block says so.
#pragma once

#include <string>

#include "harness/core/result.h"

namespace aftermath {

// The block for a scenario of result.json, or "" when it has no diagnosis
// (report::hang_diagnosis). It opens with a blank line, so it can follow a
// list; then a line with the process count and how long the diagnosis took,
// the table
//   | role | pid | state | waiting in | where |
// (at most 8 rows; "where" is the innermost Python frame and, when that is
// not the user's own code, the innermost frame that is), the diagnosis note
// when there is one, and where to find the full stacks. Cells go through
// md_cell.
std::string hang_summary_md(const ScenarioResult& scenario);

}  // namespace aftermath
